"""Does the document back each sentence of a free summary? (`run --summary free`)

A sentence is checked for what a reader takes on trust: its names (places, people,
organisations, months and days), its numbers with their units, and what those are said
with. It is unsupported when

- a number of it is not a number of the document ("In 1991" for a tour of 1981);
- a number carries a unit the document never gives it ("$19bn" where the document has
  "19bn euros"; "%" on a plain count);
- a name of it is not in the document (a capitalised word mid-sentence the document
  never writes capitalised: "UK Secret Service", "Brussels");
- a number or a name is said with words the document never says it with: of the content
  words around it in the sentence (WINDOW words either side, within its clause), fewer than
  MIN_SHARED of them occur in any document sentence that has it, or in the sentence after
  that one when it opens with a pronoun or "the" ("He claims ...", "The firm ...": their
  antecedent is the sentence before). "David Lin proposed a
  second serving hatch" where the document has Anne Moss propose the hatch and David Lin
  report a leaking roof; "a 15% increase ... projected" where profits rose 15%.

- a clause of it (split at commas, semicolons, dashes, "and", "but", "which" ...) with
  MIN_CLAUSE_WORDS content words or more shares fewer than MIN_CLAUSE of them with every
  single document sentence: what it says is not in the document ("a claim made by a
  US-based tech firm that has been criticized for its lax security", "includes a ban on
  electrical devices").

Words are compared by lemma (lemminflect; British -ise and American -ize alike), so "rose" meets "rise" and "leaked" meets
"leak"; words such as "increase" for "rise" are not synonyms here, which is why a window
passes with MIN_SHARED of its words rather than all of them. The check reads text only and
flags; `--unsupported` decides what the summary shown does with a flagged sentence
(keep, mark, drop). The record lists every flag (`unsupported`: span and why).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from localsidecar.decoding.numbers import NUMBER
from localsidecar.decoding.sentences import sentence_ends
from localsidecar.hashtags.words import CALENDAR, FUNCTION_WORDS, NUMBER_WORDS

KEEP, MARK, DROP = "keep", "mark", "drop"
UNSUPPORTED_MODES = (KEEP, MARK, DROP)

WINDOW = 4  # content words either side of a name or number
MIN_SHARED = 0.5  # share of those the document must say with it
MIN_WINDOW = 2  # fewer content words around it say too little to judge
MIN_CLAUSE = 0.4  # share of a clause's content words one document sentence must have
MIN_CLAUSE_WORDS = 4  # a shorter clause is not judged on its own

_WORD = re.compile(r"[^\W\d_][^\W_]*(?:['’][^\W\d_]+)*", re.UNICODE)  # "G7", "A380" are words
_CLAUSE_BREAK = re.compile(r"[;:()\[\]—–]|,\s|\s-\s|\band\b|\bbut\b|\bwhile\b|\bwhich\b|\bwho\b")
_SPELLING = re.compile(r"is(e|es|ed|ing|ation|ations)$")  # British -ise, American -ize: one lemma
# units a number carries: a symbol or word right after it, or a currency sign before it
_UNIT_AFTER = re.compile(
    r"\s?(%|per ?cent|percent|bn|billion|m\b|million|k\b|thousand|trillion|tn|"
    r"euros?|pounds?|dollars?|pence|cents?|yen|yuan|rupees?|"
    r"km|kilomet(?:re|er)s?|miles?|metres?|meters?|kg|kilograms?|tonnes?|tons?|"
    r"minutes?|hours?|days?|weeks?|months?|years?|seconds?)\b",
    re.IGNORECASE,
)
_CURRENCY_BEFORE = re.compile(r"([$£€¥])\s?$")
_UNIT_NAMES = {
    "%": "percent",
    "per cent": "percent",
    "percent": "percent",
    "percent ": "percent",
    "bn": "billion",
    "billion": "billion",
    "m": "million",
    "million": "million",
    "k": "thousand",
    "thousand": "thousand",
    "tn": "trillion",
    "$": "dollar",
    "£": "pound",
    "€": "euro",
    "¥": "yen",
}
_SCALES = frozenset({"billion", "million", "thousand", "trillion"})
# sentence-initial words that start no name ("The UK Secret Service": "UK" starts it)
_NAME_BREAKERS = FUNCTION_WORDS | frozenset({"i"})


@lru_cache(maxsize=65536)
def lemmas(word: str) -> frozenset[str]:
    """The word's lemmas (lowercase; the word itself when the dictionary does not know it)."""
    from lemminflect import getAllLemmas

    low = _SPELLING.sub(r"iz\1", word.lower()) if len(word) > 5 else word.lower()
    found = {lemma for forms in getAllLemmas(low).values() for lemma in forms}
    return frozenset(found | {low})


def content_words(text: str) -> list[tuple[int, str]]:
    """(offset, word) of the words of `text` that carry meaning: no function word,
    number word, calendar word, nor a word of one or two letters."""
    return [
        (m.start(), m.group(0))
        for m in _WORD.finditer(text)
        if len(m.group(0)) > 2
        and m.group(0).lower() not in FUNCTION_WORDS
        and m.group(0).lower() not in NUMBER_WORDS
        and m.group(0).lower() not in CALENDAR
    ]


def _unit(text: str, start: int, end: int) -> str | None:
    """The unit of the number at text[start:end] (normalized), if any."""
    m = _UNIT_AFTER.match(text, end)
    if m:
        u = m.group(1).lower()
        return _UNIT_NAMES.get(u, u.rstrip("s"))
    m = _CURRENCY_BEFORE.search(text, 0, start)
    if m:
        return _UNIT_NAMES[m.group(1)]
    return None


def _units_agree(said: str | None, known: set[str | None]) -> bool:
    """A unit said is one the document gives the number; a scale word ("bn") agrees with a
    currency the document puts around it ("£14bn" and "14bn pounds" alike)."""
    if said is None or said in known:
        return True
    return said in _SCALES and bool(known & _SCALES)


def _sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of the sentences of `text`; a line break ends one too."""
    out: list[tuple[int, int]] = []
    for m in re.finditer(r"[^\n]+", text):
        a = m.start()
        line = m.group(0)
        for e in sentence_ends(line, final=True) + [len(line)]:
            piece = text[a : m.start() + e]
            if piece.strip():
                out.append((a, m.start() + e))
            a = m.start() + e
    return [(a, b) for a, b in out if text[a:b].strip()]


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


@dataclass
class _Anchor:
    kind: str  # "number" or "name"
    text: str
    start: int
    end: int


class DocumentFacts:
    """What the check needs of a document, computed once."""

    def __init__(self, text: str):
        self.text = text
        self.sentences = [text[a:b] for a, b in _sentences(text)]
        self.lemma_sets = [
            frozenset(lemma for _, w in content_words(s) for lemma in lemmas(w)) for s in self.sentences
        ]
        self.numbers: dict[str, set[str | None]] = {}
        self.number_sentences: dict[str, list[int]] = {}
        for k, s in enumerate(self.sentences):
            for m in NUMBER.finditer(s):
                if m.start() and s[m.start() - 1].isalpha():
                    continue
                self.numbers.setdefault(m.group(0), set()).add(_unit(s, m.start(), m.end()))
                self.number_sentences.setdefault(m.group(0), []).append(k)
        self.capitalised = {_bare(w) for w in _WORD.findall(text) if w[:1].isupper()}
        self.words_lower = {w.lower() for w in _WORD.findall(text)}

    def with_anchor(self, anchor: _Anchor) -> list[int]:
        """Indexes of the document sentences that have the anchor, and of the sentence after each."""
        if anchor.kind == "number":
            hits = self.number_sentences.get(anchor.text, [])
        else:  # the whole name, or the last word of a longer one in any case ("the council")
            words = [_bare(w) for w in _WORD.findall(anchor.text)]
            whole = [re.compile(rf"\b{re.escape(w)}\b") for w in words]
            last = re.compile(rf"\b{re.escape(words[-1])}\b", re.IGNORECASE)
            hits = [
                k
                for k, s in enumerate(self.sentences)
                if all(p.search(s) for p in whole) or (len(words) > 1 and last.search(s))
            ]
        after = {
            k + 1 for k in hits if k + 1 < len(self.sentences) and _opens_with_pronoun(self.sentences[k + 1])
        }
        return sorted(set(hits) | after)


_PRONOUNS = frozenset("he she they it his her their its this these the".split())


def _opens_with_pronoun(sentence: str) -> bool:
    m = _WORD.search(sentence)
    return bool(m) and m.group(0).lower() in _PRONOUNS


def _bare(word: str) -> str:
    """The word without a possessive ending ("UK's" -> "UK")."""
    return re.sub(r"['’]s?$", "", word)


def _names(sentence: str) -> list[_Anchor]:
    """Runs of capitalised words; a sentence's first word starts a run only when the next
    word is capitalised too and it is no function word ("The")."""
    words = list(_WORD.finditer(sentence))
    out: list[_Anchor] = []
    k = 0
    while k < len(words):
        w = words[k]
        if not w.group(0)[:1].isupper():
            k += 1
            continue
        j = k
        while (
            j + 1 < len(words)
            and words[j + 1].group(0)[:1].isupper()
            and _adjacent(sentence, words[j], words[j + 1])
        ):
            j += 1
        before = sentence[: w.start()].rstrip(" \"'“‘([")
        first_word = not before or before.endswith(":")
        run = words[k : j + 1]
        if first_word:
            if run[0].group(0).lower() in _NAME_BREAKERS or len(run) == 1:
                run = run[1:]
        if run and not (len(run) == 1 and len(run[0].group(0)) == 1):  # "A", "I"
            end = run[-1].start() + len(_bare(run[-1].group(0)))
            out.append(_Anchor("name", sentence[run[0].start() : end], run[0].start(), end))
        k = j + 1
    return out


def _adjacent(sentence: str, a: re.Match, b: re.Match) -> bool:
    return sentence[a.end() : b.start()] in (" ", "-", " of ", " & ")


def _window(sentence: str, anchor: _Anchor, anchors: Iterable[_Anchor]) -> set[str]:
    """Content words within WINDOW words of the anchor and inside its clause (not other anchors' words)."""
    lo = max((m.end() for m in _CLAUSE_BREAK.finditer(sentence, 0, anchor.start)), default=0)
    hi_m = _CLAUSE_BREAK.search(sentence, anchor.end)
    hi = hi_m.start() if hi_m else len(sentence)
    taken = [(a.start, a.end) for a in anchors]
    words = [(o, w) for o, w in content_words(sentence) if not any(s <= o < e for s, e in taken)]
    before = [w for o, w in words if lo <= o < anchor.start][-WINDOW:]
    after = [w for o, w in words if anchor.end <= o < hi][:WINDOW]
    return set(before + after)


def check_sentence(sentence: str, doc: DocumentFacts) -> list[str]:
    """The reasons `sentence` is unsupported by `doc` (none: supported)."""
    reasons: list[str] = []
    anchors: list[_Anchor] = []
    for m in NUMBER.finditer(sentence):
        n = m.group(0)
        if m.start() and sentence[m.start() - 1].isalpha():
            continue  # part of a word: "G7"
        if n not in doc.numbers:
            reasons.append(f"{n} is not a number of the document")
            continue
        unit = _unit(sentence, m.start(), m.end())
        if not _units_agree(unit, doc.numbers[n]):
            known = ", ".join(sorted(u or "no unit" for u in doc.numbers[n]))
            reasons.append(f"{n} in {unit}: the document has it in {known}")
            continue
        anchors.append(_Anchor("number", n, m.start(), m.end()))
    for a in _names(sentence):
        missing = [w for w in _WORD.findall(a.text) if _bare(w) not in doc.capitalised]
        if missing:
            reasons.append(f"name {a.text!r} is not in the document")
            continue
        anchors.append(a)
    for clause in _CLAUSE_BREAK.split(sentence):
        words = {w for _, w in content_words(clause)}
        if len(words) < MIN_CLAUSE_WORDS:
            continue
        best = max((sum(1 for w in words if lemmas(w) & known) for known in doc.lemma_sets), default=0)
        if best < MIN_CLAUSE * len(words):
            reasons.append(f"the document says nothing like {' '.join(clause.split())!r}")
    for a in anchors:
        window = _window(sentence, a, anchors)
        if len(window) < MIN_WINDOW:
            continue
        hits = doc.with_anchor(a)
        said = max(
            (sum(1 for w in window if lemmas(w) & doc.lemma_sets[k]) for k in hits),
            default=0,
        )
        if said < MIN_SHARED * len(window):
            alone = ", ".join(
                sorted(w for w in window if not any(lemmas(w) & doc.lemma_sets[k] for k in hits))
            )
            reasons.append(f"the document never says {a.text!r} with {alone}")
    return list(dict.fromkeys(reasons))


def check_summary(summary: str, document: str | DocumentFacts) -> list[Unsupported]:
    """Every sentence of `summary` the document does not back, in order."""
    doc = document if isinstance(document, DocumentFacts) else DocumentFacts(document)
    out = []
    for a, b in _sentences(summary):
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
