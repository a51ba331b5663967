"""Names from the document: a free summary writes a capitalised word in the middle of a
sentence only when the document has that word (`run --names document`, the default).

A word is a maximal run of letters ("Marley's" holds "Marley", "A380" holds "A",
"O'Brien" holds "O" and "Brien"); the document's words are its letter runs that start
with a capital, wherever they stand. The rule reads the summary text as it grows:

- the first word of the summary, and the first word after '.', '!', '?', ':' or a line break
  (spaces, quotes and brackets between them aside), is free: a sentence may open with
  any word;
- any other word that starts with a capital letter is open while its letters come: every
  prefix of it must be a prefix of a document word, and where it ends (a character that
  is not a letter follows) it must be a document word.

Invariant: from any state the rule allows, some token continues it (a one-letter token
toward a document word, or a token without letters once the open word is whole), so
the model is never left without a choice. No forced names: where the model's best token
is refused because it starts a capitalised word, the choice is its best token that
starts none, not another document name in its place (as decoding/numbers.py does for
digits). Both models choose under the rule (DocumentText joins it with the numbers
rule), so speculative output stays equal to constrained target-only output
(docs/DESIGN.md, Names from the document). The rule constrains spellings, not use: a
document's name can still be put in the wrong sentence, which the support check
(summary/support.py) looks for.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence

import numpy as np

from localsidecar.decoding.numbers import DocumentNumbers, PieceTable, Run

_ENDS = frozenset(".!?:\n")
_NEUTRAL = frozenset(" \t\"'“”‘’([*-—–")  # between a sentence end and the next word

# The summary's state: (the next word starts a sentence, the last character was a
# letter, the letters of the open capitalised word or None).
NameState = tuple[bool, bool, str | None]
START: NameState = (True, False, None)


class NameTable:
    """What the rule reads of a vocabulary's pieces, computed once per model."""

    def __init__(self, pieces: Sequence[str]):
        self.pieces = list(pieces)
        self.n_vocab = len(self.pieces)
        self.has_upper = np.array([any(c.isupper() for c in p) for p in self.pieces], dtype=bool)
        self.starts_alpha = np.array([p[:1].isalpha() for p in self.pieces], dtype=bool)
        # a token that starts a capitalised word (after leading spaces, quotes or brackets)
        self.starts_capital = np.array([_opens_capital(p) for p in self.pieces], dtype=bool)
        self.upper_ids = np.flatnonzero(self.has_upper)
        # a piece that goes on with letters: its leading letters, and whether a capital follows them
        self.alpha_ids = np.flatnonzero(self.starts_alpha)
        self.lead: dict[int, tuple[str, bool, bool]] = {}  # id -> (letters, more after, a capital after)
        for t in self.alpha_ids.tolist():
            p = self.pieces[t]
            k = next((i for i, c in enumerate(p) if not c.isalpha()), len(p))
            self.lead[t] = (p[:k], k < len(p), any(c.isupper() for c in p[k:]))
        self.other_upper_ids = np.flatnonzero(self.has_upper & ~self.starts_alpha)


def _opens_capital(piece: str) -> bool:
    word = piece.lstrip(" \t\"'“‘([")
    return word[:1].isupper()


_TABLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def name_table(model) -> NameTable:
    """The NameTable of a backend.Model (anything with `pieces()`), cached per model object."""
    table = _TABLES.get(model)
    if table is None:
        table = _TABLES[model] = NameTable(model.pieces())
    return table


def capitalised_words(text: str) -> frozenset[str]:
    """The letter runs of `text` that start with a capital."""
    out, word = set(), []
    for c in text + " ":
        if c.isalpha():
            word.append(c)
            continue
        if word and word[0].isupper():
            out.add("".join(word))
        word = []
    return frozenset(out)


class DocumentNames:
    """The rule for one document over one vocabulary; state NameState, from START."""

    def __init__(self, words: frozenset[str] | set[str], table: NameTable):
        self.words = frozenset(words)
        self.table = table
        self._prefixes = {w[:i] for w in self.words for i in range(1, len(w) + 1)}
        self._masks: dict[NameState, np.ndarray] = {}

    @classmethod
    def for_text(cls, text: str, table: NameTable) -> DocumentNames:
        return cls(capitalised_words(text), table)

    def scan(self, state: NameState, piece: str) -> tuple[bool, NameState]:
        """(whether `piece` may follow `state`, the state after it)."""
        free, in_word, open_ = state
        ok = bool(piece) or open_ is None or open_ in self.words  # an empty piece (the end) ends the word
        for c in piece:
            if c.isalpha():
                if in_word:
                    if open_ is not None:
                        open_ += c
                        ok = ok and open_ in self._prefixes
                else:  # a word starts
                    open_ = c if c.isupper() and not free else None
                    ok = ok and (open_ is None or open_ in self._prefixes)
                    free = False
                in_word = True
                continue
            if open_ is not None:
                ok = ok and open_ in self.words
                open_ = None
            in_word = False
            if c in _ENDS:
                free = True
            elif c not in _NEUTRAL:
                free = False  # a digit, a comma: mid-sentence
        return ok, (free, in_word, open_)

    def advance(self, state: NameState, token: int) -> NameState:
        return self.scan(state, self.table.pieces[token])[1]

    def allows(self, state: NameState, token: int) -> bool:
        return self.scan(state, self.table.pieces[token])[0]

    def allowed(self, state: NameState) -> np.ndarray:
        """Boolean mask over the vocabulary (cached per state). Without an open word only
        a piece with a capital letter can be refused; with one, a piece that goes on with
        letters must keep it a prefix of a document word (or end it whole), and any other
        piece ends it: allowed iff it is whole (and what follows in the piece passes)."""
        mask = self._masks.get(state)
        if mask is not None:
            return mask
        table, open_ = self.table, state[2]
        if open_ is None:
            mask = np.ones(table.n_vocab, dtype=bool)
            mask[table.upper_ids] = [self.scan(state, table.pieces[t])[0] for t in table.upper_ids.tolist()]
        else:
            whole = open_ in self.words
            mask = np.full(table.n_vocab, whole, dtype=bool)
            if whole:
                ids = table.other_upper_ids.tolist()
                mask[ids] = [self.scan(state, table.pieces[t])[0] for t in ids]
            values = []
            for t in table.alpha_ids.tolist():
                letters, more, capital = table.lead[t]
                word = open_ + letters
                if not more:
                    values.append(word in self._prefixes)
                elif capital:
                    values.append(self.scan(state, table.pieces[t])[0])
                else:
                    values.append(word in self.words)
            mask[table.alpha_ids] = values
        self._masks[state] = mask
        return mask


# The state of DocumentText: (the numbers rule's Run, the names rule's NameState).
TextState = tuple[Run, NameState] | None


class DocumentText:
    """The numbers rule and the names rule together, with DocumentNumbers' interface
    (choose, masked, advance), so the decoding loops take either. State: TextState,
    None at the start."""

    def __init__(self, numbers: DocumentNumbers | None, names: DocumentNames):
        self.numbers = numbers
        self.names = names

    @staticmethod
    def _split(state: TextState) -> tuple[Run, NameState]:
        return (None, START) if state is None else state

    def advance(self, state: TextState, token: int) -> TextState:
        run, name = self._split(state)
        if self.numbers is not None:
            run = self.numbers.advance(run, token)
        return run, self.names.advance(name, token)

    def allowed(self, state: TextState) -> np.ndarray:
        run, name = self._split(state)
        mask = self.names.allowed(name)
        return mask if self.numbers is None else mask & self.numbers.allowed(run)

    def choose(self, logits: np.ndarray, state: TextState) -> int:
        """The greedy choice under both rules (ties: the lowest id); no forced numbers
        (DocumentNumbers.choose) and no forced names (the module docstring)."""
        run, name = self._split(state)
        top = int(np.argmax(logits))
        num_ok = self.numbers is None or self.numbers.choose(logits, run) == top
        name_ok = self.names.allows(name, top)
        if num_ok and name_ok:
            return top
        n = logits.shape[0]
        mask = self.allowed(state)[:n]
        if not num_ok:
            has_digit = self.numbers.table.has_digit[:n]
            if has_digit[top] and (run is None or self.numbers.complete(run)):
                mask = mask & ~has_digit
        if not name_ok and name[2] is None and self.names.table.starts_capital[top]:
            mask = mask & ~self.names.table.starts_capital[:n]
        if not mask.any():  # the exclusions above leave nothing: the rules alone decide
            mask = self.allowed(state)[:n]
        return int(np.argmax(np.where(mask, logits, -np.inf)))

    def masked(self, logits: np.ndarray, state: TextState) -> np.ndarray:
        mask = self.allowed(state)[: logits.shape[0]]
        return np.where(mask, logits, np.float32(-np.inf)).astype(np.float32, copy=False)


def document_text(text: str, numbers: DocumentNumbers | None, model) -> DocumentText:
    """The names rule of document `text` for `model`, joined with `numbers` (None: free numbers)."""
    return DocumentText(numbers, DocumentNames.for_text(text, name_table(model)))


__all__ = [
    "START",
    "DocumentNames",
    "DocumentText",
    "NameTable",
    "PieceTable",
    "capitalised_words",
    "document_text",
    "name_table",
]
