"""Does the document back each sentence of a free summary? (`run --summary free`)

A sentence is checked for what a reader takes on trust: its names (places, people,
organisations, months and days), its numbers with their units, and what those are said
with. It is unsupported when

- a number of it is not a number of the document ("In 1991" for a tour of 1981), or is
  cut from its digits and the document never writes it so ("$4.million");
- a number carries a unit the document never gives it (units.py: "$19bn" where the
  document has "19bn euros"; "%" on a plain count);
- a name of it is not in the document (a capitalised word mid-sentence the document
  never writes capitalised: "Brussels"), or its words are the document's but never
  together ("UK Secret Service": claims.py, name runs); its first word is nearly a
  document name the document never writes ("Specter" for Spector: names.py);
- a number is said to rise, fall or hold, or to be the most or the least, and no
  document sentence that has it says so near it; a name or a date is said with winning or
  losing and no document sentence with it says that (claims.py, directions): rates "held
  at 4.75%" are not "a 4.75% interest rate increase";
- a number or a name is said with words the document never says it with: of the content
  words around it in the sentence (WINDOW words either side, within its clause; within its
  sentence when its clause has fewer than MIN_WINDOW: "In 1981, ..."), fewer than
  MIN_SHARED of them occur in any document sentence that has it, or in the sentence after
  that one when it opens with a pronoun or "the" ("He claims ...", "The firm ...": their
  antecedent is the sentence before); a name of a list of MIN_LIST or more names that a
  document sentence has with another name of the list is backed by that list ("works by
  Roy Lichtenstein, Andy Warhol, Henri Matisse and ..."). "David Lin proposed a second serving hatch" where
  the document has Anne Moss propose the hatch and David Lin report a leaking roof; "a 15%
  increase ... projected" where profits rose 15%. A number's unit is not one of those
  words, nor is a word of attribution ("according to a report");
- two names of one clause are in no document sentence together;
- a clause says nearly what a document clause says but denies what it affirms, or
  affirms what it denies (claims.py, negation), or states as fact what every such clause
  says only could or may be ("can now earn" for "could offer": claims.py, hedges);
- two names, a verb, a doer or a tense are joined otherwise than the document joins them
  (relations.py): roles the other way round ("Rangers have rejected a third bid from
  Blackburn"), a doer the document never names for the verb ("Conte ... has denied"), one
  name on both sides of a verb, done where the document says it is to come ("has closed on
  7 February"), a cause no document sentence gives ("because of poor results");
- a link of it is not the document's;
- a clause of it (split at commas, semicolons, dashes, "and", "but", "which" ...) with
  MIN_CLAUSE_WORDS content words or more shares fewer than MIN_CLAUSE of them with every
  single document sentence: what it says is not in the document ("a claim made by a
  US-based tech firm that has been criticized for its lax security", "includes a ban on
  electrical devices").

Words are compared by lemma (lemminflect; British -ise and American -ize alike), so "rose"
meets "rise" and "leaked" meets "leak"; words such as "increase" for "rise" are not
synonyms here, which is why a window passes with MIN_SHARED of its words rather than all of
them. The check reads text only and flags; `--unsupported` decides what the summary shown
does with a flagged sentence (keep, mark, drop). The record lists every flag
(`unsupported`: span and why).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from localsidecar.decoding.numbers import NUMBER
from localsidecar.hashtags.words import CALENDAR
from localsidecar.summary.claims import (
    DOC_REACH,
    MIN_SAME,
    OUTCOMES,
    ROLE_WORDS,
    SUMMARY_REACH,
    directions,
    hedge_scope,
    is_hedged,
    is_negative,
    is_year,
    sub_runs,
)
from localsidecar.summary.names import (
    Anchor,
    capitalised_runs,
    first_name,
    misspelt_first,
    name_not_in,
    names_in,
)
from localsidecar.summary.relations import (
    cause_not_said,
    document_acts,
    doer_not_said,
    role_not_said,
    swapped_roles,
    tense_turned,
)
from localsidecar.summary.text import (
    ATTRIBUTION,
    CLAUSE_BREAK,
    WORD,
    bare,
    clause_around,
    content_words,
    lemmas,
    sentences,
)
from localsidecar.summary.units import Unit, unit_and_end, unit_of, units_agree

KEEP, MARK, DROP = "keep", "mark", "drop"
UNSUPPORTED_MODES = (KEEP, MARK, DROP)

WINDOW = 4  # content words either side of a name or number
MIN_SHARED = 0.5  # share of those the document must say with it
MIN_WINDOW = 2  # fewer content words around it say too little to judge
MIN_CLAUSE = 0.5  # share of a clause's content words one document sentence must have
MIN_CLAUSE_WORDS = 4  # a shorter clause is not judged on its own
VERBATIM_WORDS = 5  # a clause this long found word for word in the document is the document's claim

_URL = re.compile(r"https?://[^\s)\]>]+")
_GARBLED = re.compile(r"[.,][^\W\d_]+")  # "$4.million": a number cut from its digits
_MONTHS = frozenset(CALENDAR) - frozenset(
    "monday tuesday wednesday thursday friday saturday sunday today yesterday tomorrow".split()
)


@dataclass(frozen=True)
class Unsupported:
    """One summary sentence the document does not back: its text (span), its
    offsets in the summary, and why (each reason once, '; ' between)."""

    span: str
    start: int
    end: int
    why: str

    def as_record(self) -> dict:
        return {"span": self.span, "why": self.why}


class DocumentFacts:
    """What the check needs of a document, computed once."""

    def __init__(self, text: str):
        self.text = text
        self.sentences = [text[a:b] for a, b in sentences(text)]
        self.lemma_sets = [
            frozenset(lemma for _, w in content_words(s) for lemma in lemmas(w)) for s in self.sentences
        ]
        self.numbers: dict[str, set[Unit]] = {}
        self.number_sentences: dict[str, list[int]] = {}
        for k, s in enumerate(self.sentences):
            for m in NUMBER.finditer(s):
                if m.start() and s[m.start() - 1].isalpha():
                    continue
                self.numbers.setdefault(m.group(0), set()).add(unit_of(s, m.start(), m.end()))
                self.number_sentences.setdefault(m.group(0), []).append(k)
        self.capitalised = {bare(w) for w in WORD.findall(text) if w[:1].isupper()}
        self._words = f" {' '.join(w.lower() for w in WORD.findall(text))} "
        self.words_lower = {w.lower() for w in WORD.findall(text)}
        self.lowercase = {w for w in WORD.findall(text) if w.islower()}
        self.acts = document_acts(self.sentences, self.lowercase)  # each verb with who does it
        # the ways (claims.py: rising, falling, ... winning, losing) each sentence says
        self.sentence_ways = [directions(WORD.findall(s), lemmas) for s in self.sentences]
        # each clause of the document: its content words' lemmas, whether it denies, the lemmas its
        # hedges govern (claims.hedge_scope), its text
        self.clauses = [
            (
                frozenset(lemma for _, w in content_words(c) if w.islower() for lemma in lemmas(w)),
                is_negative(WORD.findall(c)),
                frozenset(lemma for w in hedge_scope(WORD.findall(c)) for lemma in lemmas(w)),
                c,
            )
            for s in self.sentences
            for c in CLAUSE_BREAK.split(s)
            if c.strip()
        ]
        # the ways said near each number (DOC_REACH words), in any sentence that has it
        self.number_ways: dict[str, set[str]] = {}
        for s in self.sentences:
            words = list(WORD.finditer(s))
            for m in NUMBER.finditer(s):
                if m.start() and s[m.start() - 1].isalpha():
                    continue
                k = sum(1 for w in words if w.end() <= m.start())
                near = [w.group(0) for w in words[max(0, k - DOC_REACH) : k + DOC_REACH]]
                self.number_ways.setdefault(m.group(0), set()).update(directions(near, lemmas))
        # every part of two or more words of the document's names (lowercase)
        self.name_runs = {
            part
            for s in self.sentences
            for run in capitalised_runs(s)
            for part in sub_runs(tuple(bare(w.group(0)).lower() for w in run))
        }
        self.phrases = " ".join(w.lower() for w in WORD.findall(text))

    def garbled(self, written: str) -> bool:
        """The document writes `written` too ("v1.beta", "2.x")."""
        return re.search(rf"(?<![\w.,]){re.escape(written)}", self.text) is not None

    def says_verbatim(self, clause: str) -> bool:
        """The clause's words, VERBATIM_WORDS or more, are a run of the document's words
        (case and punctuation aside)."""
        words = [w.lower() for w in WORD.findall(clause)]
        return len(words) >= VERBATIM_WORDS and f" {' '.join(words)} " in self._words

    def with_anchor(self, anchor: Anchor) -> list[int]:
        """Indexes of the document sentences that have the anchor, of the sentence after
        each that opens with a pronoun, and of the sentence before each that does (its
        pronoun's sentence: "X was attacked in a park. He was not hurt in the mugging on
        Saturday evening.")."""
        hits = self.having(anchor)
        after = {
            k + 1 for k in hits if k + 1 < len(self.sentences) and _opens_with_pronoun(self.sentences[k + 1])
        }
        before = {k - 1 for k in hits if k > 0 and _opens_with_pronoun(self.sentences[k], _PERSONAL)}
        return sorted(set(hits) | after | before)

    def having(self, anchor: Anchor) -> list[int]:
        """Indexes of the document sentences that have the anchor."""
        if anchor.kind == "number":
            hits = self.number_sentences.get(anchor.text, [])
        else:  # the whole name, or the last word of a longer one in any case ("the council")
            words = [bare(w) for w in WORD.findall(anchor.text)]
            whole = [re.compile(rf"\b{re.escape(w)}\b") for w in words]
            last = re.compile(rf"\b{re.escape(words[-1])}\b", re.IGNORECASE)
            hits = [
                k
                for k, s in enumerate(self.sentences)
                if all(p.search(s) for p in whole) or (len(words) > 1 and last.search(s))
            ]
        return hits


_PRONOUNS = frozenset("he she they it his her their its this these the we our i my".split())
_PERSONAL = frozenset("he she they his her their".split())  # who the sentence before named


# an age's words ("a 60-year-old MP", "aged 60"): the document says it as "Mr Davies, 60,"
_AGE = re.compile(r"(?<=\d)[- ]years?[- ]old\b|\baged(?= \d)", re.IGNORECASE)
_LIST_JOIN = re.compile(r"\s*(?:,|,?\s+(?:and|or))\s*")
MIN_LIST = 3  # names joined as a list: a list of two is a pair (_apart)


def _opens_with_pronoun(sentence: str, pronouns: frozenset[str] = _PRONOUNS) -> bool:
    m = WORD.search(sentence)
    return bool(m) and m.group(0).lower() in pronouns


def _window(sentence: str, anchor: Anchor, anchors: Iterable[Anchor]) -> set[str]:
    """Content words within WINDOW words of the anchor and inside its clause (not other
    anchors' words); for an anchor that stands nearly alone in its clause ("In 1981, ...",
    "from 8,000 to 56%"), within WINDOW words in its sentence: what it dates or counts is
    said around the clause."""
    lo, hi = clause_around(sentence, anchor.start, anchor.end)
    ages = [m.span() for m in _AGE.finditer(sentence)]
    taken = [(a.start, a.end) for a in anchors] + ages
    words = [(o, w) for o, w in content_words(sentence) if not any(s <= o < e for s, e in taken)]
    before = [w for o, w in words if lo <= o < anchor.start][-WINDOW:]
    after = [w for o, w in words if anchor.end <= o < hi][:WINDOW]
    attributed = any(w.lower() in ATTRIBUTION for w in WORD.findall(sentence[lo:hi]))
    age = any(start == anchor.end for start, _ in ages)  # someone's age: what it counts is said
    if len(set(before + after)) < MIN_WINDOW and not attributed and not age:  # a source is no claim about it
        before = [w for o, w in words if o < anchor.start][-WINDOW:]
        after = [w for o, w in words if anchor.end <= o][:WINDOW]
    return set(before + after)


def _ways_said(sentence: str, start: int, end: int) -> frozenset[str]:
    """The ways (rise, fall, hold) the summary says the number at sentence[start:end] moves:
    words within SUMMARY_REACH of it inside its clause."""
    lo, hi = clause_around(sentence, start, end)
    before = [m.group(0) for m in WORD.finditer(sentence, lo, start)][-SUMMARY_REACH:]
    after = [m.group(0) for m in WORD.finditer(sentence, end, hi)][:SUMMARY_REACH]
    return directions(before + after, lemmas)


def _is_date(sentence: str, start: int, end: int) -> bool:
    """The number is a day of a date ("9 October", "June 3")."""
    before = WORD.findall(sentence[max(0, start - 12) : start])
    after = WORD.findall(sentence[end : end + 12])
    return bool(after and after[0].lower() in _MONTHS or before and before[-1].lower() in _MONTHS)


def _outcome_not_said(sentence: str, anchor: Anchor, doc: DocumentFacts) -> list[str]:
    """A name or date said with winning or losing that no document sentence with it says."""
    ways = _ways_said(sentence, anchor.start, anchor.end) & OUTCOMES
    if not ways:
        return []
    said = set().union(*(doc.sentence_ways[k] for k in doc.with_anchor(anchor)))
    if ways & said:
        return []
    return [f"the document never says {anchor.text!r} with a word of {' or '.join(sorted(ways))}"]


def check_sentence(sentence: str, doc: DocumentFacts) -> list[str]:
    """The reasons `sentence` is unsupported by `doc` (none: supported)."""
    reasons: list[str] = []
    anchors: list[Anchor] = []
    for m in _URL.finditer(sentence):  # a link is the document's or not; its parts are no words
        if m.group(0).rstrip(".,;:") not in doc.text:
            reasons.append(f"link {m.group(0)!r} is not in the document")
        sentence = sentence[: m.start()] + " " * len(m.group(0)) + sentence[m.end() :]
    heading = sentence.lstrip().startswith("#")  # a heading capitalises its words
    for m in NUMBER.finditer(sentence):
        n = m.group(0)
        if m.start() and sentence[m.start() - 1].isalpha():
            continue  # part of a word: "G7"
        if n not in doc.numbers:
            reasons.append(f"{n} is not a number of the document")
            continue
        garbled = _GARBLED.match(sentence, m.end())
        if garbled and not doc.garbled(n + garbled.group(0)):
            reasons.append(f"{n}{garbled.group(0)} is no number: the document never writes it")
            continue
        unit, unit_end = unit_and_end(sentence, m.start(), m.end())
        if not units_agree(unit, doc.numbers[n]):
            known = ", ".join(sorted(str(u) for u in doc.numbers[n]))
            reasons.append(f"{n} in {unit}: the document has it in {known}")
            continue
        anchor = Anchor("number", n, m.start(), unit_end)  # its unit is judged above, not as a word around it
        if is_year(n) or _is_date(sentence, m.start(), m.end()):
            reasons.extend(_outcome_not_said(sentence, anchor, doc))
        else:
            ways = _ways_said(sentence, m.start(), m.end())
            if ways and not ways & doc.number_ways.get(n, set()):
                reasons.append(f"the document never says {n} with a word of {' or '.join(sorted(ways))}")
        anchors.append(anchor)
    for a in names_in(sentence):
        words = [bare(w) for w in WORD.findall(a.text)]
        if (
            heading
            and not any(w in doc.capitalised for w in words)
            and all(w.lower() in doc.words_lower for w in words)
        ):
            continue  # a heading's capital on a word the document writes in lowercase
        missing = [
            w
            for w in WORD.findall(a.text)
            if bare(w) not in doc.capitalised
            and not (w.lower() in ROLE_WORDS and w.lower() in doc.words_lower)  # "Chief Executive"
        ]
        if missing or name_not_in(doc, a.text):
            reasons.append(f"name {a.text!r} is not in the document")
            continue
        reasons.extend(_outcome_not_said(sentence, a, doc))
        anchors.append(a)
    for clause in CLAUSE_BREAK.split(sentence):
        words = {w for _, w in content_words(clause)}
        reasons.extend(_polarity(clause, {w for w in words if w.islower()}, doc))
        if len(words) < MIN_CLAUSE_WORDS:
            continue
        best = max((sum(1 for w in words if lemmas(w) & known) for known in doc.lemma_sets), default=0)
        if best < MIN_CLAUSE * len(words):
            reasons.append(f"the document says nothing like {' '.join(clause.split())!r}")
    listed = _listed(sentence, anchors)
    for a in anchors:
        window = _window(sentence, a, anchors)
        if len(window) < MIN_WINDOW:
            continue
        hits = doc.with_anchor(a)
        if any(set(hits) & set(doc.with_anchor(b)) for b in listed.get(a.start, ())):
            continue  # one of a list the document gives too: the words around are the list's
        if doc.says_verbatim(sentence[slice(*clause_around(sentence, a.start, a.end))]):
            continue  # its clause is the document's own words ("which will be watched by millions in the US")
        said = max(
            (sum(1 for w in window if lemmas(w) & doc.lemma_sets[k]) for k in hits),
            default=0,
        )
        if said < MIN_SHARED * len(window):
            alone = ", ".join(
                sorted(w for w in window if not any(lemmas(w) & doc.lemma_sets[k] for k in hits))
            )
            reasons.append(f"the document never says {a.text!r} with {alone}")
    reasons.extend(_apart(sentence, anchors, doc))
    reasons.extend(misspelt_first(sentence, doc))
    # a sentence's first word joins the relations when it is a name of the document
    first = first_name(sentence, doc)
    named = anchors + ([first] if first and not any(a.start <= first.start < a.end for a in anchors) else [])
    reasons.extend(swapped_roles(sentence, named, doc))
    reasons.extend(doer_not_said(sentence, doc))
    reasons.extend(tense_turned(sentence, anchors, doc))
    reasons.extend(role_not_said(sentence, anchors, doc))
    reasons.extend(cause_not_said(sentence, doc))
    return list(dict.fromkeys(reasons))


def _listed(sentence: str, anchors: list[Anchor]) -> dict[int, list[Anchor]]:
    """Each anchor of a list of MIN_LIST or more ("works by Roy Lichtenstein, Andy Warhol,
    Henri Matisse and Jean-Michel Basquiat": joined by commas, "and", "or") with the
    list's other anchors, by the anchor's start."""
    ordered = sorted(anchors, key=lambda a: a.start)
    runs: list[list[Anchor]] = []
    for a in ordered:
        if runs and _LIST_JOIN.fullmatch(sentence[runs[-1][-1].end : a.start]):
            runs[-1].append(a)
        else:
            runs.append([a])
    return {a.start: [b for b in run if b is not a] for run in runs if len(run) >= MIN_LIST for a in run}


def _apart(sentence: str, anchors: list[Anchor], doc: DocumentFacts) -> list[str]:
    """Two names of one clause that no document sentence says together (nor one and the
    sentence after it that opens with a pronoun): what the summary makes of them together
    is not the document's ("Anne Moss thanked David Lin" where they never meet). A name and
    a number are left to the words around the number: a summary may join a person's age
    and nationality told in two sentences ("a 23-year-old Norwegian striker")."""
    out = []
    ordered = sorted(anchors, key=lambda x: x.start)
    for i, a in enumerate(ordered):
        for b in ordered[i + 1 :]:
            if a.kind != "name" or b.kind != "name" or a.text == b.text:
                continue
            if CLAUSE_BREAK.search(sentence, a.end, b.start):
                continue
            if not set(doc.with_anchor(a)) & set(doc.with_anchor(b)):
                out.append(f"the document never says {a.text!r} and {b.text!r} together")
    return out


def _polarity(clause: str, words: set[str], doc: DocumentFacts) -> list[str]:
    """The clause says what the document's closest clauses say (MIN_SAME of its lowercase
    content words, 3 at least: names say who, not what) but denies what all of them affirm,
    or affirms what all of them deny; or states as fact what all of them say only could or
    may be ("Viewers can now earn loyalty points" for "broadcasters could offer viewers
    loyalty points")."""
    if len(words) < 3:
        return []
    shared = [
        (sum(1 for w in words if lemmas(w) & known), neg, hedged, text)
        for known, neg, hedged, text in doc.clauses
    ]
    best = max((n for n, *_ in shared), default=0)
    if best < max(3, MIN_SAME * len(words)):
        return []
    # a closest clause is hedged for this one when a word they share is in its hedge's scope
    closest = [
        (neg, any(lemmas(w) & hedged for w in words), text) for n, neg, hedged, text in shared if n == best
    ]
    said = " ".join(closest[0][2].split())
    negative = is_negative(WORD.findall(clause))
    if not any(neg == negative for neg, _, _ in closest):
        verb = "denies what the document affirms" if negative else "affirms what the document denies"
        return [f"{' '.join(clause.split())!r} {verb}: {said!r}"]
    if all(hedged for _, hedged, _ in closest) and not is_hedged(WORD.findall(clause)):
        return [f"{' '.join(clause.split())!r} states as fact what the document says only could be: {said!r}"]
    return []


def check_summary(summary: str, document: str | DocumentFacts) -> list[Unsupported]:
    """Every sentence of `summary` the document does not back, in order."""
    doc = document if isinstance(document, DocumentFacts) else DocumentFacts(document)
    out = []
    for a, b in sentences(summary):
        text = summary[a:b].strip()
        if not text:
            continue
        start = summary.index(text, a)
        reasons = check_sentence(text, doc)
        if reasons:
            out.append(Unsupported(text, start, start + len(text), "; ".join(reasons)))
    return out


def apply(summary: str, flags: list[Unsupported], mode: str) -> str:
    """The summary shown under `--unsupported mode`: keep and mark leave the text as it
    is (mark is the human output's business), drop removes the flagged sentences."""
    if mode not in UNSUPPORTED_MODES:
        raise ValueError(f"unsupported must be one of {', '.join(UNSUPPORTED_MODES)}, not {mode!r}")
    if mode != DROP or not flags:
        return summary
    parts, last = [], 0
    for f in flags:
        parts.append(summary[last : f.start])
        last = f.end
    parts.append(summary[last:])
    return re.sub(r"\s{2,}", " ", "".join(parts)).strip()
