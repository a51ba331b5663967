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
from dataclasses import dataclass

from localsidecar.hashtags.metrics import stem
from localsidecar.hashtags.words import (
    CALENDAR,
    CONNECTORS,
    DEMONYMS,
    DETERMINERS,
    FUNCTION_WORDS,
    GENERIC,
    LIST_HEADS,
    LOCATIVES,
    NUMBER_WORDS,
    OBJECT_STARTS,
    PERSON_VERBS,
    SUBJECTS,
    TITLES,
    UNITS,
    Token,
    cap_first,
    parts_of_speech,
    specificity,
    tokenize,
    zipf,
)

CANDIDATES = 5  # the grammar's list: the model picks 3 of them
OFFER_FLOOR = 0.5  # past the third, a candidate is offered only at this share of the best one's score
MAX_NAME_WORDS = 4  # a longer capitalised run is no tag
PHRASE_WORDS = 3
MAX_WORD_CHARS = 16
COMMON_ZIPF = 5.6  # words at least this common in English are too generic to be a tag alone


@dataclass(frozen=True)
class Candidate:
    text: str  # display form without '#', CamelCase ('RiverTam')
    words: tuple[str, ...]
    kind: str  # 'name', 'phrase' or 'term'
    score: float
    count: int
    person: bool = False
    listed: bool = False  # named as one of a meeting's people (Present: ..., (Name)); person too

    @property
    def stems(self) -> frozenset[str]:
        return frozenset(stem(w) for w in self.words)


def _is_name_word(t: Token, capitalised_mid: set[str], seen_lower: set[str]) -> bool:
    if not t.cap or t.lower in FUNCTION_WORDS or t.lower in CALENDAR or t.text.isdigit():
        return False
    if not t.initial:
        return True
    return t.lower in capitalised_mid or (t.lower not in seen_lower and not parts_of_speech(t.lower))


def _strip_titles(run: list[Token]) -> list[Token]:
    i = 0
    while i < len(run) - 1 and (
        run[i].lower in TITLES or (run[i].lower in DEMONYMS and run[i + 1].lower in TITLES)
    ):
        i += 1
    while len(run) > i and run[-1].lower in CONNECTORS:
        run = run[:-1]
    return run[i:]


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
    return "NOUN" in pos or "PROPN" in pos


def _plural(word: str) -> bool:
    from lemminflect import getAllLemmas

    lemmas = getAllLemmas(word).get("NOUN", ())
    return bool(lemmas) and word.endswith("s") and lemmas[0] != word


def _verb_only(word: str) -> bool:
    pos = parts_of_speech(word)
    return bool(pos) and "NOUN" not in pos and "PROPN" not in pos


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


ALL_RULES = Rules()


def _position_bonus(t: Token, headline_line: int, first_para: int, rules: Rules) -> float:
    if not rules.position:
        return 1.0
    return 1.5 if t.line == headline_line else 1.25 if t.para <= first_para else 1.0


def _name_runs(toks: list[Token], rules: Rules) -> list[tuple[int, int, list[Token]]]:
    """(start, end, run) of every maximal run of name words (connectors inside)."""
    capitalised_mid = {t.lower for t in toks if t.cap and not t.initial}
    seen_lower = {t.lower for t in toks if not t.cap}
    is_name = [_is_name_word(t, capitalised_mid, seen_lower) for t in toks]
    # a sentence-initial adjective before two name words is one of them: 'Public Health Scotland'
    for k in range(len(toks) - 2):
        if (
            rules.initial
            and not is_name[k]
            and toks[k].cap
            and toks[k].initial
            and toks[k].lower not in FUNCTION_WORDS
            and "ADJ" in parts_of_speech(toks[k].lower)
            and is_name[k + 1]
            and is_name[k + 2]
            and not (toks[k].brk or toks[k + 1].brk)
        ):
            is_name[k] = True
    runs = []
    i = 0
    while i < len(toks):
        if not is_name[i]:
            i += 1
            continue
        j = i
        while not toks[j].brk and j + 1 < len(toks):
            if is_name[j + 1]:
                j += 1
            elif (
                toks[j + 1].lower in CONNECTORS
                and not toks[j + 1].brk
                and j + 2 < len(toks)
                and is_name[j + 2]
            ):
                j += 2
            else:
                break
        runs.append((i, j, toks[i : j + 1]))
        i = j + 1
    if rules.initial:  # 'Natural' of a headline's 'Natural history museum reopens' is no name
        mid_keys = {tuple(t.lower for t in r) for _, _, r in runs if not r[0].initial}
        kept = []
        for i, j, r in runs:
            pos = parts_of_speech(r[0].lower)
            # an adjective before two or more capitalised words names with them ('Public Health Scotland')
            named = len(r) >= 3 and "ADJ" in pos and not r[1].initial
            if r[0].initial and pos and not named and tuple(t.lower for t in r) not in mid_keys:
                r = r[1:]
                while r and r[0].lower in CONNECTORS:
                    r = r[1:]
                i = j - len(r) + 1
            if r:
                kept.append((i, j, r))
        runs = kept
    return runs


def _past_verb(word: str) -> bool:
    """An inflected verb form that is no noun or adjective: 'renewed', 'took', 'were'."""
    lemmas = parts_of_speech(word)
    return (
        bool(lemmas)
        and "NOUN" not in lemmas
        and "ADJ" not in lemmas
        and word not in ("is", "was", "has", "does")
    )


def _agents(toks: list[Token], runs: list[tuple[int, int, list[Token]]]) -> set[str]:
    """One-word names the text treats as people without a title or 'said': the
    subject of a past verb ('Nadia renewed it', 'Ayo and Mia were'), or joined
    by 'and' or a comma to one ('Dana, Felix'); never a name after a
    preposition of place anywhere ('in Carrow', 'from Arden')."""
    from lemminflect import getAllLemmas

    ones = [(i, r[0].lower) for i, j, r in runs if i == j]
    placed = {w for i, w in ones if i > 0 and toks[i - 1].lower in LOCATIVES}
    agents = set()
    for i, w in ones:
        nxt = toks[i + 1].lower if i + 1 < len(toks) and not toks[i].brk else ""
        inflected = any(nxt not in ls for ls in getAllLemmas(nxt).values())
        if nxt and _past_verb(nxt) and inflected:
            agents.add(w)
    joined = [
        (a, b)
        for (i, a), (k, b) in zip(ones, ones[1:])
        if k == i + 2 and (toks[i].after == "," or toks[i + 1].lower == "and")
    ]
    for group in (
        placed,
        agents,
    ):  # places are listed with places ('Millbrook and Eastwater'), people with people
        for _ in range(2):
            for a, b in joined:
                if (a in group or b in group) and not (group is agents and {a, b} & placed):
                    group |= {a, b}
    return agents - placed


def candidates(
    document: str, summary: str = "", limit: int = CANDIDATES, rules: Rules = ALL_RULES
) -> list[Candidate]:
    """The document's best `limit` candidates, best first, distinct by meaning.
    `summary` only ranks: a candidate it also names scores higher."""
    toks = tokenize(document)
    if not toks:
        return []
    stem_count: dict[str, int] = {}
    of_count: dict[str, int] = {}  # mentions followed by 'of' ('pieces of gold')
    for k, t in enumerate(toks):
        if t.text.isalpha():
            stem_count[stem(t.lower)] = stem_count.get(stem(t.lower), 0) + 1
            if not t.brk and k + 1 < len(toks) and toks[k + 1].lower == "of":
                of_count[stem(t.lower)] = of_count.get(stem(t.lower), 0) + 1
    first_para = next((t.para for t in toks if t.line > toks[0].line), toks[0].para)
    headline_line = toks[0].line if _headline(document) else -1
    summary_stems = {stem(w) for w in re.findall(r"[^\W_]+", summary.lower())} if rules.summary else set()
    list_lines = {
        t.line for k, t in enumerate(toks) if t.lower in LIST_HEADS and (k == 0 or toks[k - 1].line != t.line)
    }

    found: dict[str, dict] = {}

    def add(key: str, ws: list[Token], kind: str, person: bool = False, listed: bool = False) -> None:
        e = found.setdefault(
            key,
            {
                "words": [t.text for t in ws],
                "kind": kind,
                "count": 0,
                "bonus": 1.0,
                "person": False,
                "listed": False,
                "forms": {},
            },
        )
        e["count"] += 1
        e["person"] = e["person"] or person
        e["listed"] = e["listed"] or listed
        form = " ".join(t.text for t in ws)
        e["forms"][form] = e["forms"].get(form, 0) + 1
        e["bonus"] = max(e["bonus"], _position_bonus(ws[0], headline_line, first_para, rules))

    in_name = set()
    agents = _agents(toks, _name_runs(toks, rules)) if rules.agent else set()
    for i, j, run in _name_runs(toks, rules):
        in_name.update(range(i, j + 1))
        name = _strip_titles(run)
        if not (
            name
            and len(name) <= MAX_NAME_WORDS
            and all(len(x.text) <= MAX_WORD_CHARS for x in name)
            and not (
                len(name) == 1
                and (
                    name[0].lower in DEMONYMS
                    or name[0].lower in UNITS
                    or name[0].lower in GENERIC
                    or name[0].lower in LIST_HEADS
                    or len(name[0].text) < 2
                )
            )
        ):
            continue
        following = toks[j + 1].lower if j + 1 < len(toks) and not toks[j].brk else ""
        line_start = i == 0 or toks[i - 1].line != run[0].line
        # listed: a meeting's people (a line 'Present: ...', 'Name:' at a line start, '(Name)', '(Name, ...')
        listed = (
            (line_start and toks[j].after == ":")
            or run[0].line in list_lines
            or (i > 0 and toks[i - 1].after == "(" and toks[j].after in (")", ","))
        )
        person = (
            listed
            or (len(run) > len(name) and run[0].lower in TITLES)
            or following in PERSON_VERBS
            or (i > 0 and toks[i - 1].lower in PERSON_VERBS)
            or (len(name) == 1 and name[0].lower in agents)
        )
        ws = [x for x in name if x.text != "&"]
        add("n:" + "".join(x.lower for x in ws), ws, "name", person, listed)

    i = 0
    while i < len(toks):
        t = toks[i]
        if i in in_name or not _content(t) or (t.cap and not (rules.initial_word and t.initial)):
            i += 1
            continue
        # a run of lowercase content words: its head (last word) and the phrases ending there
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
        if not run:
            continue
        head, first_i = run[-1], i0
        prev = toks[first_i - 1].lower if first_i > 0 else ""
        plural = _plural(head.lower) and not (prev in SUBJECTS or (first_i > 0 and toks[first_i - 1].cap))
        noun_slot = (
            len(run) > 1
            or prev in DETERMINERS
            or plural
            or head.possessive
            or parts_of_speech(head.lower) == {"NOUN"}
        )
        nxt = toks[j + 1] if j + 1 < len(toks) and run[-1] is toks[j] and not toks[j].brk else None
        if (
            nxt is not None
            and "VERB" in parts_of_speech(head.lower)
            and (
                nxt.lower in OBJECT_STARTS
                or nxt.text.isdigit()
                or (rules.counted_verb and nxt.lower in NUMBER_WORDS)
            )
        ):
            noun_slot = False  # 'the server loads one copy', 'profit rose 18%'
        if (noun_slot or not rules.noun_slot) and _nounish(head.lower):
            add("t:" + stem(head.lower), [head], "term")
            for n in range(2, min(PHRASE_WORDS, len(run)) + 1 if rules.phrases else 2):
                ws = run[-n:]
                if (
                    all(not _verb_only(w.lower) and not w.lower.endswith("ly") for w in ws)
                    and not any(_plural(w.lower) for w in ws[:-1])
                    and zipf(ws[0].lower) < COMMON_ZIPF
                ):
                    add("p:" + "".join(w.lower for w in ws), list(ws), "phrase")

    parts_of = {t.lower: t.parts for t in toks if len(t.parts) > 1}

    def spec_of(w: str) -> float:  # a compound is as specific as its parts
        if not rules.english:
            return 1.0
        ps = parts_of.get(w, (w,))
        return sum(map(specificity, ps)) / len(ps)

    last_words = {
        e["words"][-1].lower() for e in found.values() if e["kind"] == "name" and len(e["words"]) > 1
    }
    scored: list[Candidate] = []
    for e in found.values():
        form = max(e["forms"], key=lambda f: (e["forms"][f], -len(f)))
        ws = form.split(" ")
        lowers = [w.lower() for w in ws]
        specs = [spec_of(w) for w in lowers]
        if e["kind"] == "term":
            if zipf(lowers[0]) >= COMMON_ZIPF:
                continue
            if rules.partitive and 2 * of_count.get(stem(lowers[0]), 0) >= stem_count.get(stem(lowers[0]), 1):
                continue  # 'eleven pieces of ancient gold jewellery': the jewellery is the topic
            count, spec = stem_count.get(stem(lowers[0]), e["count"]), specs[0]
        elif e["kind"] == "phrase":
            if e["count"] < 2 and (
                e["bonus"] == 1.0
                or (lowers[-1].endswith(("s", "ed")) and "VERB" in parts_of_speech(lowers[-1]))
            ):
                continue  # once only near the top, and not ending in a possible verb ('server loads')
            head = stem_count.get(stem(lowers[-1]), e["count"])
            count, spec = (
                e["count"] + 0.5 * max(0, head - e["count"]),
                (max(specs) + sum(specs) / len(specs)) / 2,
            )
        else:
            if len(ws) == 1 and lowers[0] in last_words:
                continue  # 'Greaves' of 'Martin Greaves': counted there
            count, spec = e["count"], max(0.8, sum(specs) / len(specs)) if rules.english else 1.0
            if len(ws) > 1:  # later mentions by the last word alone ('Mr Greaves')
                count += sum(1 for t in toks if t.lower == lowers[-1] and t.cap) - e["count"]
        s = (1 + math.log(max(1, count))) * spec * e["bonus"] * (1.15 if len(ws) > 1 else 1.0)
        if e["person"] and rules.person:
            s *= 0.5
        if summary_stems and all(stem(w) in summary_stems for w in lowers):
            s *= 1.2
        scored.append(
            Candidate(
                "".join(cap_first(w) for w in ws),
                tuple(lowers),
                e["kind"],
                s,
                int(count),
                e["person"],
                e["listed"],
            )
        )
    scored.sort(key=lambda c: (-c.score, c.text))
    if rules.lone_first_name:  # 'Wei' of 'Present: Helen, Wei': the story is about them only if they lead it
        scored = [c for k, c in enumerate(scored) if k == 0 or not (c.listed and len(c.words) == 1)]
    return distinct(scored, limit)


def offer(ranked: list[Candidate], keep: int) -> list[Candidate]:
    """The grammar's list: the first `keep` of `ranked`, then those scoring at
    least OFFER_FLOOR of the best (a weak tail is where the draft's bad picks
    came from: '#Train' after '#Headphones', '#ArdenQuiet')."""
    return [c for k, c in enumerate(ranked) if k < keep or c.score >= OFFER_FLOOR * ranked[0].score]


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
    """The first `limit` of `ranked` none of which overlaps a better one."""
    out: list[Candidate] = []
    for c in ranked:
        if not any(overlaps(c.stems, o.stems) for o in out):
            out.append(c)
            if len(out) >= limit:
                break
    return out
