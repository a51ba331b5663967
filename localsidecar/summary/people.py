"""The people of a meeting (text only): who the notes list as present or absent and who
they quote ("Gael:", "[Lee]", "_pat:_", "@petbernt"). A topic title (summary.topics) that is
only such a name is no topic: an item "John Lam" holding what was said while John was up
reads, as a title, as John saying it ("John Lam: We also need to keep the model simple",
said by Carol). "Async Hooks" or "Finance" is nobody in the meeting, so it stays a title."""

from __future__ import annotations

import re
from functools import lru_cache

from localsidecar.hashtags.words import PARTICLES
from localsidecar.summary.blocks import HEADING, ITEM, RULE, SETEXT
from localsidecar.summary.topics import SPEAKER

# a line that lists people: "Present: A, B", "**Attendees**:", "## Apologies"
# "1\. Present: ...", "Participants (voting members in bold):"
_PEOPLE_LABEL = re.compile(
    r"^[#*_\s>-]*(?:\d{1,2}\\?[.)]\s*)?((?:[\w'’-]+ ){0,3}(?:present|attendees|attendance|attending|participants|"
    r"apologies|absent|regrets|facilitators?|chair|note ?takers?|scribe|minutes taken by|roll(?: call)?|"
    r"authors?|(?:could not|couldn't|unable to) attend))\b(?: ?\([^()]{0,40}\))?[*_#\s]*(:|$)(.*)$",
    re.IGNORECASE,  # "## Roll ##": closing hashes
)
# a sub-heading of a people heading that goes on listing people ("### Invited" under "## Participants")
_PEOPLE_WORD = re.compile(
    r"\b(attend\w*|invit\w*|members?|guests?|present|absent|regrets|apologies|participants?|observers?|reps)\b",
    re.IGNORECASE,
)
_RUNS_ON = (",", " and", ";")  # a line of a list of people that ends so goes on in the next
_EMPHASIS_SPEAKER = re.compile(r"^[_*]{1,2}([A-Za-z][\w .'’-]{0,30}?)[_*]{0,2}\s*:")  # "_pat:_", "**Pat**:"
_HANDLE = re.compile(r"(?<![\w.])@([A-Za-z0-9][\w-]{1,38})")
LOWER_SPEAKER = re.compile(r"^[a-z][\w.'’-]{1,30}:(?= )")  # "paul: Don't know.": a login, if listed
_NAME_WORD = re.compile(r"\b[A-Z][A-Za-z'’-]+\b")
NAME_WORDS = 3  # a title of more words is no one's name
LIST_LOWER_WORDS = 3  # a line of a list of people with more lowercase words is a sentence, no names


def _name_words(s: str) -> set[str]:
    return {w.lower() for w in _NAME_WORD.findall(s)}


@lru_cache(maxsize=4)  # meeting_people, listed_speakers and given_names read the same text
def _lists_and_labels(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The text of `text`'s lists of people (after "Present:", or the lines under a bare
    "Attendees:") and its opening labels ("Gael:", "_pat:_", "**Pat**:", "paul:")."""
    lists: list[str] = []
    labels: list[str] = []
    listing = listed = False  # under a people label with nothing after its colon: its list
    wrapped = False  # after a label's list that runs on to the next line ("A, B,")
    section = 0  # ... that label a heading ("## Attendees"): its list is the whole section (its level)
    item = -1  # ... that label a list item ("- Attendees"): its list is the items under it (its indent)
    for line in text.splitlines():
        stripped = line.strip()
        label = _PEOPLE_LABEL.match(line)
        heading = HEADING.match(line)
        level = len(stripped) - len(stripped.lstrip("#")) if heading else 0
        bullet = ITEM.match(line)
        # an item no deeper than the item label ("- Roll Call" of an agenda): its next item, no list
        sibling = bullet is not None and len(bullet.group(1)) <= item
        if label and not sibling:
            lists.append(label.group(3))
            listing = not label.group(3).strip(" \t*_#")  # "### **Present:**": its list follows
            listed = False
            wrapped = label.group(3).rstrip().endswith(_RUNS_ON)
            section = level if listing else 0
            item = len(bullet.group(1)) if listing and bullet else -1
            continue
        if wrapped and stripped and not heading and not bullet:
            lists.append(stripped)  # "In Attendance: A, B,\n C and D": a list wrapped over lines
            wrapped = stripped.endswith(_RUNS_ON)
            continue
        wrapped = False
        if (
            (heading and not (section and level > section and _PEOPLE_WORD.search(line)))
            or RULE.match(line)
            or (listed and not stripped and not section)
            or sibling
        ):
            listing, section, item = False, 0, -1  # a list ends at a heading, a rule or a blank line after it
        if listing and not listed and SETEXT.match(line):
            continue  # "Attendees" over "=========": a heading's underline, its list follows
        if listing and stripped:
            lists.append(stripped)
            listed = True
            continue
        content = line[bullet.end() :] if bullet else stripped
        said = SPEAKER.match(content) or _EMPHASIS_SPEAKER.match(content) or LOWER_SPEAKER.match(content)
        if said:
            labels.append(said.group(0).split("(")[0])
    return tuple(lists), tuple(labels)


def meeting_people(text: str) -> frozenset[str]:
    """The words (lowercased) of the names of the people `text` lists or quotes."""
    lists, labels = _lists_and_labels(text)
    words = {m.group(1).lower() for m in _HANDLE.finditer(text)}.union(*map(_name_words, lists))
    speakers = set().union(*map(_name_words, labels))
    # a label word the text also writes in lower case is a topic's ("Finance: ..."), not a name
    lower = set(re.findall(r"\b[a-z][a-z'’-]+\b", text))
    return frozenset(words | (speakers - lower))


# in a list of people: a task box, an aside ("(IBM Research)"), a link's target, markup
_ASIDE = re.compile(
    r"\[[ xX]\]|\([^()]*\)|\]\([^)\s]*\)|\]\[[^\]]*\]|[\[\]*_]"
)  # "][LisaLister]": a reference


# "@Keegan Rimmington": a task handed to someone by full name
_AT_NAME = re.compile(r"(?<![\w.])@([A-Z][^\W\d_]+(?: [A-Z][^\W\d_]+){1,2})\b")
_INITIAL = re.compile(r"[A-Z]\.?")  # "John C." of a roll call


def _full_name(entry: str) -> tuple[str, ...] | None:
    """The words (lowercased) of `entry` when it is a person's name: two or three
    capitalised words ("Lars Bärring", "Philip Cameron-Smith"), the last of them an
    initial allowed ("John C."), particles inside ("Guy de Montfort")."""
    words = entry.replace("- ", " ").split()
    if not 2 <= len([w for w in words if w not in PARTICLES]) <= NAME_WORDS or words[0] in PARTICLES:
        return None
    first, last = words[:-1], words[-1]
    named = all(
        w in PARTICLES or (w[:1].isupper() and any(ch.islower() for ch in w) and re.fullmatch(r"[\w'’-]+", w))
        for w in first
    )
    ends = _INITIAL.fullmatch(last) or (last[:1].isupper() and any(ch.islower() for ch in last))
    return tuple(w.rstrip(".").lower() for w in words) if named and ends else None


@lru_cache(maxsize=4)  # the hashtag rules read it for Document.people and given_names alike
def listed_names(text: str) -> frozenset[tuple[str, ...]]:
    """The full names (lowercased words) of the people `text` lists ("Jory Burson (The
    Linux Foundation)": its aside is no name; "Andy K, Brian W.(remote)" of a roll call)
    or hands a task to by "@" and full name ("@Keegan Rimmington"): the meeting's people,
    whom its notes name, not what they are about."""
    lists, _ = _lists_and_labels(text)
    bare = [_ASIDE.sub(" ", s.replace("\\", "")) for s in lists]  # "Beshero\-Bondar": an escape
    named = [s for s in bare if len(re.findall(r"(?<![\w.])[a-z]+(?![\w.])", s)) <= LIST_LOWER_WORDS]
    # "Ray Thompson. Tim Read", "Committee members: Guy de Montfort": an entry after its label
    entries = (e.split(":")[-1] for s in named for e in re.split(r"[,;\n&]| and |\.\s+(?=[A-Z])", s))
    # "Shuah Khan – Linux Foundation": a dash's right side is an affiliation
    found = {name for e in entries if (name := _full_name(re.split(r"\s[-–—]\s", e)[0]))}
    found |= {tuple(m.group(1).lower().split()) for m in _AT_NAME.finditer(text)}
    return frozenset(found)


# "Sylvain Grellet (SG)", "Elisa Beshero-Bondar (EBB, Chair)"; not "Joshua Abbott (ABB)", a company
_GIVEN_INITIALS = re.compile(
    r"\b([A-Z])[\w'’-]*(?: [\w'’-]+)*? ([A-Z])[\w'’-]*[a-z]\s*\((\1[A-Za-z]{0,2}\2)\b(?![.'’-])"
)


def listed_initials(text: str) -> frozenset[str]:
    """The initials (lowercased) of the people `text` lists by full name: "SG" of
    "Sylvain Grellet (SG)", "GdM" and "GM" of "Guy de Montfort". Minutes write the
    people they list by their initials ("SG agreed to introduce issues #21 and #22.")."""
    lists, _ = _lists_and_labels(text)
    out = {m.group(3).lower() for s in lists for m in _GIVEN_INITIALS.finditer(s.replace("\\", ""))}
    for name in listed_names(text):
        out.add("".join(w[0] for w in name))
        out.add("".join(w[0] for w in name if w not in PARTICLES))
    return frozenset(out)


def given_names(text: str) -> frozenset[str]:
    """The first names (lowercased) of the people `text` lists by full name (listed_names)
    that it never writes in lower case: the notes say "Basil noted ..." of Basil Hess
    (IBM Research). One listed by one word ("Present: Wei, Ana") is the hashtag rules'
    (Rules.lone_first_name)."""
    lower = set(re.findall(r"\b[a-z][a-z'’-]+\b", text))
    return frozenset(name[0] for name in listed_names(text)) - lower


def listed_speakers(text: str) -> frozenset[str]:
    """The words (lowercased) of the opening labels that `text`'s list of people gives too,
    in any case ("ajeffrey: ..." of "attending: ajeffrey, jdm, paul"): people, not topics."""
    lists, labels = _lists_and_labels(text)
    listed = {w.lower() for s in lists for w in re.findall(r"[\w'’-]+", s)}
    return frozenset(w.lower() for s in labels for w in re.findall(r"[\w'’-]+", s) if w.lower() in listed)


# "- [Mukesh] Issues were ..." (not a link's text, not a task box "[x]")
_BRACKET_SPEAKER = re.compile(r"^\[([A-Za-z][\w .'’-]{1,30})\](?![(\[:])")
_CODE = re.compile(r"`[^`\n]*`")  # "`@deprecated: message`": code, no handle
# "_antiochp:_" (italics only: a bold "**Scalafix**:" is a topic's label)
_ITALIC_SPEAKER = re.compile(r"^_([A-Za-z][\w.'’-]{1,30}):?_\s*:?")


# a roll call's vote ("Mark – yes, Glen - no, Chris Schauer – yes"; a roll call has
# ROLL_CALL_VOTES or more) and a question's asker ("Are there any thematic areas? - Mulugeta")
VOTER = re.compile(r"\b([A-Z][a-z]+(?: [A-Z][a-z]+)?),?\s*[-–—]\s*(?i:yes|no|aye|nay|abstain(?:ed)?)\b")
ROLL_CALL_VOTES = 3
ASKER = re.compile(r"\?\s*[-–—]\s*([A-Z][a-z]+(?: [A-Z][a-z]+)?)\.?\s*$")


def handles_and_speakers(text: str) -> frozenset[str]:
    """The words (lowercased) of the @handles `text` writes, of the speakers it quotes in
    italics or brackets ("_antiochp:_", "[Mukesh]"), of a roll call's voters (three votes
    or more on a line) and of who asked a question ("...? - Mulugeta"): people by their
    login or first name, never a topic. Unlike meeting_people, no "Name:" or bold label (a
    topic's too: "**Scalafix**: ...") and no list of people (it gives their companies too)."""
    words: set[str] = {m.group(1).lower() for m in _HANDLE.finditer(_CODE.sub(" ", text))}
    for line in text.splitlines():
        content = line[m.end() :] if (m := ITEM.match(line)) else line.strip()
        said = _ITALIC_SPEAKER.match(content) or _BRACKET_SPEAKER.match(content)
        if said:
            words |= {w.lower() for w in re.findall(r"[\w'’-]+", said.group(1))}
        voters = VOTER.findall(content)
        asker = ASKER.search(content)
        for name in (voters if len(voters) >= ROLL_CALL_VOTES else []) + ([asker.group(1)] if asker else []):
            words |= {w.lower() for w in name.split()}
    return frozenset(words)


def names_only_people(title: str, people: frozenset[str]) -> bool:
    """`title` is nothing but the name of someone in `people` ("John Lam", "Carol")."""
    words = re.findall(r"[\w'’-]+", title)
    return (
        0 < len(words) <= NAME_WORDS
        and all(w[:1].isupper() and not w.isupper() for w in words)
        and all(w.lower() in people for w in words)
    )
