"""Where a summary's sentences end: the stop rule of the summary loop and the
cut that makes the shown summary end on a complete sentence.

A sentence end is '.', '!', '?' or '…' (closing quotes and brackets may
follow) that is *confirmed* by what comes next: a line break, or spaces and
then a capital letter, a digit, an opening quote or bracket, or a list
marker. "3.1 million", "Dr. Vos", "J. Smith", "approx. five" and "ca. 300" are not
sentence ends. At the end of the text (the model stopped, or the hard cap)
a final '.', '!' or '?' counts without confirmation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from localsidecar.decoding.defaults import DEFAULT_MAX_TOKENS, DEFAULT_SOFT_TOKENS  # noqa: F401  (re-exported)

# Words that end in '.' without ending a sentence (compared lowercase, without the dot);
# letters with dots ('e.g', 'u.s', 'l.a') are _DOTTED's.
ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st sr jr mt ft vs etc approx est dept gen gov lt col sgt rev fig figs vol "
    "inc ltd co corp ca cf viz incl excl messrs pp jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
_END = r"[.!?…]+[\"'”’)\]]*"
_CONFIRMED = re.compile(_END + r"(?=\n|[ \t]+[\"“‘'(\[*•\-–—]?[A-Z0-9À-ÖØ-Þ])")
_FINAL = re.compile(_END + r"\s*$")
_WORD_BEFORE = re.compile(r"([\w.]+)$")
_DOTTED = re.compile(r"(?:[a-z]\.)+[a-z]")  # letters with dots: 'l.a' of L.A., 's.c', 'd.c'


def _is_abbreviation(text: str, dot: int) -> bool:
    """Is the '.' at index `dot` the end of an abbreviation, an initial or a
    list number?"""
    if text[dot] != ".":
        return False
    m = _WORD_BEFORE.search(text, 0, dot)
    if m is None:  # '%.', ').', '".': no word touches the dot, so it ends a sentence
        return False
    word = m.group(1).lower().strip(".")
    before = text[: m.start()]
    if (
        word.isdigit()
        and (not before or before[-1].isspace())
        and (not before.strip() or before.rstrip().endswith(("\n", ".", "!", "?", ":", ";")))
    ):
        return True  # a numbered list item: "1. Rinse the lentils" (not "in 2:06:51.")
    return (len(word) == 1 and word.isalpha()) or word in ABBREVIATIONS or bool(_DOTTED.fullmatch(word))


def sentence_ends(text: str, *, final: bool = False) -> list[int]:
    """Character offsets just past each confirmed sentence end in `text`
    (closing quotes/brackets included); with `final`, also the end of the text
    when it ends on '.', '!' or '?' (the text is complete: nothing follows)."""
    ends = [m.end() for m in _CONFIRMED.finditer(text) if not _is_abbreviation(text, m.start())]
    if final:
        m = _FINAL.search(text)
        if m and not _is_abbreviation(text, m.start()) and (not ends or ends[-1] < m.start()):
            ends.append(len(text[: m.end()].rstrip()))
    return ends


def first_repeat(text: str, ends: Sequence[int]) -> int | None:
    """The index in `ends` of the first sentence that says, word for word
    (case and punctuation aside), what an earlier one said; None if none does.
    A small model that loops writes the same sentence again and again."""
    seen: set[tuple[str, ...]] = set()
    start = 0
    for k, end in enumerate(ends):
        words = tuple(re.findall(r"[^\W_]+", text[start:end].lower()))
        start = end
        if words and words in seen:
            return k
        seen.add(words)
    return None


def complete_summary(text: str) -> tuple[str, bool]:
    """(shown summary, complete): `text` cut back to its last sentence end,
    complete=True, and before the first sentence that repeats an earlier one
    (first_repeat); a text without any sentence end is shown whole, flagged
    complete=False."""
    text = text.strip()
    ends = sentence_ends(text, final=True)
    repeat = first_repeat(text, ends)
    if repeat is not None:
        ends = ends[:repeat]
    if not ends:
        return text, False
    return text[: ends[-1]].rstrip(), True


@dataclass
class SentenceStop:
    """The summary loop's per-token hook (speculative.TokenHook): stops at
    the first sentence end confirmed once the summary holds `soft_tokens`
    tokens ("sentence"), and at any length once a confirmed sentence repeats
    an earlier one ("repeat": complete_summary drops it); `on_tokens` hears
    the token count after every token (progress). soft_tokens=None never
    stops."""

    detokenize: Callable[[Sequence[int]], str]
    soft_tokens: int | None
    on_tokens: Callable[[int], None] | None = None
    _ends: int = field(default=0, init=False)

    def __call__(self, out: list[int]) -> str | None:
        if self.on_tokens is not None:
            self.on_tokens(len(out))
        if self.soft_tokens is None:
            return None
        # only the newest token can confirm a new end: count ends so far
        text = self.detokenize(out)
        ends = sentence_ends(text)
        new = len(ends) > self._ends
        self._ends = len(ends)
        if new and first_repeat(text, ends) is not None:
            return "repeat"
        return "sentence" if new and len(out) >= self.soft_tokens else None


def tokens_shown(detokenize: Callable[[Sequence[int]], str], tokens: Sequence[int], shown: str) -> int:
    """How many of `tokens` the shown summary (complete_summary's cut) is
    made of: the longest prefix whose text is no longer than `shown`."""
    k = len(tokens)
    while k > 0 and len(detokenize(tokens[:k]).strip()) > len(shown):
        k -= 1
    return k
