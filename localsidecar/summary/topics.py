"""A notes unit with the context a reader needs (summary.candidates, notes-shaped documents).

A unit of minutes pulled out of its place ("CJ to make a call to vote.", "I'll be able to
pick it up in a few weeks.") does not say which agenda item it is about nor who speaks.
So a notes candidate is shown with

- its topic title, when the unit does not name it: the question its own item asks before
  it, else the innermost item it is nested under that names a topic (that item's
  question, "Should ColumnTransformer enforce the order of the input columns?", else the
  item when it is short and no statement), else the innermost heading that names one; a
  generic label ("Notes", "Agenda", "Action items", "Subteam updates" ...) is no title,
  nor is the document's own title;
- its speaker, when it speaks in the first person ("I", "my") and its item opens with who
  says it ("Gael: I'm a bottleneck here. I'll be able to pick it up ...").

Both are the document's text; the title is joined to what follows by ": " (added, like the
'.' closing an item) unless it ends with a stop of its own ('?', '.', ':').
"""

from __future__ import annotations

import re

from localsidecar.summary.chars import MD_ESCAPE, Chars
from localsidecar.summary.notes import CUE_SECTIONS, GENERIC_HEADINGS, NOTES_TITLE

TITLE_WORDS = 10  # a heading longer than this names no topic
ITEM_TITLE_WORDS = 8  # nor does an item longer than this, unless it asks a question of QUESTION_WORDS
QUESTION_WORDS = 16
# a verb that makes an item a statement rather than the name of a topic
_STATEMENT = re.compile(r"\b(is|are|was|were|has|have|had|will|would|can|could|should|did|does|do)\b", re.I)
# who says an item: "Gael:", "Christian (if time permits):", "[Lee]", "(CJ)"
SPEAKER = re.compile(
    r"^(\[[A-Za-z][^\]]{0,40}\]|\([A-Za-z][\w .&@-]{0,30}\)|"
    r"[A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,2}(?: \([^)]{1,30}\))? ?:)(?= )"
)
FIRST_PERSON = re.compile(
    r"(?<![\w'’])(I|I'm|I’m|I'll|I’ll|I've|I’ve|I'd|I’d|[Mm]e|[Mm]y|[Mm]ine|[Mm]yself)(?![\w'’])"
)
_NUMBERED = re.compile(r"^(\d{1,3}[.)]|\d{1,3}(?= [A-Z])|[A-Za-z][.)])\s+")  # "4. Hydra Connect", "0 Welcome"
# "Spec cut date discussion (Lee, 10m)", "Welcome [ 5 min, until 0:05 ]"
_TRAILING_ASIDE = re.compile(r"\s*(\([^()]*\)|\[[^\[\]]*\d[^\[\]]*\])$")
# a question of an item: from its start, or from a question word ("... #14251 Should
# ColumnTransformer enforce the order of the input columns?"), to its '?'
_ASKS = re.compile(r"(?:[^?.!]|[.!](?!\s))*\?")
_QUESTION_WORD = re.compile(
    r"(?<=\s)(Should|What|How|Why|Which|When|Where|Who|Can|Could|Do|Does|Is|Are|Will|Would)\b"
)
_DATE = re.compile(r"\b(19|20)\d\d\b|\b\d{1,2}(st|nd|rd|th)?\s+[A-Z][a-z]+\s+\d{4}\b")
_CONTENT = re.compile(r"[a-z][a-z0-9'-]{2,}")
_STOP_WORDS = frozenset(
    "the and for with from that this these those what when where which who how are was were "
    "has have had not but all any can could should would will about into onto over under "
    "its our your their them they there here than then also just some more most very".split()
)


def speaker(chars: Chars) -> Chars | None:
    """Who says the item `chars` (its opening label), None when it names nobody."""
    m = SPEAKER.match(chars.s)
    return chars.piece(0, m.end()) if m else None


def speaks_unnamed(unit: str) -> bool:
    """`unit` speaks in the first person and does not open with who speaks."""
    said = SPEAKER.match(unit) or (unit[:1] == "(" and SPEAKER.match(unit[1:]))  # "(Thomas: I am ...)"
    return bool(FIRST_PERSON.search(unit)) and not said


def heading_title(chars: Chars, first: bool) -> Chars | None:
    """The topic a heading names; None for a generic label, the document's title (`first`:
    the document's first heading) or a heading of a date or a meeting."""
    title = chars.sub(MD_ESCAPE, 1)
    title = title.piece(0, len(title.s))
    number = _NUMBERED.match(title.s)  # "4. Hydra Connect"
    if number:
        title = title.piece(number.end(), len(title.s))
    m = _TRAILING_ASIDE.search(title.s)
    if m and m.start() > 0:
        title = title.piece(0, m.start())
    # "1. Election of Chair." titles "Election of Chair: ..." (an ellipsis stays)
    if title.s.endswith(".") and not title.s.endswith(".."):
        title = title.piece(0, len(title.s) - 1)
    s = title.s.rstrip(":")
    if (
        first
        or not re.search(r"[A-Za-z]{2}", s)
        or all(GENERIC_HEADINGS.match(part) for part in re.split(r",\s*|\s+and\s+", s))  # "Q&A, Other"
        or GENERIC_HEADINGS.match(s.split(": ")[0])  # "Agenda: github issues"
        or CUE_SECTIONS.match(s)
        or NOTES_TITLE.search(s)
        or _DATE.search(s)
        or re.search(r"[.!?;]\s", s)  # a sentence and more ("core-js@3. It is really hard ...")
        or re.fullmatch(r"[\w.-]+/[\w.-]+", s)  # a repository ("nodejs/node"): where, not what
        or re.search(r"https?://|www\.", s)
        or len(s.split()) > TITLE_WORDS
    ):
        return None
    return title


def item_title(chars: Chars) -> Chars | None:
    """The topic an item names for the items nested under it: its question ("Andreas:
    What's the status on feature names?" gives the question without who asks it), else the
    item itself when it is a short name of a topic ("CUDA 10.2 migration", "cfep-10
    Feedstock statuses, unmaintained"), not a statement ("Matt Becker has joined the bot
    subteam") nor a label and its text ("Thomas: typing revisited: PR #17799")."""
    label = speaker(chars)
    body = chars.piece(len(label.s), len(chars.s)) if label else chars
    aside = _TRAILING_ASIDE.search(body.s)  # "Confirm kickoff of ... (ehuss Time: 2 minutes)"
    if aside and aside.start() > 0 and not body.s.endswith("?)"):
        body = body.piece(0, aside.start())
    for start in [0, *(m.start() for m in _QUESTION_WORD.finditer(body.s))]:
        q = _ASKS.match(body.s, start)
        if q is None or len(q.group(0).split()) > QUESTION_WORDS:
            continue
        if body.s[q.start()].isupper():
            return body.piece(q.start(), q.end())
        if label and not q.start():  # "Andreas: what's the status on feature names?"
            return chars.piece(0, len(chars.s) - len(body.s) + q.end())
    if (
        not re.match(r"[A-Z0-9]|\S*\d", body.s)  # "CUDA 10.2 migration", "cfep-04 X11 and CDT policy"
        or re.search(r"[.!?:;](\s|$)", body.s)
        or len(body.s.split()) > ITEM_TITLE_WORDS
        or _STATEMENT.search(body.s)
    ):
        return None
    return heading_title(body, first=False)


def _stems(s: str) -> set[str]:
    return {w[:5] for w in _CONTENT.findall(s.lower()) if w not in _STOP_WORDS}


def names_topic(unit: str, title: str) -> bool:
    """`unit` says what `title` is about: it has every content word of the title (by
    their first five letters: "bot" and "subteam" in "the bot subteam", "PRs" for "PR").
    A title of no content word ("GM #1 - 8/31") it cannot name; with half of them ("Goal
    is to have the traits/subtyping code ..." under "Subtyping refactor") a reader would
    take it for the topic of the unit before it."""
    words = _stems(title)
    return bool(words) and words <= _stems(unit)


def _joint(title: Chars) -> str:
    return " " if title.s.endswith(("?", ".", ":", "!")) else ": "


def in_context(unit: Chars, title: Chars | None, who: Chars | None) -> tuple[Chars, int]:
    """`unit` shown with its topic title and its speaker (either may be None), and the
    number of characters before the unit itself."""
    out = unit
    if who is not None:
        out = who.then(out, " ")
    if title is not None:
        out = title.then(out, _joint(title))
    return out, len(out.s) - len(unit.s)
