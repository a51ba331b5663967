"""The mentions of a document that hashtag candidates are made of (no model):
its names, noun phrases and nouns, each with where and how often it is said,
and the word rules that decide what may be one (candidates.py ranks them).
The invariants are candidates.py's: names whole, possessives split off, no
bare verb, adjective, number, date or count, no quantity noun.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

from localsidecar.hashtags.meeting import meeting_handles, own_sites, unmarked
from localsidecar.hashtags.metrics import stem
from localsidecar.hashtags.names import (
    MAX_NAME_WORDS,
    MAX_WORD_CHARS,
    NameRun,
    agents,
    is_tag_name,
    name_key,
    name_runs,
    named_numbers,
    strip_titles,
    things,
)
from localsidecar.hashtags.wordclass import (
    BROAD_MODIFIER_ZIPF,
    classifying_adjective,
    common_modifier,
    nounish,
    past_form,
    plural,
    verb_gerund,
    verb_only,
)
from localsidecar.hashtags.words import (
    CALENDAR,
    COUNTRY_ALIASES,
    DEMONYMS,
    DETERMINERS,
    FUNCTION_WORDS,
    GENERIC,
    LIST_HEADS,
    NUMBER_WORDS,
    OBJECT_STARTS,
    PERSON_VERBS,
    SUBJECTS,
    TITLES,
    UNITS,
    Token,
    parts_of_speech,
    specificity,
    tokenize,
    zipf,
)
from localsidecar.summary.blocks import LABELS
from localsidecar.summary.people import PARTICLES, listed_initials, listed_names

_LABEL = re.compile(r"^([A-Za-z][A-Za-z' -]{0,30}?)\s*:\s")  # "Attendees: ...", "Date: ..."
TITLE_LABELS = frozenset({"minutes", "re"})  # "Minutes: Greenfield Community Garden committee": a title

PHRASE_WORDS = 3
# a name said with a lowercase word this share of its mentions or more (_with_lowercase_part)
MOSTLY_WITH = 0.5
HEADLINE = 1.5  # a mention's weight in the headline (Document.bonus)
FIRST_PARAGRAPH = 1.25  # and in the first paragraph
COMMON_ZIPF = 5.6  # words at least this common in English are too generic to be a tag alone
BE_FORMS = frozenset("am is are was were be been being".split())
VERB_BEFORE = frozenset("will would can could may might shall should must to".split())  # a verb follows
CLAUSE_ENDS = frozenset(".,;!?")
CHANGE_FOLLOWERS = frozenset("to by from for in at over after as again sharply".split())
# times, never a tag or a phrase's word: 'profit last year', 'open until 9 pm on weekdays'
TIME_WORDS = frozenset("last next weekday weekdays weekend weekends".split())


Kind = Literal["name", "phrase", "term"]


def _content(t: Token) -> bool:
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


def read_document(document: str, rules: Rules = ALL_RULES) -> Document | None:
    """The document's tokens and counts (None: it has no words)."""
    toks = tokenize(unmarked(document) if rules.markup else document)
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
        headline_line=toks[0].line if _headline(document) else -1,
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


@dataclass
class Mentions:
    """Every mention of one candidate key, as collected: its kind, how often
    and where it occurs, and the spellings it occurs in."""

    first: tuple[str, ...]  # the words of its first mention
    kind: Kind
    count: int = 0
    bonus: float = 1.0  # the best position bonus of a mention
    person: bool = False
    listed: bool = False
    forms: dict[str, int] = field(default_factory=dict)  # spelling -> mentions
    places: dict[str, float] = field(default_factory=dict)  # spelling -> its best position bonus
    cut: int = 0  # mentions of a phrase cut from a longer run at a common word ('public | sector unions')
    # a phrase of a classifying adjective and its noun ('nuclear waste'): a topic if repeated
    adjective: bool = False

    def add(self, ws: Sequence[Token], bonus: float, person: bool = False, listed: bool = False) -> None:
        self.count += 1
        self.person = self.person or person
        self.listed = self.listed or listed
        form = " ".join(t.text for t in ws)
        self.forms[form] = self.forms.get(form, 0) + 1
        self.places[form] = max(self.places.get(form, 1.0), bonus)
        self.bonus = max(self.bonus, bonus)

    @property
    def form(self) -> list[str]:
        """The words of the most frequent spelling; on a tie, for a name the
        one said highest (the headline's 'South Bank Awards' before a later
        'South Bank Award'), then the shortest ('UK' of 'Britain', 'UK')."""
        place = (lambda f: self.places[f]) if self.kind == "name" else (lambda f: 0.0)
        return max(self.forms, key=lambda f: (self.forms[f], place(f), -len(f))).split(" ")


class Found(dict[str, Mentions]):
    """Candidate key ('n:', 't:' or 'p:' + lowercase words) -> its mentions."""

    def add(
        self,
        key: str,
        ws: Sequence[Token],
        kind: Kind,
        bonus: float,
        person: bool = False,
        listed: bool = False,
    ) -> None:
        entry = self.setdefault(key, Mentions(tuple(t.text for t in ws), kind))
        entry.add(ws, bonus, person, listed)


def collect(doc: Document, rules: Rules = ALL_RULES) -> Found:
    """Every name, term and noun phrase of the document with its mentions."""
    found = Found()
    in_name = _collect_names(doc, rules, found)
    _collect_terms(doc, rules, found, in_name)
    return found


def _collect_names(doc: Document, rules: Rules, found: Found) -> set[int]:
    """Add the document's names; returns the token indices inside name runs."""
    toks = doc.toks
    in_name: set[int] = set()
    people = agents(toks, doc.runs) if rules.agent else set()
    named_things = things(toks, doc.runs) if rules.its_thing else set()
    ends = {run.end for run in doc.runs}
    numbers = named_numbers(toks)
    for run in doc.runs:
        i, j = run.start, run.end
        in_name.update(range(i, j + 1))
        name = strip_titles(run.words, numbers)
        if not is_tag_name(name):
            continue
        following = toks[j + 1].lower if j + 1 < len(toks) and not toks[j].brk else ""
        line_start = i == 0 or toks[i - 1].line != run.words[0].line
        # listed: a meeting's people (a line 'Present: ...', 'Name:' at a line start, '(Name)', '(Name, ...')
        listed = (
            (line_start and toks[j].after == ":")
            or run.words[0].line in doc.list_lines
            or tuple(x.lower for x in name) in doc.people  # 'Dmitriy V.' of the roll call, said anywhere
            or (len(name) == 1 and name[0].lower in doc.initials and sum(map(str.isupper, name[0].text)) > 1)
            or all(x.lower in doc.people_words for x in name)  # 'Schaaf' of 'Hylke van der Schaaf'
            or (
                i > 0
                and toks[i - 1].after == "("
                and toks[j].after in (")", ",")
                and (i - 1) not in ends  # 'World Anti-Doping Agency (Wada)': a name's short form
            )
        )
        # 'said' next to one word is no evidence: 'Apple said', 'the ARU said'; nor to 'Mac mini'
        said = (
            len(name) > 1
            and name[-1].cap
            and (following in PERSON_VERBS or (i > 0 and toks[i - 1].lower in PERSON_VERBS))
        )
        # 'said' and a past verb are a company's too: a name the text calls 'its' is none
        weak = (said or (len(name) == 1 and name[0].lower in people)) and name_key(name) not in named_things
        person = listed or (len(run.words) > len(name) and run.words[0].lower in TITLES) or weak
        ws = [x for x in name if x.text != "&"]
        nxt = toks[j + 1] if following else None
        if len(ws) == 1 and nxt is not None and _proper_adjective(ws[0].lower) and _noun_after(nxt):
            # 'Islamic banking': the adjective and its noun are the topic, not 'Islamic'
            found.add("p:" + ws[0].lower + nxt.lower, [ws[0], nxt], "phrase", doc.bonus(ws[0], rules))
            continue
        key = "".join(x.lower for x in ws)
        if key in COUNTRY_ALIASES:  # 'UK', 'Britain': one country, no person ('the United States will')
            key, person = COUNTRY_ALIASES[key], False
        else:
            key = name_key(ws)
        found.add("n:" + key, ws, "name", doc.bonus(ws[0], rules), person, listed)
    return in_name


def _proper_adjective(word: str) -> bool:
    """A capitalised adjective of a religion, a place or an event ('Islamic',
    'Olympic', 'Arctic'): no name alone, the first word of a topic before a noun."""
    return word.endswith("ic") and len(word) > 4 and "NOUN" not in parts_of_speech(word)


def _noun_after(t: Token) -> bool:
    return not t.cap and _content(t) and nounish(t.lower) and not verb_only(t.lower)


def content_runs(doc: Document, rules: Rules, in_name: set[int]) -> Iterator[tuple[int, int, list[Token]]]:
    """(first index, last index, run) of every run of lowercase content words
    outside names, cut back to its head noun (no trailing verb-only word)."""
    toks = doc.toks
    i = 0
    while i < len(toks):
        t = toks[i]
        if i in in_name or not _content(t) or (t.cap and not (rules.initial_word and t.initial)):
            i += 1
            continue
        i0 = j = i
        while not toks[j].brk and j + 1 < len(toks) and _content(toks[j + 1]) and not toks[j + 1].cap:
            j += 1
        run = toks[i0 : j + 1]
        if (
            rules.past_verb
            and len(run) > 1
            and i0 > 0
            and toks[i0 - 1].lower in VERB_BEFORE
            and not toks[i0 - 1].brk
            and "VERB" in parts_of_speech(run[0].lower)
        ):
            run, i0 = (
                run[1:],
                i0 + 1,
            )  # 'could lure users', 'plans to store nuclear waste': a verb and its object
        if (
            len(run) == 2
            and run[0].cap
            and run[1].lower.endswith("s")
            and "VERB" in parts_of_speech(run[1].lower)
        ):
            run = run[:1]  # a sentence's subject and its verb: 'Council votes to close'
        while run and verb_only(run[-1].lower):
            run = run[:-1]
        if rules.past_verb and len(run) > 1 and run[-1] is toks[j] and _past_verb_here(doc, j):
            run = run[:-1]  # 'unemployment rose to 5%': the subject is the phrase, not '#UnemploymentRose'
        i = j + 1
        if run:
            yield i0, j, run


def _past_verb_here(doc: Document, k: int) -> bool:
    """Token k is a verb of change: a past form ('rose', 'fell') followed by
    'to', 'by', a number, an adverb or a clause's end, or ending the headline;
    or an -s form before 'to' or 'by' and a number ('rises to 65')."""
    toks = doc.toks
    if (
        toks[k].lower.endswith("s")
        and "VERB" in parts_of_speech(toks[k].lower)
        and not toks[k].brk
        and k + 2 < len(toks)
        and toks[k + 1].lower in ("to", "by", "from")
        and toks[k + 2].text[:1].isdigit()
    ):
        return True  # 'the pension age rises to 65'
    if not past_form(toks[k].lower):
        return False
    if toks[k].after in CLAUSE_ENDS:
        return True  # 'the claimant count fell.'
    if toks[k].brk or k + 1 >= len(toks):
        return toks[k].line == doc.headline_line and (k + 1 >= len(toks) or toks[k + 1].line != toks[k].line)
    nxt = toks[k + 1]
    return nxt.lower in CHANGE_FOLLOWERS or nxt.text[:1].isdigit() or nxt.lower.endswith("ly")


def _in_noun_slot(doc: Document, rules: Rules, first: int, last: int, run: list[Token]) -> bool:
    """The run's head is used as a noun: after a determiner or preposition, as
    a plural, as a possessive, as the head of several words or a word the
    dictionary knows only as a noun, and not a verb before its object or a
    number ('the server loads one copy', 'profit rose 18%')."""
    toks, head = doc.toks, run[-1]
    prev = toks[first - 1].lower if first > 0 else ""
    is_plural = plural(head.lower) and not (prev in SUBJECTS or (first > 0 and toks[first - 1].cap))
    slot = (
        len(run) > 1
        or prev in DETERMINERS
        or is_plural
        or head.possessive
        or parts_of_speech(head.lower) == {"NOUN"}
    )
    nxt = toks[last + 1] if last + 1 < len(toks) and head is toks[last] and not toks[last].brk else None
    if verb_gerund(head.lower):
        # 'certificates are expiring', 'a speech criticising Tony Blair': a verb
        if prev in BE_FORMS or (nxt is not None and (nxt.cap or nxt.lower in OBJECT_STARTS)):
            return False
    if (
        nxt is not None
        and "VERB" in parts_of_speech(head.lower)
        and (
            nxt.lower in OBJECT_STARTS
            or nxt.text.isdigit()
            or (rules.counted_verb and nxt.lower in NUMBER_WORDS)
        )
    ):
        return False
    return slot


def _collect_terms(doc: Document, rules: Rules, found: Found, in_name: set[int]) -> None:
    """Add the head noun of every run of lowercase content words and the
    2-3-word phrases ending there."""
    for first, last, run in content_runs(doc, rules, in_name):
        head = run[-1]
        if head.line in doc.list_lines:
            continue  # 'Participants (voting members in bold):' says who came, not what about
        if not ((_in_noun_slot(doc, rules, first, last, run) or not rules.noun_slot) and nounish(head.lower)):
            continue
        found.add("t:" + stem(head.lower), [head], "term", doc.bonus(head, rules))
        for n in range(2, min(PHRASE_WORDS, len(run)) + 1 if rules.phrases else 2):
            ws = run[-n:]
            adjective = rules.adjective_phrase and n == 2 and classifying_adjective(ws[0].lower)
            rest = ws[1:] if adjective else ws
            # 'files containing security details': after a plural noun a verb's -ing form is
            # the noun's participle, not the phrase's modifier ('mobile roaming charges' keeps it)
            participle = n < len(run) and verb_gerund(ws[0].lower) and plural(run[-n - 1].lower)
            if (
                not participle
                and all(not verb_only(w.lower) and not w.lower.endswith("ly") for w in rest)
                and not any(plural(w.lower) for w in ws[:-1])
            ):
                key = "p:" + "".join(w.lower for w in ws)
                found.add(key, list(ws), "phrase", doc.bonus(ws[0], rules))
                found[key].adjective = adjective
                if rules.common_cut and n < len(run) and common_modifier(run[-n - 1].lower):
                    found[key].cut += 1


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
            and _content(nxt)
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
