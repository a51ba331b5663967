"""Scoring candidate continuations of a context's sequence 0 in one decode.

At a choice point sequence 0 holds the committed tokens (prompt and the sentences chosen
so far), except `pending` ones not decoded yet. Every candidate gets a sequence of its own
that shares sequence 0's cells (`seq_cp` in a unified cache adds an id, no copy: docs/
DESIGN.md, Unified cache shares cells); one batch then decodes the pending tokens in
sequence 0 and every candidate's sequence (a cell with several ids is seen by all of them)
and each candidate's tokens in its own sequence, logits for every candidate token. A
candidate's score reads the log-probability of each of its tokens: the first from the row
of the last committed token (`head`), token k + 1 from the row of token k. Candidates are
packed into batches of at most n_batch tokens and n_seq_max - first_seq sequences.

Without flash attention (what every backend.Context uses) a sequence's rows in a batch
mixing several sequences are bit-identical to the rows of that sequence decoded alone in
the same cells (docs/DESIGN.md, Mixed-sequence batches; tests/test_extract.py checks the
scores). Whatever the batches, the target takes the same ones in target-only and
speculative runs, so its choices are the same.

After a choice the winner's cells become sequence 0's when its batch was the last one (no
decode), else its tokens are pending: decoded with the next choice's batch. Every other
candidate sequence is removed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from localsidecar.backend import Context

# Largest logits block one batch may ask for (floats): llama.cpp holds every requested row
# (n_vocab floats each); 2**25 floats is 128 MiB (682 rows of SmolLM2's vocabulary, 128 of Gemma 3's).
MAX_LOGIT_FLOATS = 1 << 25


def batch_cap(n_batch: int, n_vocab: int) -> int:
    """Most candidate tokens one scoring batch decodes (and so holds in cells at once:
    a batch's candidates are removed before the next): n_batch, and rows of logits
    under MAX_LOGIT_FLOATS."""
    return min(n_batch, max(2, MAX_LOGIT_FLOATS // n_vocab))


def log_probs_of(rows: np.ndarray, tokens: Sequence[int]) -> np.ndarray:
    """log softmax(rows[i])[tokens[i]] for every row (float64)."""
    x = np.asarray(rows, dtype=np.float32)
    top = x.max(axis=1)
    lse = top.astype(np.float64) + np.log(np.exp(x - top[:, None]).sum(axis=1, dtype=np.float64))
    picked = x[np.arange(x.shape[0]), np.asarray(tokens, dtype=np.int64)].astype(np.float64)
    return picked - lse


def _log_softmax(row: np.ndarray) -> np.ndarray:
    x = np.asarray(row, dtype=np.float64)
    top = x.max()
    return x - top - np.log(np.exp(x - top).sum())


@dataclass
class Scored:
    """Per-token log-probabilities of each candidate's scored tokens (a list per candidate)."""

    log_probs: list[np.ndarray]
    decodes: int
    scored: list[int]  # tokens decoded of each candidate (what was asked, at most a batch's worth)


class Scorer:
    """The choice points of one context: `score` the candidates, `commit` the one chosen.

    State: `committed`, the tokens that follow position `start` of sequence 0 (at first the
    prompt's last token), of which the cache holds those before position `pos`; the rest
    are pending, decoded by the next score. first_seq: the lowest sequence id a candidate
    may take (ids below it belong to the caller's layout and are never touched)."""

    def __init__(self, ctx: Context, start: int, first: Sequence[int], first_seq: int = 1):
        if not first:
            raise ValueError("the scorer starts with at least one token to decode (the prompt's last)")
        if first_seq >= ctx.n_seq_max - 1:
            raise ValueError(f"a context of {ctx.n_seq_max} sequences has too few for candidates")
        self.ctx = ctx
        self.start = self.pos = start
        self.committed = list(first)
        self.first_seq = first_seq
        self.head: np.ndarray | None = None  # log-probs after the last committed token, once decoded
        self.decodes = 0
        self._last_batch: list[int] = []  # candidates of the last batch, by sequence order
        self._after: dict[int, np.ndarray] = {}  # candidate -> its row after its last decoded token

    @property
    def end(self) -> int:
        """The position the next committed token takes."""
        return self.start + len(self.committed)

    @property
    def pending(self) -> list[int]:
        return self.committed[self.pos - self.start :]

    @property
    def n_seqs(self) -> int:
        return self.ctx.n_seq_max - self.first_seq

    def _cap(self) -> int:
        """Most tokens of one scoring batch: n_batch, and rows of logits under MAX_LOGIT_FLOATS."""
        return batch_cap(self.ctx.n_batch, self.ctx.n_vocab)

    def _batches(self, lengths: Sequence[int]) -> list[list[int]]:
        """Candidates in order, packed: pending + tokens <= n_batch, rows <= MAX_LOGIT_FLOATS."""
        cap = self._cap()
        lead = len(self.pending)
        out: list[list[int]] = []
        used = 0
        for i, n in enumerate(lengths):
            if out and used + n <= cap and len(out[-1]) < self.n_seqs:
                out[-1].append(i)
                used += n
                continue
            used = (0 if out else lead) + n
            if used > cap:
                raise ValueError(f"a candidate of {n} tokens does not fit a batch of {cap}")
            out.append([i])
        return out

    def score(self, cands: Sequence[Sequence[int]], scored: Sequence[int]) -> Scored:
        """Decode the first scored[i] tokens of each candidate i after the committed tokens
        and return their log-probabilities. Afterwards sequence 0 holds every committed
        token, and the last batch's candidates stay in place for commit."""
        ctx = self.ctx
        self._drop_candidates()
        scored = [min(n, self._cap() - 1) for n in scored]
        if not self.pending and self.head is None:
            self._step_back()
        if len(self.pending) > 1 and len(self.pending) + max(scored, default=0) > self._cap():
            # a long pending run (a long chosen sentence) first, alone: the batch keeps its last token
            ctx.decode_tokens(self.pending[:-1], self.pos, (0,), "none")
            self.decodes += -(-(len(self.pending) - 1) // ctx.n_batch)
            self.pos = self.end - 1
        lps: list[np.ndarray] = [np.zeros(0)] * len(cands)
        decodes = 0
        batches = self._batches(scored)
        for b, batch in enumerate(batches):
            seqs = [self.first_seq + k for k in range(len(batch))]
            for s in seqs:
                ctx.seq_cp(0, s, -1, -1)
            pending = self.pending
            items: list[tuple[int, int, tuple[int, ...], bool]] = [
                (tok, self.pos + k, (0, *seqs), k == len(pending) - 1) for k, tok in enumerate(pending)
            ]
            start = self.pos + len(pending)
            rows_of: list[tuple[int, int, int]] = []  # candidate, first row, row count
            row = 1 if pending else 0
            for s, i in zip(seqs, batch):
                toks = cands[i][: scored[i]]
                rows_of.append((i, row, len(toks)))
                items += [(tok, start + k, (s,), True) for k, tok in enumerate(toks)]
                row += len(toks)
            ctx.decode_plan(items)
            decodes += 1
            rows = ctx.logits_rows()
            if pending:
                self.head = _log_softmax(rows[0])
                self.pos = start
            for i, r0, n in rows_of:
                toks = cands[i][: scored[i]]
                rest = log_probs_of(rows[r0 : r0 + n - 1], toks[1:]) if n > 1 else np.zeros(0)
                lps[i] = np.concatenate([[float(self.head[toks[0]])], rest])
            self._last_batch = list(batch)
            self._after = {i: rows[r0 + n - 1] for i, r0, n in rows_of}  # views: valid until the next decode
            if b < len(batches) - 1:
                self._drop_candidates()
        self.decodes += decodes
        return Scored(lps, decodes, scored)

    def _drop_candidates(self) -> None:
        for k in range(len(self._last_batch)):
            self.ctx.seq_rm(self.first_seq + k, 0, -1)
        self._last_batch, self._after = [], {}

    def _step_back(self) -> None:
        """No pending token and no head: the last cached token becomes pending again."""
        self.pos -= 1
        self.ctx.seq_rm(0, self.pos, -1)

    def commit(self, chosen: int | None, tokens: Sequence[int], scored: int = 0) -> None:
        """`tokens` follow the committed ones: those of candidate `chosen` of the last
        score (its first `scored` tokens decoded there: their cells become sequence 0's
        when they are still in place), or, with None, tokens chosen elsewhere (pending)."""
        if chosen is not None and chosen in self._last_batch and self.pos == self.end:
            seq = self.first_seq + self._last_batch.index(chosen)
            self.ctx.seq_cp(seq, 0, self.pos, -1)
            after = self._after[chosen]
            self.pos += scored
            self.head = _log_softmax(after) if scored == len(tokens) else None
        self.committed += list(tokens)
        self._drop_candidates()

    def rewind(self, end: int) -> None:
        """Forget the committed tokens from position `end` on (a draft's rejected choices)."""
        if end < self.start + 1:
            raise ValueError("the scorer keeps at least its first token")
        self._drop_candidates()
        del self.committed[end - self.start :]
        if self.pos > end:
            self.ctx.seq_rm(0, end, -1)
            self.pos = end
            self.head = None

    def finish(self) -> None:
        """Only sequence 0 is left (the committed tokens before `pos`)."""
        self._drop_candidates()
