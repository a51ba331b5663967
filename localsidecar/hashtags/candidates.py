"""The hashtag candidates of a document, ranked by salience (no model).

The grammar of the hashtag phase offers only these: whole names, noun
phrases and salient nouns of the document (never of the summary alone, which
can be wrong). docs/DESIGN.md, Hashtag candidates: gives each rule and its
measured effect. Invariants:

- a name is a maximal run of capitalised words, taken whole or not at all
  (leading titles such as 'Chancellor' aside): 'Gerhard Schroeder', never
  'German Chancellor Gerhard'; a sentence-initial capital counts only for a
  word the dictionary does not know or that is capitalised elsewhere
  mid-sentence;
- a possessive ends a run and is split off ("UK's economy" -> 'UK', 'economy');
- no candidate is a bare verb, pronoun, adjective, number, date or count: a
  single lowercase word must be a noun (the dictionary allows it and the
  document uses it as one: after a determiner or preposition, as a plural, or
  as the last word of a run of content words);
- candidates are distinct by meaning: none holds the word stems of a higher
  ranked one, or is held by them ('WPP' excludes 'WPP Profits');
- no quantity noun ('pieces of gold'), no verb before a number word ('serves
  four'), and no one-word name of a meeting's people unless it ranks first.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from localsidecar.hashtags.metrics import stem
from localsidecar.hashtags.names import MAX_WORD_CHARS, NameRun, agents, is_tag_name, name_runs, strip_titles
from localsidecar.hashtags.words import (
    CALENDAR,
    CONNECTORS,
    DETERMINERS,
    FUNCTION_WORDS,
    GENERIC,
    LIST_HEADS,
    NEWS_GENERIC,
    NUMBER_WORDS,
    OBJECT_STARTS,
    PERSON_VERBS,
    SUBJECTS,
    TITLES,
    UNITS,
    Token,
    cap_first,
    parts_of_speech,
    role_noun,
    specificity,
    tokenize,
    zipf,
)

CANDIDATES = 5  # the grammar's list: the model picks 3 of them
RANKED = 24  # candidates ranked for the offer (a topic below the first CANDIDATES may join it)
TOPIC_FLOOR = 0.3  # a topic joins an offer of names only at this share of the best score
TOPIC_CHOICES = 3  # the offer holds this many topics when the ranking has them: the model chooses one
PASSING_WORDS = 300  # in a document this long, a name said once past its first paragraph is in passing
OFFER_FLOOR = 0.5  # past the third, a candidate is offered only at this share of the best one's score
PHRASE_WORDS = 3
SUMMARY_BONUS = 1.2  # a candidate the summary names too
NEWS_GENERIC_WEIGHT = 0.6  # a term that any news story has ('talks', 'offer', 'club')
COMMON_ZIPF = 5.6  # words at least this common in English are too generic to be a tag alone
BROAD_ZIPF = 5.0  # a word this common names a whole domain ('film', 'race', 'art'): no topic alone,
BROAD_COUNT = 4  # unless the document says it this often ('children' of a vaccine trial)
BE_FORMS = frozenset("am is are was were be been being".split())
GERUND_ZIPF = 4.8  # an -ing form rarer than this in a noun's place is a topic ('roaming', 'drinking')
# a name ending in one of these names an event, a law or a contest: a topic, not a name ('FA Cup')
EVENT_HEADS = frozenset(
    "cup cups championship championships open games olympics festival awards award oscars prize trophy "
    "league series tour final finals summit conference forum election elections act bill inquiry "
    "referendum budget strike war crisis nations grand prix marathon premiership".split()
)


Kind = Literal["name", "phrase", "term"]


@dataclass(frozen=True)
class Candidate:
    text: str  # display form without '#', CamelCase ('RiverTam')
    words: tuple[str, ...]
    kind: Kind
    score: float
    count: int
    person: bool = False
    listed: bool = False  # named as one of a meeting's people (Present: ..., (Name)); person too
    initials: str = ""  # a name of several words: its acronym ('lse' of London Stock Exchange, 'ukip')
    passing: bool = False  # a name said once, outside the headline and first paragraph
    said: int = 0  # times said in these very words (count may add its head's or last word's mentions)
    generic: bool = False  # a term any story has or a role noun ('talks', 'consumer'): no topic

    @property
    def stems(self) -> frozenset[str]:
        return frozenset(stem(w) for w in self.words)

    def same(self, other: Candidate) -> bool:
        """One meaning for tags: one's word stems hold the other's, or one is
        the other's acronym ('LSE', 'London Stock Exchange')."""
        return (
            overlaps(self.stems, other.stems)
            or (len(self.words) == 1 and self.words[0] == other.initials)
            or (len(other.words) == 1 and other.words[0] == self.initials)
        )

    @property
    def topic(self) -> bool:
        """What the story is about rather than who: a term that is no generic
        or role noun, a phrase, or a name of an event, a law or a contest
        ('FA Cup', 'Licensing Act')."""
        return (self.kind != "name" and not self.generic) or self.event

    @property
    def event(self) -> bool:
        """A name of an event, a law or a contest ('FA Cup', 'Licensing Act')."""
        return self.kind == "name" and self.words[-1] in EVENT_HEADS and not self.person

    @property
    def named_topic(self) -> bool:
        """A topic of several words or an event's name ('InterestRates', 'FACup'):
        it says what this story is about where one common word ('Prices') says little."""
        return self.event or (self.kind == "phrase" and self.said >= 2)


def _content(t: Token) -> bool:
    return (
        t.lower not in FUNCTION_WORDS
        and t.lower not in CALENDAR
        and t.lower not in UNITS
        and t.lower not in GENERIC
        and t.lower not in NUMBER_WORDS
        and t.text.isalpha()
        and 2 <= len(t.text) <= MAX_WORD_CHARS
    )


def _nounish(word: str) -> bool:
    pos = parts_of_speech(word)
    if not pos:
        return not word.endswith(("ed", "ly"))
    # a gerund in a noun's place names an activity: 'roaming', 'drinking' (not 'working', 'coming')
    return "NOUN" in pos or "PROPN" in pos or _gerund(word)


def _plural(word: str) -> bool:
    from lemminflect import getAllLemmas

    lemmas = getAllLemmas(word).get("NOUN", ())
    return bool(lemmas) and word.endswith("s") and lemmas[0] != word


def _verb_only(word: str) -> bool:
    pos = parts_of_speech(word)
    return bool(pos) and "NOUN" not in pos and "PROPN" not in pos and not _gerund(word)


def _verb_gerund(word: str) -> bool:
    """A gerund the dictionary knows only as a verb form ('expiring', 'roaming')."""
    return _gerund(word) and "NOUN" not in parts_of_speech(word)


def _gerund(word: str) -> bool:
    """An -ing form rare enough to name an activity ('roaming', 'drinking'; not 'working', 'coming')."""
    return word.endswith("ing") and zipf(word) < GERUND_ZIPF


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

    def bonus(self, t: Token, rules: Rules) -> float:
        """x1.5 in the headline, x1.25 in the first paragraph."""
        if not rules.position:
            return 1.0
        return 1.5 if t.line == self.headline_line else 1.25 if t.para <= self.first_para else 1.0

    def specificity(self, word: str, rules: Rules) -> float:
        """A compound is as specific as its parts; every word alike without rules.english."""
        if not rules.english:
            return 1.0
        ps = self.parts_of.get(word, (word,))
        return sum(map(specificity, ps)) / len(ps)


def read_document(document: str, rules: Rules = ALL_RULES) -> Document | None:
    """The document's tokens and counts (None: it has no words)."""
    toks = tokenize(document)
    if not toks:
        return None
    stem_count: dict[str, int] = {}
    of_count: dict[str, int] = {}
    for k, t in enumerate(toks):
        if t.text.isalpha():
            stem_count[stem(t.lower)] = stem_count.get(stem(t.lower), 0) + 1
            if not t.brk and k + 1 < len(toks) and toks[k + 1].lower == "of":
                of_count[stem(t.lower)] = of_count.get(stem(t.lower), 0) + 1
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
        runs=name_runs(toks, rules.initial),
        parts_of={t.lower: t.parts for t in toks if len(t.parts) > 1},
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

    def add(self, ws: Sequence[Token], bonus: float, person: bool = False, listed: bool = False) -> None:
        self.count += 1
        self.person = self.person or person
        self.listed = self.listed or listed
        form = " ".join(t.text for t in ws)
        self.forms[form] = self.forms.get(form, 0) + 1
        self.bonus = max(self.bonus, bonus)

    @property
    def form(self) -> list[str]:
        """The words of the most frequent spelling (the shortest on a tie)."""
        return max(self.forms, key=lambda f: (self.forms[f], -len(f))).split(" ")


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


def candidates(
    document: str, summary: str = "", limit: int = CANDIDATES, rules: Rules = ALL_RULES
) -> list[Candidate]:
    """The document's best `limit` candidates, best first, distinct by meaning.
    `summary` only ranks: a candidate it also names scores higher."""
    doc = read_document(document, rules)
    if doc is None:
        return []
    found = collect(doc, rules)
    return choose(score(found, doc, summary, rules), limit, rules)


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
    ends = {run.end for run in doc.runs}
    for run in doc.runs:
        i, j = run.start, run.end
        in_name.update(range(i, j + 1))
        name = strip_titles(run.words)
        if not is_tag_name(name):
            continue
        following = toks[j + 1].lower if j + 1 < len(toks) and not toks[j].brk else ""
        line_start = i == 0 or toks[i - 1].line != run.words[0].line
        # listed: a meeting's people (a line 'Present: ...', 'Name:' at a line start, '(Name)', '(Name, ...')
        listed = (
            (line_start and toks[j].after == ":")
            or run.words[0].line in doc.list_lines
            or (
                i > 0
                and toks[i - 1].after == "("
                and toks[j].after in (")", ",")
                and (i - 1) not in ends  # 'World Anti-Doping Agency (Wada)': a name's short form
            )
        )
        # 'said' next to one word is no evidence: 'Apple said', 'the ARU said'
        said = len(name) > 1 and (following in PERSON_VERBS or (i > 0 and toks[i - 1].lower in PERSON_VERBS))
        person = (
            listed
            or (len(run.words) > len(name) and run.words[0].lower in TITLES)
            or said
            or (len(name) == 1 and name[0].lower in people)
        )
        ws = [x for x in name if x.text != "&"]
        nxt = toks[j + 1] if following else None
        if len(ws) == 1 and nxt is not None and _proper_adjective(ws[0].lower) and _noun_after(nxt):
            # 'Islamic banking': the adjective and its noun are the topic, not 'Islamic'
            found.add("p:" + ws[0].lower + nxt.lower, [ws[0], nxt], "phrase", doc.bonus(ws[0], rules))
            continue
        found.add("n:" + "".join(x.lower for x in ws), ws, "name", doc.bonus(ws[0], rules), person, listed)
    return in_name


def _proper_adjective(word: str) -> bool:
    """A capitalised adjective of a religion, a place or an event ('Islamic',
    'Olympic', 'Arctic'): no name alone, the first word of a topic before a noun."""
    return word.endswith("ic") and len(word) > 4 and "NOUN" not in parts_of_speech(word)


def _noun_after(t: Token) -> bool:
    return not t.cap and _content(t) and _nounish(t.lower) and not _verb_only(t.lower)


def _content_runs(doc: Document, rules: Rules, in_name: set[int]) -> Iterator[tuple[int, int, list[Token]]]:
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
            len(run) == 2
            and run[0].cap
            and run[1].lower.endswith("s")
            and "VERB" in parts_of_speech(run[1].lower)
        ):
            run = run[:1]  # a sentence's subject and its verb: 'Council votes to close'
        while run and _verb_only(run[-1].lower):
            run = run[:-1]
        i = j + 1
        if run:
            yield i0, j, run


def _in_noun_slot(doc: Document, rules: Rules, first: int, last: int, run: list[Token]) -> bool:
    """The run's head is used as a noun: after a determiner or preposition, as
    a plural, as a possessive, as the head of several words or a word the
    dictionary knows only as a noun, and not a verb before its object or a
    number ('the server loads one copy', 'profit rose 18%')."""
    toks, head = doc.toks, run[-1]
    prev = toks[first - 1].lower if first > 0 else ""
    plural = _plural(head.lower) and not (prev in SUBJECTS or (first > 0 and toks[first - 1].cap))
    slot = (
        len(run) > 1
        or prev in DETERMINERS
        or plural
        or head.possessive
        or parts_of_speech(head.lower) == {"NOUN"}
    )
    nxt = toks[last + 1] if last + 1 < len(toks) and head is toks[last] and not toks[last].brk else None
    if _verb_gerund(head.lower):
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
    for first, last, run in _content_runs(doc, rules, in_name):
        head = run[-1]
        if not (
            (_in_noun_slot(doc, rules, first, last, run) or not rules.noun_slot) and _nounish(head.lower)
        ):
            continue
        found.add("t:" + stem(head.lower), [head], "term", doc.bonus(head, rules))
        for n in range(2, min(PHRASE_WORDS, len(run)) + 1 if rules.phrases else 2):
            ws = run[-n:]
            if (
                all(not _verb_only(w.lower) and not w.lower.endswith("ly") for w in ws)
                and not any(_plural(w.lower) for w in ws[:-1])
                and zipf(ws[0].lower) < COMMON_ZIPF
            ):
                found.add("p:" + "".join(w.lower for w in ws), list(ws), "phrase", doc.bonus(ws[0], rules))


def score(found: Found, doc: Document, summary: str = "", rules: Rules = ALL_RULES) -> list[Candidate]:
    """Every collected candidate that can be a tag, with its salience (docs/DESIGN.md,
    Hashtag candidates), in no particular order."""
    summary_stems = {stem(w) for w in re.findall(r"[^\W_]+", summary.lower())} if rules.summary else set()
    last_words = {e.first[-1].lower() for e in found.values() if e.kind == "name" and len(e.first) > 1}
    heads = _phrase_heads(found, doc) if rules.phrase_heads else set()
    out = []
    for key, e in found.items():
        if key in heads:
            continue  # 'rates' of 'interest rates': the phrase holds it
        c = _salience(e, doc, rules, last_words)
        if c is None:
            continue
        if summary_stems and all(stem(w) in summary_stems for w in c.words):
            c = replace(c, score=c.score * SUMMARY_BONUS)
        out.append(c)
    return out


def _phrase_heads(found: Found, doc: Document) -> set[str]:
    """The keys of terms that a repeated phrase ending in them mostly stands
    for: 'rates' when most of its mentions are 'interest rates'."""
    out = set()
    for e in found.values():
        if e.kind != "phrase" or e.count < 2:
            continue
        head = e.first[-1].lower()
        if 2 * e.count >= doc.stem_count.get(stem(head), e.count):
            out.add("t:" + stem(head))
    return out


def _salience(e: Mentions, doc: Document, rules: Rules, last_words: set[str]) -> Candidate | None:
    """One entry as a candidate, None when a rule keeps it out."""
    ws = e.form
    lowers = [w.lower() for w in ws]
    specs = [doc.specificity(w, rules) for w in lowers]
    if e.kind == "term":
        if zipf(lowers[0]) >= COMMON_ZIPF:
            return None
        if rules.headline_verb and e.count == 1 and e.bonus == 1.5 and "VERB" in parts_of_speech(lowers[0]):
            return None  # 'Satellite mapping aids Darfur relief': a headline's verb
        if _verb_gerund(lowers[0]) and doc.stem_count.get(stem(lowers[0]), 0) < 2:
            return None  # an -ing form once is a verb as often as a topic ('the network expiring on')
        mentions = doc.stem_count.get(stem(lowers[0]), 1)
        if rules.partitive and 2 * doc.of_count.get(stem(lowers[0]), 0) >= mentions:
            return None  # 'eleven pieces of ancient gold jewellery': the jewellery is the topic
        count, spec = doc.stem_count.get(stem(lowers[0]), e.count), specs[0]
    elif e.kind == "phrase":
        if e.count < 2 and (
            e.bonus == 1.0
            or (_verb_gerund(lowers[-1]) and e.bonus < 1.5)
            or (lowers[-1].endswith(("s", "ed")) and "VERB" in parts_of_speech(lowers[-1]))
        ):
            return None  # once only near the top, and not ending in a possible verb ('server loads')
        head = doc.stem_count.get(stem(lowers[-1]), e.count)
        holds = rules.phrase_heads and e.count >= 2 and 2 * e.count >= head
        count = head if holds else e.count + 0.5 * max(0, head - e.count)
        spec = (max(specs) + sum(specs) / len(specs)) / 2
    else:
        if len(ws) == 1 and lowers[0] in last_words:
            return None  # 'Greaves' of 'Martin Greaves': counted there
        count, spec = e.count, max(0.8, sum(specs) / len(specs)) if rules.english else 1.0
        if len(ws) > 1:  # later mentions by the last word alone ('Mr Greaves')
            count += sum(1 for t in doc.toks if t.lower == lowers[-1] and t.cap) - e.count
    s = (1 + math.log(max(1, count))) * spec * e.bonus * (1.15 if len(ws) > 1 else 1.0)
    if e.person and rules.person:
        s *= 0.5
    generic = e.kind == "term" and (
        lowers[0] in NEWS_GENERIC
        or role_noun(lowers[0])
        or (zipf(lowers[0]) >= BROAD_ZIPF and count < BROAD_COUNT)
    )
    if rules.news_generic and generic:
        s *= NEWS_GENERIC_WEIGHT
    name = e.kind == "name"
    return Candidate(
        "".join(cap_first(w) for w in ws),
        tuple(lowers),
        e.kind,
        s,
        int(count),
        e.person,
        e.listed,
        _initials(ws) if name and len(ws) > 1 else "",
        name and count <= 1 and e.bonus == 1.0 and len(doc.toks) >= PASSING_WORDS,
        e.count,
        generic,
    )


def _initials(words: Sequence[str]) -> str:
    """A name's acronym: each word's first letter, an all-capital word whole
    ('UK Independence Party' -> 'ukip'), connectors skipped, a hyphenated
    word's parts each ('World Anti-Doping Agency' -> 'wada')."""
    parts = [p for w in words if w.lower() not in CONNECTORS for p in _hyphen_parts(w)]
    return "".join(p if p.isupper() else p[:1] for p in parts).lower()


def _hyphen_parts(word: str) -> list[str]:
    """A joined hyphenated word's parts ('AntiDoping' -> Anti, Doping); other words whole ('McLaren')."""
    parts = re.findall(r"[A-Z][a-z]+", word)
    return parts if len(parts) > 1 and "".join(parts) == word and all(len(p) > 2 for p in parts) else [word]


def choose(scored: list[Candidate], limit: int, rules: Rules = ALL_RULES) -> list[Candidate]:
    """The best `limit` of `scored`, best first, distinct by meaning; one of a
    meeting's people named by one word only in first place."""
    ranked = sorted(scored, key=lambda c: (-c.score, c.text))
    if rules.lone_first_name:  # 'Wei' of 'Present: Helen, Wei': the story is about them only if they lead it
        ranked = [c for k, c in enumerate(ranked) if k == 0 or not (c.listed and len(c.words) == 1)]
    return distinct(ranked, limit)


def offer(ranked: list[Candidate], keep: int, limit: int = CANDIDATES) -> list[Candidate]:
    """The list the model picks from: the first `keep` of `ranked`, then those
    scoring at least OFFER_FLOOR of the best, at most `limit` (a weak tail is
    where the draft's bad picks came from: '#Train' after '#Headphones',
    '#ArdenQuiet'). Topics scoring at least TOPIC_FLOOR of the best take the
    places of the last other candidates until it holds TOPIC_CHOICES of them
    (a story is about something, not only someone, and the model chooses
    which), a named topic first when it holds none."""
    ranked = [c for k, c in enumerate(ranked) if k == 0 or not c.passing]
    out = [c for k, c in enumerate(ranked[:limit]) if k < keep or c.score >= OFFER_FLOOR * ranked[0].score]
    if not out:
        return out
    more = [c for c in ranked[len(out) :] if c.topic and c.score >= TOPIC_FLOOR * ranked[0].score]
    named = [c for c in more if c.named_topic][:1]
    if any(c.named_topic for c in out):
        named = []
    for c in [*named, *(c for c in more if c not in named)]:
        if sum(o.topic for o in out) >= TOPIC_CHOICES and not (named and c is named[0]):
            break
        if len(out) >= limit:
            others = [k for k, o in enumerate(out) if not o.topic and k > 0]
            if not others:
                break
            del out[others[-1]]
        out.append(c)
    return out


def _headline(document: str) -> bool:
    lines = [ln for ln in document.strip().splitlines()]
    if len(lines) < 2:
        return False
    first = lines[0].strip().lstrip("#").strip()
    return bool(first) and len(first.split()) <= 20 and first[-1:] not in ".!?"


def overlaps(a: frozenset[str], b: frozenset[str]) -> bool:
    """Same meaning for tags: one's word stems hold the other's."""
    return a <= b or b <= a


def distinct(ranked: list[Candidate], limit: int) -> list[Candidate]:
    """The first `limit` of `ranked` none of which overlaps a better one; a
    phrase said at least twice takes the place (and the score) of the better
    single term it ends in ('cold calls' for 'calls', 'central bank' for
    'bank'): the story's topic as it names it."""
    out: list[Candidate] = []
    for c in ranked:
        hit = [k for k, o in enumerate(out) if c.same(o)]
        if not hit:
            out.append(c)
            if len(out) >= limit:
                break
        elif len(hit) == 1 and _names_its_head(c, out[hit[0]]):
            out[hit[0]] = replace(c, score=max(c.score, out[hit[0]].score))
    return out


def _names_its_head(phrase: Candidate, term: Candidate) -> bool:
    return (
        phrase.kind == "phrase"
        and phrase.said >= 2
        and term.kind == "term"
        and stem(phrase.words[-1]) == stem(term.words[0])
    )
