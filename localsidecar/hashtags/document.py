"""A document as the hashtag rules read it (no model): its tokens and word counts, its
name runs, where its headline and first paragraph are, and what meeting notes add (the
people they list, their initials and handles, the site they link to most). Rules switches
each ranking rule on or off (the lab measures one at a time); mentions.py collects the
candidates' mentions from a Document.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import cached_property

from localsidecar.hashtags.meeting import meeting_handles, own_sites, unmarked
from localsidecar.hashtags.metrics import stem
from localsidecar.hashtags.names import MAX_NAME_WORDS, MAX_WORD_CHARS, NameRun, name_runs
from localsidecar.hashtags.wordclass import BROAD_MODIFIER_ZIPF, plural, verb_only
from localsidecar.hashtags.words import (
    CALENDAR,
    COUNTRY_ALIASES,
    DEMONYMS,
    FUNCTION_WORDS,
    GENERIC,
    LIST_HEADS,
    NUMBER_WORDS,
    PARTICLES,
    TITLES,
    UNITS,
    Token,
    given_name_shaped,
    parts_of_speech,
    specificity,
    surname_shaped,
    tokenize,
    zipf,
)
from localsidecar.summary.blocks import DATELINE, LABELS, front_matter_end
from localsidecar.summary.candidates import FRONT_TITLE
from localsidecar.summary.people import listed_initials, listed_names

_LABEL = re.compile(r"^([A-Za-z][A-Za-z' -]{0,30}?)\s*:\s")  # "Attendees: ...", "Date: ..."
TITLE_LABELS = frozenset({"minutes", "re"})  # "Minutes: Greenfield Community Garden committee": a title

# a name said with a lowercase word this share of its mentions or more (_with_lowercase_part)
MOSTLY_WITH = 0.5
LABEL_LINES, LABEL_SHARE = 3, 0.75  # a word opening this many lines before ':' labels them (line_labels)
HEADLINE = 1.5  # a mention's weight in the headline (Document.bonus)
FIRST_PARAGRAPH = 1.25  # and in the first paragraph
# times, never a tag or a phrase's word: 'profit last year', 'open until 9 pm on weekdays'
TIME_WORDS = frozenset("last next weekday weekdays weekend weekends".split())


def content_word(t: Token) -> bool:
    """A word that can be part of a term or a phrase: no function, calendar, unit, generic,
    number or time word, no name particle, letters only, of a tag word's length."""
    return (
        t.lower not in FUNCTION_WORDS
        and t.lower not in CALENDAR
        and t.lower not in UNITS
        and t.lower not in GENERIC
        and t.lower not in NUMBER_WORDS
        and t.lower not in TIME_WORDS
        and t.lower not in PARTICLES  # 'der' of 'Hylke van der Schaaf'
        and t.text.isalpha()
        and 2 <= len(t.text) <= MAX_WORD_CHARS
    )


@dataclass(frozen=True)
class Rules:
    """Which ranking rules apply (all by default; the lab switches one off at
    a time to measure it, docs/DESIGN.md "Hashtag candidates")."""

    english: bool = True  # specificity from English word frequency (else every word alike)
    position: bool = True  # headline x1.5, first paragraph x1.25
    summary: bool = True  # x1.2 when the summary names it too
    person: bool = True  # x0.5 for a name the text treats as a person (said, a title, a list of attendees)
    phrases: bool = True  # noun phrases ending in a head noun, ranked with the head's mentions
    noun_slot: bool = True  # a single lowercase word only where the document uses it as a noun
    initial: bool = True  # a sentence-initial dictionary word starts no name unless seen so elsewhere
    partitive: bool = True  # no term mostly followed by 'of' ('pieces of', 'pairs of'): a quantity
    initial_word: bool = True  # a sentence-initial word outside a name reads as lowercase ('Battery life')
    counted_verb: bool = True  # a verb form before a number word is a verb ('serves four')
    agent: bool = True  # a one-word name as the subject of a past verb is a person ('Nadia renewed it')
    lone_first_name: bool = True  # one of a meeting's people named by one word is no candidate unless first
    phrase_heads: bool = True  # a repeated phrase holding most of its head's mentions takes the head's place
    headline_verb: bool = True  # a term found once, in the headline, that can be a verb is a verb ('aids')
    news_generic: bool = True  # a noun of any news story ('talks', 'offer', 'club') ranks lower as a term
    common_cut: bool = True  # a phrase mostly cut after a common word is none; the whole phrase if repeated
    past_verb: bool = True  # a run's last word that is a past verb before 'to', 'by', a number is a verb
    adjective_phrase: bool = True  # an adjective and its noun said twice are a phrase ('nuclear waste')
    name_part: bool = True  # a lowercase word said mostly right after a name is part of it ('Mac mini')
    context_names: bool = True  # 'UK', a title's phrase ('prime minister'), 'sitcom star': lower, no topic
    modifier_topic: bool = True  # a noun said only before other nouns is a term ('doping case')
    its_thing: bool = True  # a name the text calls 'its' is no person by 'said' or a past verb ('Orange')
    headline_name: bool = True  # a name the headline gives is no less specific for a common word ('Orange')
    headline_person: bool = True  # a person the headline names is no less a tag ('Henin-Hardenne')
    initial_prefix: bool = True  # a sentence-initial word starting a run said so mid-sentence stays
    markup: bool = True  # a URL, a Markdown link's target and an HTML tag are no words ('Lobby', 'Br')
    handles: bool = True  # a meeting's @handles and quoted speakers ('_antiochp:_', '[Mukesh]') are no tags,
    # the people it lists by full name are people wherever named ('## Roll', '@Keegan Rimmington')
    own_site: bool = True  # a name of the site the notes link to most is whose notes they are ('Hackeriet')
    front_matter: bool = True  # of YAML or TOML front matter only its title (the headline) and prose are read
    binomials: bool = True  # two nouns joined by 'and', said together, are one phrase ('foot and mouth')
    dateline: bool = True  # a news dateline ('HANOI, Vietnam (AP) —') is where it was filed, not a subject


ALL_RULES = Rules()


@dataclass
class Document:
    """What the candidate rules read of one document, computed once."""

    toks: list[Token]
    stem_count: dict[str, int]  # mentions of each word stem
    of_count: dict[str, int]  # mentions followed by 'of' ('pieces of gold')
    first_para: int
    headline_line: int  # -1: the document has no headline
    list_lines: set[int]  # lines that list a meeting's people ('Present: ...')
    runs: list[NameRun]
    parts_of: dict[str, tuple[str, ...]]  # a hyphenated word's parts
    handles: frozenset[str] = frozenset()  # a meeting's @handles and quoted speakers, lowercased
    people: frozenset[tuple[str, ...]] = frozenset()  # the full names a meeting lists, lowercased words
    initials: frozenset[str] = frozenset()  # theirs, lowercased ('sg' of 'Sylvain Grellet (SG)')
    sites: frozenset[str] = frozenset()  # the names of the sites it links to ('hackeriet' of its wiki's URL)

    @cached_property
    def people_words(self) -> frozenset[str]:
        """The words of the full names it lists, a hyphenated one's parts too ('beshero', 'bondar')."""
        return frozenset(p for name in self.people for w in name for p in (w, *w.split("-")))

    @cached_property
    def said_alone(self) -> frozenset[str]:
        """Last words of its names said as one word or after a title ('Weeks', 'Mr Glazer'):
        surnames, when a longer name ends in them."""
        return frozenset(
            r.words[-1].lower for r in self.runs if len(r.words) == 1 or r.words[0].lower in TITLES
        )

    @cached_property
    def roles(self) -> frozenset[str]:
        """Lowercase nouns it writes right before a person's full name: what it calls
        them ('singer' of 'former Free singer Paul Rodgers', 'guitarist' of 'guitarist
        Brian May'). Such a word says who someone is, not what the story is about."""
        out = set()
        for r in self.runs:
            words = [t.lower for t in r.words]
            person = 2 <= len(words) <= 3 and (
                (given_name_shaped(words[0]) and surname_shaped(words)) or words[-1] in self.said_alone
            )  # a full name, or one whose surname the text also says alone ('Rodgers', 'Mr Glazer')
            if r.start == 0 or not person:
                continue
            before = self.toks[r.start - 1]
            if (
                not before.cap
                and not before.brk
                and before.text.isalpha()
                and before.lower not in FUNCTION_WORDS
                and "NOUN" in parts_of_speech(before.lower)
            ):
                out.add(before.lower)
        return frozenset(out)

    @cached_property
    def line_labels(self) -> frozenset[str]:
        """Words (lowercased) that open LABEL_LINES lines or more before a colon, in
        LABEL_SHARE of their mentions or more: a kind of line ('AI: Hugo to repeat the
        tests'), no topic."""
        toks = self.toks
        opens = Counter(
            t.lower for k, t in enumerate(toks) if t.after == ":" and (k == 0 or toks[k - 1].line != t.line)
        )
        said = Counter(t.lower for t in toks if t.lower in opens)
        return frozenset(w for w, n in opens.items() if n >= LABEL_LINES and n >= LABEL_SHARE * said[w])

    @cached_property
    def unshouted(self) -> frozenset[str]:
        """The words (lowercased) it writes other than in capitals ('Association' of a title's 'ASSOCIATION')."""
        return frozenset(t.lower for t in self.toks if not t.text.isupper())

    def bonus(self, t: Token, rules: Rules) -> float:
        """x1.5 in the headline, x1.25 in the first paragraph."""
        if not rules.position:
            return 1.0
        if t.line == self.headline_line:
            return HEADLINE
        return FIRST_PARAGRAPH if t.para <= self.first_para else 1.0

    def specificity(self, word: str, rules: Rules) -> float:
        """A compound is as specific as its parts; every word alike without rules.english."""
        if not rules.english:
            return 1.0
        ps = self.parts_of.get(word, (word,))
        return sum(map(specificity, ps)) / len(ps)


# front matter values a person writes as prose about the document ('blurb: The APSA Directors
# had their January meeting ...'): read as its first paragraph
_FRONT_PROSE = re.compile(
    r"^(?:description|summary|excerpt|blurb|subtitle|abstract)\s*[:=]\s*['\"]?(.+?)['\"]?\s*$",
    re.IGNORECASE | re.MULTILINE,
)


def front_matter_as_title(document: str) -> str:
    """`document` with its front matter (YAML or TOML) given as its title, the headline,
    and its prose (a description, a blurb) as the first paragraph: its keys and other
    values ('authors', 'layout', a comment's '#  title: "Overrides the tab title"') are
    the site's settings, not the text."""
    end = front_matter_end(document)
    if not end:
        return document
    head = document[:end]
    title = FRONT_TITLE.search(head)
    prose = [m.group(1).strip() for m in _FRONT_PROSE.finditer(head)]
    lead = [title.group(1).strip()] if title else []
    return "".join(p + "\n\n" for p in lead + prose) + document[end:].lstrip("\r\n")


def without_dateline(text: str) -> str:
    """`text` with the dateline of its body's first line (after a headline) blanked, its
    length kept: the place a story was filed from is said once, first, and is no topic."""
    lines = re.finditer(r"[^\n]*\S[^\n]*", text)
    next(lines, None)
    body = next(lines, None)
    m = DATELINE.match(text, body.start()) if body else None
    if m is None or not re.search(r"[a-z]", text[m.end() : m.end() + 40]):
        return text
    return text[: m.start()] + " " * (m.end() - m.start()) + text[m.end() :]


def read_document(document: str, rules: Rules = ALL_RULES) -> Document | None:
    """The document's tokens and counts (None: it has no words)."""
    text = front_matter_as_title(document) if rules.front_matter else document
    text = without_dateline(text) if rules.dateline else text
    toks = tokenize(unmarked(text) if rules.markup else text)
    if not toks:
        return None
    stem_count: dict[str, int] = {}
    of_count: dict[str, int] = {}
    for k, t in enumerate(toks):
        if t.text.isalpha() and t.lower not in FUNCTION_WORDS:  # "willing" is no mention of "will"
            stem_count[stem(t.lower)] = stem_count.get(stem(t.lower), 0) + 1
            if not t.brk and k + 1 < len(toks) and toks[k + 1].lower == "of":
                of_count[stem(t.lower)] = of_count.get(stem(t.lower), 0) + 1
    runs = name_runs(toks, rules.initial, rules.initial_prefix)
    if rules.name_part:
        runs = _with_lowercase_part(toks, runs, stem_count)
    for r in runs:  # 'mini' of 'Mac mini' is said as the name's
        if r.words[-1].text.isalpha() and not r.words[-1].cap:
            key = stem(r.words[-1].lower)
            stem_count[key] -= 1
    return Document(
        toks=toks,
        stem_count=stem_count,
        of_count=of_count,
        first_para=next((t.para for t in toks if t.line > toks[0].line), toks[0].para),
        headline_line=toks[0].line if _headline(text) else -1,
        list_lines={
            t.line
            for k, t in enumerate(toks)
            if t.lower in LIST_HEADS and (k == 0 or toks[k - 1].line != t.line)
        },
        runs=runs,
        parts_of={t.lower: t.parts for t in toks if len(t.parts) > 1},
        handles=meeting_handles(document, toks) if rules.handles else frozenset(),
        people=listed_names(document) if rules.handles else frozenset(),
        initials=listed_initials(document) if rules.handles else frozenset(),
        sites=own_sites(document) if rules.own_site else frozenset(),
    )


def _with_lowercase_part(toks: list[Token], runs: list[NameRun], stem_count: dict[str, int]) -> list[NameRun]:
    """A name and the lowercase word after it said together at least twice,
    the word at most once without the name and the name at most once without the
    word (or, when the first line says them together, in half its mentions), are one
    name ('Mac mini' of "Apple unveils low-cost 'Mac mini'": not
    '#Mac' and '#Mini' apart; not 'Saab factory' beside 'the factory', nor
    'US economy' beside 'America'). The word is no plural, verb, title or
    common word ('Apple computers', 'Google search', 'Norwegian striker'),
    the name no country or demonym."""

    def key(r: NameRun) -> str:
        k = "".join(t.lower for t in r.words)
        return COUNTRY_ALIASES.get(k, k)

    def after(r: NameRun) -> Token | None:
        return toks[r.end + 1] if r.end + 1 < len(toks) and not toks[r.end].brk else None

    said: dict[str, int] = {}
    pairs: dict[tuple[str, str], int] = {}
    titled: set[tuple[str, str]] = set()  # pairs the first line (a headline, a title) says
    for r in runs:
        said[key(r)] = said.get(key(r), 0) + 1
        nxt = after(r)
        if nxt is not None:
            pairs[(key(r), nxt.lower)] = pairs.get((key(r), nxt.lower), 0) + 1
            if nxt.line == toks[0].line:
                titled.add((key(r), nxt.lower))
    out = []
    for r in runs:
        nxt = after(r)
        together = pairs.get((key(r), nxt.lower), 0) if nxt is not None else 0
        if (
            nxt is not None
            and together >= 2
            and together >= stem_count.get(stem(nxt.lower), together) - 1
            and (
                together >= said[key(r)] - 1
                or ((key(r), nxt.lower) in titled and together >= MOSTLY_WITH * said[key(r)])
            )
            and not nxt.cap
            and content_word(nxt)
            and not plural(nxt.lower)
            and not verb_only(nxt.lower)
            and zipf(nxt.lower) < BROAD_MODIFIER_ZIPF
            and len(r.words) < MAX_NAME_WORDS
            and key(r) not in COUNTRY_ALIASES.values()
            and r.words[-1].lower not in DEMONYMS
            and nxt.lower not in TITLES
        ):
            r = NameRun(r.start, r.end + 1, [*r.words, nxt])
        out.append(r)
    return out


def _headline(document: str) -> bool:
    lines = [ln for ln in document.strip().splitlines()]
    if len(lines) < 2:
        return False
    first = lines[0].strip().lstrip("#").strip()
    label = _LABEL.match(first)
    if label and label.group(1).lower() in LABELS - TITLE_LABELS:
        return False  # 'attending: ajeffrey, jdm, paul': a header's line, no headline
    return bool(first) and len(first.split()) <= 20 and first[-1:] not in ".!?"
