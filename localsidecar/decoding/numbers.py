"""Numbers from the document: a summary writes only digit strings that the
document has as numbers (`--numbers document`, the default).

A number is a maximal run `\\d+(?:[.,:/]\\d+)*` ("1,000", "3.5", "14:30",
"2024"; "95th" holds "95"). The rule reads the summary text as it grows:

- every numeric run a token creates or extends is a prefix of a document
  number (a run followed by one separator, "1,", counts as open: its number
  or the run with the separator must lead to a document number);
- a run that ends (the next character is neither a digit nor a separator
  followed by a digit) is a whole document number; a separator right after
  a complete number is fine ("costs 20." ends a sentence).

Invariant: the state after any allowed token is a prefix of a document
number (or no open run), and from such a state a single digit or separator
token always continues it, so the constraint never leaves the model without
an allowed token. A document without numbers allows no digit at all.

Everything here speaks strings, token ids and numpy arrays: the model's
pieces come from backend.Model.pieces (one decoded string per token id).
Both models choose under the rule, so speculative output stays equal to
constrained target-only output (docs/DESIGN.md, Numbers from the document).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Sequence

import numpy as np

DOCUMENT, FREE = "document", "free"
NUMBERS_MODES = (DOCUMENT, FREE)
NUMBER = re.compile(r"\d+(?:[.,:/]\d+)*")
SEPARATORS = frozenset(".,:/")

# The summary's open numeric run: None (none open) or its text, ending in a
# digit or in one separator ("1,").
Run = str | None


def document_numbers(text: str) -> frozenset[str]:
    """The numbers of `text` as strings."""
    return frozenset(NUMBER.findall(text))


def numbers_in(text: str) -> list[str]:
    """Every number of `text`, in order (a summary's, to check against its document)."""
    return NUMBER.findall(text)


class PieceTable:
    """A vocabulary's pieces and what the rule reads of them, computed once per model."""

    def __init__(self, pieces: Sequence[str]):
        self.pieces = list(pieces)
        self.n_vocab = len(self.pieces)
        self.has_digit = np.array([any(c.isdecimal() for c in p) for p in self.pieces], dtype=bool)
        starts_sep = np.array([p[:1] in SEPARATORS for p in self.pieces], dtype=bool)
        # whose verdict depends on more than "is the open run complete"
        self.digit_ids = np.flatnonzero(self.has_digit)
        self.run_ids = np.flatnonzero(self.has_digit | starts_sep)


_TABLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def piece_table(model) -> PieceTable:
    """The PieceTable of a backend.Model (anything with `pieces()`), cached per model object."""
    table = _TABLES.get(model)
    if table is None:
        table = _TABLES[model] = PieceTable(model.pieces())
    return table


class DocumentNumbers:
    """The constraint for one document over one vocabulary. State: the open
    run (Run) of the summary text so far; start from None."""

    def __init__(self, numbers: frozenset[str] | set[str], table: PieceTable):
        self.numbers = frozenset(numbers)
        self.table = table
        self._prefixes = {n[:i] for n in self.numbers for i in range(1, len(n) + 1)}
        self._masks: dict[Run, np.ndarray] = {}
        self._forbidden: dict[Run, np.ndarray] = {}  # ids the mask refuses, where they are few

    @classmethod
    def for_text(cls, text: str, table: PieceTable) -> DocumentNumbers:
        return cls(document_numbers(text), table)

    def complete(self, run: str) -> bool:
        """Whether the open run is a whole document number (a trailing separator aside)."""
        return self._complete(run)

    def _complete(self, run: str) -> bool:
        return (run[:-1] if run[-1] in SEPARATORS else run) in self.numbers

    def scan(self, run: Run, piece: str) -> tuple[bool, Run]:
        """(whether `piece` may follow the open run `run`, the run after it)."""
        ok = True
        for c in piece:
            if c.isdecimal():
                run = c if run is None else run + c
                ok = ok and run in self._prefixes
            elif run is None:
                continue
            elif c in SEPARATORS and run[-1] not in SEPARATORS:
                run += c
                ok = ok and (run[:-1] in self.numbers or run in self._prefixes)
            else:  # the run ends here ("1,," ends "1")
                ok = ok and self._complete(run)
                run = None
        return ok, run

    def advance(self, run: Run, token: int) -> Run:
        """The state after `token` (an empty piece, a control token, changes nothing)."""
        if run is None and not self.table.has_digit[token]:
            return None
        return self.scan(run, self.table.pieces[token])[1]

    def allowed(self, run: Run) -> np.ndarray:
        """Boolean mask over the vocabulary: the tokens that may follow `run`
        (cached per state; a token without a digit or a leading separator,
        or with an empty piece, ends the run: allowed iff it is complete)."""
        mask = self._masks.get(run)
        if mask is None:
            base = run is None or self._complete(run)
            mask = np.full(self.table.n_vocab, base, dtype=bool)
            ids = self.table.digit_ids if run is None else self.table.run_ids
            pieces = self.table.pieces
            mask[ids] = [self.scan(run, pieces[t])[0] for t in ids.tolist()]
            self._masks[run] = mask
            if base:
                self._forbidden[run] = np.flatnonzero(~mask)
        return mask

    def choose(self, logits: np.ndarray, run: Run) -> int:
        """The greedy choice under the rule (ties: the lowest id, as np.argmax).
        The common case, no run open and no digit in the argmax, is one lookup.

        No forced numbers: where the argmax is a refused digit and no run is
        open (or the open one is already a whole number), the choice is the
        best token without a digit, not another document number in its place
        (a summary that wanted "a 20-ton ship" gets "a  large cargo ship", the
        space token before the refused digit kept, not "a 3, 40,000-pound
        ship"). Only an unfinished run is continued with digits."""
        top = int(np.argmax(logits))
        n, has_digit = logits.shape[0], self.table.has_digit
        if run is None and not has_digit[top]:
            return top
        mask = self.allowed(run)[:n]
        if mask[top]:
            return top
        if has_digit[top] and (run is None or self._complete(run)):
            mask = mask & ~has_digit[:n]
        return int(np.argmax(np.where(mask, logits, -np.inf)))

    def masked(self, logits: np.ndarray, run: Run) -> np.ndarray:
        """`logits` with the forbidden tokens at -inf (a new array), for a softmax."""
        mask = self.allowed(run)[: logits.shape[0]]
        forbidden = self._forbidden.get(run)
        if forbidden is None:
            return np.where(mask, logits, np.float32(-np.inf)).astype(np.float32, copy=False)
        out = np.array(logits, dtype=np.float32)  # a copy; the few refused ids set apart
        out[forbidden[forbidden < out.shape[0]]] = -np.inf
        return out


# The three places that choose a token (target_only, Drafter.propose,
# SpeculativeDecoder._accept) call these, so a free-numbers run (None) and a
# constrained one take one rule.
def best_token(numbers: DocumentNumbers | None, logits: np.ndarray, run: Run) -> int:
    """The greedy choice: argmax, or DocumentNumbers.choose under the rule."""
    return int(np.argmax(logits)) if numbers is None else numbers.choose(logits, run)


def allowed_logits(numbers: DocumentNumbers | None, logits: np.ndarray, run: Run) -> np.ndarray:
    """The logits to sample from: as they are, or DocumentNumbers.masked."""
    return logits if numbers is None else numbers.masked(logits, run)


def run_after(numbers: DocumentNumbers | None, run: Run, token: int) -> Run:
    """The numbers state after `token` (always None for free numbers)."""
    return None if numbers is None else numbers.advance(run, token)
