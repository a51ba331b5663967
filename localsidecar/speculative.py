"""The speculative loop: draft, verify, accept, roll back.

Invariant (as in llama.cpp's speculative-simple): between rounds both caches
hold exactly the committed tokens except the last one, `last`, which the next
round decodes first ("keep the last token separate"). The draft may lag
further behind (it never decodes its final proposal); it catches up in one
batch at the start of the next round.

Acceptance (Leviathan et al. 2023): at temperature 0 accept the longest prefix
of the draft that equals the target's argmax; above 0 accept d_i with
probability min(1, p(d_i)/q(d_i)) and on rejection sample from
norm(max(0, p - q)), which leaves the output distributed exactly as p.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from localsidecar.backend import Context
from localsidecar.distributions import overlap, softmax
from localsidecar.layouts import DraftLayout, Seq


@dataclass
class SpecStats:
    """Counters of one speculative summary.

    n_drafted: draft tokens proposed; n_accept: of those, accepted (the bonus
    token the target adds each round is not counted); rounds: verify batches
    (= target calls in the loop); alpha_sum / alpha_n: sum and count of the
    online overlap sum_v min(p, q) over drafted positions.
    """

    n_drafted: int = 0
    n_accept: int = 0
    rounds: int = 0
    alpha_sum: float = 0.0
    alpha_n: int = 0
    draft_s: float = 0.0
    verify_s: float = 0.0

    @property
    def alpha(self) -> float | None:
        return self.alpha_sum / self.alpha_n if self.alpha_n else None

    @property
    def acceptance_rate(self) -> float | None:
        return self.n_accept / self.n_drafted if self.n_drafted else None


@dataclass
class Generation:
    """Output of one summary generation (speculative or target-only).

    tokens: the summary's token ids (a final end-of-generation token excluded);
    stopped: "eog", "max_tokens" or the reason a TokenHook gave; target_argmax: for each emitted token, the
    argmax of the target logits it was chosen from (greedy: equal to tokens);
    prefill_s / gen_s: seconds for the prompt and for the generation loop.
    """

    tokens: list[int]
    stopped: str
    stats: SpecStats
    target_argmax: list[int] = field(default_factory=list)
    prefill_s: float = 0.0
    gen_s: float = 0.0


# The best of --draft-max 1..8 x --p-min 0..0.9 measured with scripts/bench_run.py
# on the embedded pair (README, Performance): each drafted token costs the draft
# 0.7 of a target token there, so the shortest draft wins. A pair with a much
# cheaper draft wants more; LOCALSIDECAR_DRAFT_MAX sets a user's own best.
DEFAULT_DRAFT_MAX = 1


# Called after each emitted summary token with the summary so far; a string
# return value stops the summary there and becomes Generation.stopped
# (the engine's sentence stop and progress: localsidecar.sentences.SentenceStop).
TokenHook = Callable[[list[int]], "str | None"]


@dataclass
class SpecConfig:
    draft_max: int = DEFAULT_DRAFT_MAX
    p_min: float = 0.0
    temperature: float = 0.0
    seed: int = 0
    max_tokens: int = 128

    @property
    def cells_after_prompt(self) -> int:
        """KV cells a context takes after bare[:-1]: the last prompt token, the
        summary and one draft beyond it (layouts.prefill_draft's `reserve`)."""
        return 1 + self.max_tokens + self.draft_max


class SpeculativeDecoder:
    """Runs the loop over a target context (sequence 0) and a draft context
    whose layout was prepared by layouts.prefill_draft."""

    def __init__(self, target: Context, draft: Context, cfg: SpecConfig):
        self.t = target
        self.d = draft
        self.cfg = cfg
        self.rng = np.random.default_rng(cfg.seed)
        self.n_common = min(target.n_vocab, draft.n_vocab)

    # --- steps -----------------------------------------------------------------

    def _draft(self, committed: list[int], lay: DraftLayout) -> tuple[list[int], list[np.ndarray], int]:
        """Catch the draft up to `committed`, then propose up to draft_max tokens.
        Returns the proposals, the draft distributions q they came from, and
        how many proposals the draft cache now holds (all but a final one)."""
        cfg = self.cfg
        c = len(committed)
        self.d.decode_tokens(committed[lay.n_cached :], lay.n_cached + lay.shift, (Seq.SUMMARY,), "last")
        lay.n_cached = c
        tokens: list[int] = []
        qs: list[np.ndarray] = []
        n_decoded = 0
        for i in range(cfg.draft_max):
            q = softmax(self.d.logits(-1)[: self.n_common], cfg.temperature or 1.0)
            top = int(q.argmax())
            if q[top] < cfg.p_min:
                break
            tok = top if cfg.temperature == 0 else int(self.rng.choice(q.shape[0], p=q))
            tokens.append(tok)
            qs.append(q)
            if i + 1 < cfg.draft_max:
                self.d.decode_tokens([tok], c + i + lay.shift, (Seq.SUMMARY,), "last")
                n_decoded += 1
        return tokens, qs, n_decoded

    def _verify(self, last: int, pos: int, drafted: list[int]) -> list[np.ndarray]:
        """One target batch [last, d1..dk] with logits for every token (copied)."""
        self.t.decode_plan((tok, pos + i, (Seq.SUMMARY,), True) for i, tok in enumerate([last] + drafted))
        return [np.array(self.t.logits(i)) for i in range(len(drafted) + 1)]

    def _accept(self, drafted: list[int], qs: list[np.ndarray], logits: list[np.ndarray]) -> tuple[int, int, list[np.ndarray]]:
        """Returns (accepted count j, the target's next token, target dists p)."""
        temp = self.cfg.temperature
        ps = [softmax(l[: self.n_common], temp or 1.0) for l in logits]
        if temp == 0:
            j = 0
            while j < len(drafted) and int(np.argmax(logits[j])) == drafted[j]:
                j += 1
            return j, int(np.argmax(logits[j])), ps
        for j, (tok, q) in enumerate(zip(drafted, qs)):
            p = ps[j]
            if self.rng.random() < min(1.0, float(p[tok]) / float(q[tok])):
                continue
            resid = np.maximum(p - q, 0.0)
            total = resid.sum()
            nxt = int(self.rng.choice(resid.shape[0], p=resid / total)) if total > 0 else int(p.argmax())
            return j, nxt, ps
        j = len(drafted)
        return j, int(self.rng.choice(ps[j].shape[0], p=ps[j])), ps

    # --- loop ------------------------------------------------------------------

    def generate(self, bare: list[int], lay: DraftLayout, is_eog, on_token: TokenHook | None = None) -> Generation:
        """Speculative summary of `bare` (the target's prompt). The target
        cache must hold bare[:-1] and the draft the layout `lay`."""
        cfg = self.cfg
        stats = SpecStats()
        committed = list(bare)
        out: list[int] = []
        argmax_out: list[int] = []
        stopped = "max_tokens"
        t1 = time.perf_counter()
        try:
            while len(out) < cfg.max_tokens:
                c = len(committed)
                ta = time.perf_counter()
                drafted, qs, n_decoded = self._draft(committed, lay)
                tb = time.perf_counter()
                logits = self._verify(committed[-1], c - 1, drafted)
                j, nxt, ps = self._accept(drafted, qs, logits)
                stats.draft_s += tb - ta
                stats.verify_s += time.perf_counter() - tb
                stats.rounds += 1
                stats.n_drafted += len(drafted)
                stats.n_accept += j
                for i, q in enumerate(qs):
                    stats.alpha_sum += overlap(ps[i], q)
                    stats.alpha_n += 1
                emitted = drafted[:j] + [nxt]
                for i, tok in enumerate(emitted):
                    if is_eog(tok):
                        stopped = "eog"
                        break
                    if len(out) == cfg.max_tokens:
                        break
                    out.append(tok)
                    argmax_out.append(int(np.argmax(logits[i])))
                    if on_token is not None and (reason := on_token(out)):
                        stopped = reason
                        break
                committed = list(bare) + out
                # roll back: the target keeps committed[:-1]; the draft keeps the
                # accepted proposals it decoded, never the last committed token
                self.t.seq_rm(0, len(committed) - 1, -1)
                lay.n_cached = min(c + min(j, n_decoded), len(committed) - 1)
                self.d.seq_rm(Seq.SUMMARY, lay.n_cached + lay.shift, -1)
                if stopped != "max_tokens":
                    break
        finally:
            gen_s = time.perf_counter() - t1
        return Generation(out, stopped, stats, argmax_out, 0.0, gen_s)


def target_only(target: Context, bare: list[int], cfg: SpecConfig, is_eog, on_token: TokenHook | None = None) -> Generation:
    """Plain decoding with the target alone, one token per call (greedy at
    temperature 0, else sampling from softmax(logits / T) with cfg.seed).
    The target cache must hold bare[:-1]."""
    rng = np.random.default_rng(cfg.seed)
    out: list[int] = []
    stopped = "max_tokens"
    pos, last = len(bare) - 1, bare[-1]
    stats = SpecStats()
    t1 = time.perf_counter()
    while len(out) < cfg.max_tokens:
        target.decode_tokens([last], pos, (Seq.SUMMARY,), "last")
        stats.rounds += 1
        logits = target.logits(-1)
        if cfg.temperature == 0:
            tok = int(np.argmax(logits))
        else:
            p = softmax(logits, cfg.temperature)
            tok = int(rng.choice(p.shape[0], p=p))
        if is_eog(tok):
            stopped = "eog"
            break
        out.append(tok)
        pos, last = pos + 1, tok
        if on_token is not None and (reason := on_token(out)):
            stopped = reason
            break
    gen_s = time.perf_counter() - t1
    return Generation(out, stopped, stats, list(out) if cfg.temperature == 0 else [], 0.0, gen_s)
