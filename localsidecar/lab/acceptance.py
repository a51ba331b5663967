"""Teacher-forced acceptance rate α for every draft condition.

Per document: the canonical summary S is the target's greedy summary of the
bare prompt (token ids, cached in a summaries file); the target's next-token
distributions p along S come from one batch pass; the draft's q along the
same tokens is read once per condition; α_t = Σ_v min(p_v, q_v) over the
common vocabulary, in float32 and bounded row blocks. Position t is the
distribution that predicts S[t] (inputs [T[-1]] + S[:-1]), t = 0..|S|-1.

Draft cache plan (engine.d_ctx: two sequences, layouts.Seq SUMMARY and SIDECAR, kv_unified=True). llama.cpp's
CPU results depend on which KV cell indices the attended cells occupy, not
only on their positions: a 128-token summary decoded with the suffix cells
between prefix and summary (the deployment layout) moved logits by up to 1.2
against a fresh context, from about the 20th summary token on (docs/DESIGN.md,
Cell placement changes results). So every condition's tail occupies the SAME
cell indices:
  1. A (prefix) once, in {SUMMARY, SIDECAR}: cells [0, a).
  2. Suffix-free runs (masked at sweep lengths, then baseline) take turns in
     SUMMARY: T[:-1] and [T[-1]] + S[:-1] (logits on) fill cells [a, a + L);
     seq_rm(SUMMARY, a, -1) frees them for the next run. While baseline's tail
     still holds [a, a + L), N is decoded in {SIDECAR}: its cells land after the
     tail region, hidden from SUMMARY.
  3. rebased, masked, the alternative masked emulation and visible take turns
     in [a, a + L) the same way; visible borrows N's cells (seq_cp SIDECAR ->
     SUMMARY); positions come from the condition, never from cell indices.
Conditions then differ only in what they attend and at which positions, and
rebased reproduces baseline (and a fresh context) bit for bit. `rebased_inline`
(--checks) re-decodes N right after A, the naive layout, and measures that
cell-layout noise (layouts.prefill_draft reserves the summary's cells so the
speculative loop avoids it). Each tail is its own batch with the
segmentation of layouts.prefill_draft; putting several conditions in one
batch would need kv_unified=False (docs/DESIGN.md, Mixed-sequence batches)
and measured no faster on CPU.

Masked emulation (docs/DESIGN.md, Masked emulation): positions in a sequence
must be consecutive, so T[:-1] cannot be computed n positions after A while hidden from N. It is
decoded right after A and its cells are moved +n (seq_add); the summary is
then decoded at its true shifted positions. `masked_alt` (--checks) is the
other emulation (T computed after the visible suffix, suffix cells then
removed): an exact reference cannot be built through llama.cpp's API, so the
spread between the two is reported as the emulation's sensitivity.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

import numpy as np

from localsidecar.backend import Context
from localsidecar.decoding.context_fit import ContextNeed
from localsidecar.decoding.defaults import cells_after_prompt
from localsidecar.decoding.distributions import overlap_rows, probs_rows
from localsidecar.decoding.layouts import Mode, Seq, decode_rows, prefill_target
from localsidecar.decoding.prompts import PromptTokens
from localsidecar.decoding.speculative import SpecConfig
from localsidecar.errors import LocalsidecarError
from localsidecar.io.atomic import check_appendable, read_regular

CONDITIONS = tuple(
    m.value for m in (Mode.BASELINE, Mode.VISIBLE, Mode.MASKED, Mode.REBASED, Mode.DEFERRED)
)  # report order
MASKED_ALT = "masked_alt"
REBASED_INLINE = "rebased_inline"
CHECKS = (MASKED_ALT, REBASED_INLINE)
# deferred drafts the summary from exactly the baseline cache state (no suffix
# until the summary ends), so its α is the baseline's, not recomputed.
ALIASES = {"deferred": "baseline"}
EMULATION = {
    "masked": "tail-shift: T[:-1] decoded right after the prefix, its cells then moved +n with seq_add; "
    "the summary is decoded at its shifted positions (exact from there on)",
    MASKED_ALT: "suffix-removed: T[:-1] decoded after the visible suffix at its true positions, "
    "the suffix cells then removed (leaks the suffix into T's states)",
}
# the "masked_emulation" of acceptance's and sweep's --json documents
MASKED_EMULATION = {"method": "tail-shift", "description": EMULATION["masked"]}
LAYOUT = (
    "every condition's summary occupies the same KV cells; suffix cells lie after them "
    "(rebased_inline: between prefix and summary, the naive layout the speculative loop avoids)"
)
SUMMARY_CACHE_VERSION = 1


# --- canonical summaries ---------------------------------------------------------------


def file_identity(path: Path) -> dict:
    """Name, size and a hash of the first and last MiB: identifies a model file
    without reading gigabytes (a requantized file differs in its header)."""
    path = Path(path)
    size = path.stat().st_size
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read(1 << 20))
        f.seek(max(0, size - (1 << 20)))
        h.update(f.read(1 << 20))
    return {"name": path.name, "size": size, "sha256_ends": h.hexdigest()[:16]}


def summary_key(target_identity: dict, bare_ids: list[int], max_tokens: int) -> str:
    """The canonical summary depends only on the target file, the bare prompt
    (document after --max-chars, prompt wording, chat format) and max_tokens."""
    blob = json.dumps([SUMMARY_CACHE_VERSION, target_identity, bare_ids, max_tokens], separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


class SummaryStore:
    """Append-only JSONL of canonical summaries, one {"key", "id", "summary_ids",
    "stopped"} per line. Lines are looked up by key only, so one file can hold
    summaries of any documents, prompts and targets; unreadable lines (also
    ids that are not non-negative integers) are ignored and counted in
    `bad_lines`. Whether ids fit the target's vocabulary and --max-tokens is
    known only at use: Lab.prepare refuses such a line naming `where(key)`."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self._ids: dict[str, list[int]] = {}
        self._lines: dict[str, int] = {}
        self.bad_lines = 0
        data = read_regular(self.path, "summaries file")
        # every summary generated now is appended: a file that cannot take it
        # fails here, before any model loads, not after the first summary
        check_appendable(self.path, "summaries file")
        self._ends_open = bool(data) and not data.endswith(b"\n")  # the next line must start on its own
        text = (data or b"").decode("utf-8", errors="replace")
        for lineno, line in enumerate(text.splitlines(), start=1):
            try:
                rec = json.loads(line)
                ids = rec["summary_ids"]
                if (
                    not isinstance(rec["key"], str)
                    or not isinstance(ids, list)
                    or not all(type(t) is int and t >= 0 for t in ids)
                ):
                    raise ValueError
                self._ids[rec["key"]] = ids
                self._lines[rec["key"]] = lineno
            except (ValueError, KeyError, TypeError, RecursionError):
                self.bad_lines += 1 if line.strip() else 0

    def get(self, key: str) -> list[int] | None:
        return self._ids.get(key)

    def snapshot(self) -> dict[str, list[int]]:
        """Every key's summary ids (a copy: what worker processes read)."""
        return dict(self._ids)

    def origins(self) -> dict[str, str]:
        """Key -> "FILE:LINE" of the line it was read from."""
        return {k: f"{self.path}:{n}" for k, n in self._lines.items()}

    def where(self, key: str) -> str | None:
        return f"{self.path}:{self._lines[key]}" if key in self._lines else None

    def put(self, key: str, doc_id: str, ids: list[int], stopped: str) -> None:
        """Append one line (one write, O_APPEND); after a last line without its
        newline (an editor's, a kill's) a newline first, so neither is lost."""
        line = json.dumps({"key": key, "id": doc_id, "summary_ids": ids, "stopped": stopped}) + "\n"
        data = ("\n" if self._ends_open else "") + line
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o666)
            try:
                os.write(fd, data.encode("utf-8"))
            finally:
                os.close(fd)
        except OSError as exc:
            raise LocalsidecarError(f"cannot write summaries file {self.path}: {exc.strerror}") from None
        self._ends_open = False
        self._ids[key] = ids


# --- per-document evaluation ------------------------------------------------------------


def with_suffix_length(p: PromptTokens, n: int | None) -> PromptTokens:
    """The prompt with its suffix cut or cyclically repeated to exactly n tokens."""
    if n is None or n == len(p.suffix):
        return p
    if n > 0 and not p.suffix:
        raise LocalsidecarError("--n needs a non-empty suffix to cut or repeat")
    reps = -(-n // max(1, len(p.suffix)))
    return replace(p, suffix=(p.suffix * reps)[:n])


@dataclass
class DocAlpha:
    """α_t per condition along one document's canonical summary (float32 arrays
    of length S; the same array object for an aliased condition)."""

    id: str
    prompt_tokens: int
    n: int
    summary_ids: list[int]
    alpha_t: dict[str, np.ndarray] = field(default_factory=dict)
    summary_cached: bool = False

    @property
    def S(self) -> int:
        return len(self.summary_ids)

    def alpha(self, cond: str) -> float | None:
        a = self.alpha_t[cond]
        return float(a.mean(dtype=np.float64)) if a.size else None


@dataclass
class Prepared:
    id: str
    prompt: PromptTokens
    summary: list[int]
    cached: bool


class Lab:
    """Teacher-forced α over an Engine's target and draft contexts."""

    def __init__(
        self, engine, *, max_tokens: int, n: int | None = None, summaries: SummaryStore | None = None
    ):
        if engine.d_ctx is None:
            raise LocalsidecarError("acceptance needs a draft model")
        self.engine = engine
        self.max_tokens = int(max_tokens)
        self.n = n
        self.summaries = summaries
        self.n_common = min(engine.target.n_vocab, engine.draft.n_vocab)
        self._target_id = file_identity(engine.target.path)

    # canonical summary
    def prepare(self, doc_id: str, text: str, on_step: Callable[[str], None] | None = None) -> Prepared:
        """Prompt tokens and canonical summary of one document (generated once).

        The draft cache holds at most A + N + T + S cells at a time (a sweep's
        hidden length costs positions, not cells), the target A + T + S.
        """
        p = with_suffix_length(self.engine.prompt(text), self.n)
        # after the prompt: its last token and the summary (nothing is drafted beyond it)
        self.engine.fit_context(
            ContextNeed.of(
                doc_id, p, summary_tokens=self.max_tokens, reserve=cells_after_prompt(self.max_tokens)
            )
        )
        key = summary_key(self._target_id, p.bare, self.max_tokens)
        ids = self.summaries.get(key) if self.summaries else None
        if ids is not None:
            self._check_cached(ids, self.summaries.where(key), doc_id)
            return Prepared(doc_id, p, list(ids), True)
        if on_step:
            on_step("the target's summary")
        gen = self.engine.generate_target_only(p, SpecConfig(max_tokens=self.max_tokens))
        if self.summaries:
            self.summaries.put(key, doc_id, gen.tokens, gen.stopped)
        return Prepared(doc_id, p, gen.tokens, False)

    def _check_cached(self, ids: list[int], where: str | None, doc_id: str) -> None:
        """A cached summary the target could have generated: at most --max-tokens
        ids, each in its vocabulary (a corrupt or hand-edited line otherwise
        reaches llama.cpp as an invalid batch)."""
        where = where or "the summaries file"
        n_vocab = self.engine.target.n_vocab
        fix = "delete that line or name another --summaries file"
        if len(ids) > self.max_tokens:
            raise LocalsidecarError(
                f"{where}: the cached summary of {doc_id} has {len(ids)} tokens, more than "
                f"--max-tokens {self.max_tokens}; {fix}"
            )
        bad = next((t for t in ids if not 0 <= t < n_vocab), None)
        if bad is not None:
            raise LocalsidecarError(
                f"{where}: the cached summary of {doc_id} holds token id {bad}, outside the "
                f"target's vocabulary (0 to {n_vocab - 1}); {fix}"
            )

    # target
    def target_probs(self, p: PromptTokens, summary: list[int]) -> np.ndarray:
        """(S, n_common) float32 target distributions along the summary, from
        the same segments as layouts.prefill_target: A, T[:-1], then the tail."""
        ctx = self.engine.t_ctx
        out = np.empty((len(summary), self.n_common), dtype=np.float32)
        prefill_target(ctx, p)
        tail = [p.tail[-1]] + summary[:-1]
        for s, rows in decode_rows(ctx, tail, len(p.bare) - 1, Seq.SUMMARY):
            probs_rows(rows, self.n_common, out[s : s + rows.shape[0]])
        return out

    # draft
    def evaluate(
        self,
        prep: Prepared,
        conditions,
        sweep_ns=(),
        checks: bool = False,
        observe=None,
        on_step: Callable[[str], None] | None = None,
    ) -> DocAlpha:
        """α_t for each requested condition, plus masked_key(k) for each sweep
        length k and the CHECKS conditions when `checks`, following the plan
        in the module docstring. observe(name, offset, logits_rows), if given,
        sees every draft logits view before its overlap is computed; on_step
        hears each pass's name before it runs (progress)."""
        p, summary = prep.prompt, prep.summary
        res = DocAlpha(prep.id, len(p.bare), len(p.suffix), summary, summary_cached=prep.cached)
        if not summary:
            extra = [masked_key(k) for k in sweep_ns] + (list(CHECKS) if checks else [])
            res.alpha_t = {c: np.empty(0, dtype=np.float32) for c in [*conditions, *extra]}
            return res
        want = set(conditions)
        _check_shiftable(p, want, sweep_ns, checks)
        step = on_step or (lambda name: None)
        step("the target's distributions")
        passes = _DraftPasses(
            self.engine.d_ctx, p, summary, self.target_probs(p, summary), self.n_common, observe, step
        )
        _run_plan(passes, want, sweep_ns, checks)
        res.alpha_t = passes.alpha_t
        for alias, src in ALIASES.items():
            if alias in want:
                res.alpha_t[alias] = res.alpha_t[src]
        if Mode.BASELINE not in want and not checks:  # the checks compare against baseline
            del res.alpha_t["baseline"]
        return res


def masked_key(n: int) -> str:
    """The name of masked α at hidden suffix length n (a sweep point)."""
    return f"masked@{n}"


def _check_shiftable(p: PromptTokens, want: set[str], sweep_ns, checks: bool) -> None:
    """A shifted summary needs T[:-1] to precede it: with nothing between the
    prefix and the summary, its positions would jump, and positions in a
    sequence must stay consecutive (docs/DESIGN.md, Consecutive positions)."""
    shifted = (p.suffix and (Mode.MASKED in want or checks)) or any(sweep_ns)
    if shifted and not p.tail[:-1]:
        raise LocalsidecarError("shifted conditions need a chat template tail of at least two tokens")


class _DraftPasses:
    """The draft's passes over one document's canonical summary, in the cell
    plan of the module docstring: A once in {SUMMARY, SIDECAR}; then per
    condition a layout of what precedes the tail, and the tail
    [T[-1]] + S[:-1] with logits, in SUMMARY's cells [a, a + L), which the
    condition frees again for the next one."""

    def __init__(
        self,
        ctx: Context,
        p: PromptTokens,
        summary: list[int],
        target_p: np.ndarray,
        n_common: int,
        observe,
        on_step: Callable[[str], None],
    ):
        self.ctx, self.p, self.on_step = ctx, p, on_step
        self.a, self.n, self.head = len(p.prefix), len(p.suffix), p.tail[:-1]
        self.tail = [p.tail[-1]] + summary[:-1]
        self.pos_tail = self.a + len(self.head)  # T[-1]'s position in the target
        self.target_p, self.n_common, self.observe = target_p, n_common, observe
        self.alpha_t: dict[str, np.ndarray] = {}

    def decode_prefix(self) -> None:
        self.ctx.clear()
        self.ctx.decode_tokens(self.p.prefix, 0, (Seq.SUMMARY, Seq.SIDECAR), "none")

    def run(self, name: str, shift: int, layout, keep=None) -> None:
        """α_t of condition `name`: `layout()` decodes what precedes the tail,
        the tail sits `shift` positions after the target's; `keep()` runs while
        the tail still occupies cells [a, a + L)."""
        self.on_step(f"masked, {name[7:]} hidden tokens" if name.startswith("masked@") else name)
        layout()
        self.alpha_t[name] = self._tail_alpha(name, shift)
        if keep:
            keep()
        self.ctx.seq_rm(Seq.SUMMARY, self.a, -1)  # free the tail region: SUMMARY holds A again

    def _tail_alpha(self, name: str, shift: int) -> np.ndarray:
        alpha = np.empty(len(self.tail), dtype=np.float32)
        for s, rows in decode_rows(self.ctx, self.tail, self.pos_tail + shift, Seq.SUMMARY):
            if self.observe:
                self.observe(name, s, rows)
            alpha[s : s + rows.shape[0]] = overlap_rows(
                self.target_p[s : s + rows.shape[0]], rows, self.n_common
            )
        return alpha

    # layouts: each leaves SUMMARY ready for the tail (head T[:-1] decoded)

    def decode_suffix(self) -> None:
        """N in SIDECAR only: hidden from SUMMARY."""
        self.ctx.decode_tokens(self.p.suffix, self.a, (Seq.SIDECAR,), "none")

    def head_after_prefix(self) -> None:
        self.ctx.decode_tokens(self.head, self.a, (Seq.SUMMARY,), "none")

    def head_moved(self, k: int) -> None:
        """The masked emulation (docs/DESIGN.md, Masked emulation)."""
        self.head_after_prefix()
        self.ctx.seq_add(
            Seq.SUMMARY, self.a, self.a + len(self.head), k
        )  # cells of SUMMARY only: nothing shared moves

    def suffix_then_head(self, remove: bool) -> None:
        """SUMMARY borrows N's cells (positions a..a+n-1), T[:-1] follows at its
        true position; with `remove` N is dropped again (masked_alt)."""
        self.ctx.seq_cp(Seq.SIDECAR, Seq.SUMMARY, self.a, self.a + self.n)
        self.ctx.decode_tokens(self.head, self.a + self.n, (Seq.SUMMARY,), "none")
        if remove:
            self.ctx.seq_rm(Seq.SUMMARY, self.a, self.a + self.n)  # by position: N only, T[:-1] sits at a+n..

    def suffix_inline(self) -> None:
        """The naive layout: N re-decoded right after A, the tail after N's cells."""
        self.ctx.seq_rm(Seq.SIDECAR, self.a, -1)  # free N's cells
        self.decode_suffix()
        self.head_after_prefix()


def _run_plan(x: _DraftPasses, want: set[str], sweep_ns, checks: bool) -> None:
    """Every requested pass, in the order the cell plan needs: sweep lengths
    before any suffix cell exists; N decoded while baseline's tail still holds
    the tail region, so N's cells land after it."""
    with_suffix = bool(want & {Mode.REBASED, Mode.MASKED, Mode.VISIBLE}) or checks
    x.decode_prefix()
    for k in sweep_ns:
        x.run(masked_key(k), k, partial(x.head_moved, k))
    x.run("baseline", 0, x.head_after_prefix, keep=x.decode_suffix if with_suffix else None)
    if Mode.REBASED in want:
        x.run("rebased", 0, x.head_after_prefix)
    if Mode.MASKED in want:
        x.run("masked", x.n, partial(x.head_moved, x.n))
    if checks:
        x.run(MASKED_ALT, x.n, partial(x.suffix_then_head, True))
    if Mode.VISIBLE in want:
        x.run("visible", x.n, partial(x.suffix_then_head, False))
    if checks:
        x.run(REBASED_INLINE, 0, x.suffix_inline)


def token_record(prep: Prepared) -> dict:
    """One --save-tokens line: every id needed to recompute α elsewhere."""
    p = prep.prompt
    return {
        "id": prep.id,
        "bare_ids": p.bare,
        "compound_ids": p.compound,
        "suffix_span": list(p.suffix_span),
        "summary_ids": prep.summary,
    }
