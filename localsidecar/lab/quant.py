"""Quantization comparison: which quantization for my draft (or target)?

Each variant is derived from one source GGUF with llama.cpp's quantizer and
cached in MODELS_DIR/quant/<source stem>-<hash>/ (the hash identifies the
source file, so two files of the same name never share variants). A variant
where llama.cpp fell back to another type for most weights (K-quants need
rows divisible by 256) is labelled with what it really is.

Scoring reuses the target side across variants: per document the canonical
summary (target greedy, acceptance.SummaryStore) and the target's
distributions p along it are computed ONCE; each variant then costs one draft
pass (its prompt + the summary, logits at the summary positions) plus numpy.
Per variant: teacher-forced α = mean_t Σ_v min(p, q), KL(p || q) and top-1
agreement (token-weighted over all summary positions), then the real
speculative loop (greedy acceptance, tokens per target call, tokens/s,
speedup vs target-only, the draft's hashtags).

--vary target keeps the draft fixed and derives target variants: p then comes
from each variant target (its own canonical summaries), so α compares each
variant target with the fixed draft, not a variant with the original target.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from localsidecar.backend import FTYPES, Context
from localsidecar.backend.gguf import gguf_info
from localsidecar.decoding.context_fit import DocumentTooLong
from localsidecar.decoding.distributions import compare_rows, entropy_terms
from localsidecar.decoding.layouts import Mode, decode_rows, prefill_target
from localsidecar.decoding.speculative import Generation, SpecConfig, SpecStats
from localsidecar.errors import LocalsidecarError
from localsidecar.hashtags.metrics import mean, tag_jaccard
from localsidecar.io.formatting import rounded
from localsidecar.io.schema import upgrade
from localsidecar.lab.acceptance import Lab, Prepared, file_identity
from localsidecar.lab.bootstrap import DIGITS
from localsidecar.registry.embedded import derive

DEFAULT_QUANTS = "Q8_0,Q5_K_M,Q4_K_M,Q4_0,Q3_K_M,Q2_K"
DEFAULT_ALPHA_MARGIN = 0.02
# the product's layout; its α equals the baseline α (docs/DESIGN.md, Cell placement changes results)
LOOP_MODE = Mode.REBASED.value
REF_MEMORY_BUDGET = 512 << 20  # target distributions kept in RAM; beyond: a temporary file
SUMMED_STATS = ("n_drafted", "n_accept", "rounds", "draft_s")  # SpecStats counters that add up over documents


def parse_quants(text: str) -> list[str]:
    """'Q8_0, q4_0' -> ['Q8_0', 'Q4_0'] (duplicates dropped); LocalsidecarError listing
    the valid names for an empty list, an empty item or an unknown name."""
    items = [s.strip().upper() for s in str(text or "").split(",")]
    bad = [s for s in items if s not in FTYPES]
    if not any(items) or bad:
        what = (
            "no quantization given"
            if not any(items)
            else (
                f"empty item in {text!r}"
                if "" in bad
                else f"unknown quantization {', '.join(repr(b) for b in bad if b)}"
            )
        )
        raise LocalsidecarError(f"--quants: {what}; give comma-separated names from {','.join(FTYPES)}")
    return list(dict.fromkeys(items))


def variants_dir(source: Path, models_dir: Path) -> Path:
    return models_dir / "quant" / f"{source.stem}-{file_identity(source)['sha256_ends'][:8]}"


@dataclass(kw_only=True)
class Variant:
    quant: str  # as requested
    path: Path
    label: str  # the real label ("Q2_K (really Q4_0 for 80% of weights)")
    fell_back: bool
    size_bytes: int  # on disk, all shards
    bits_per_weight: float
    derive_s: float  # seconds spent quantizing now (0: cached or the source itself)
    from_source: bool  # the source already is this quantization: used as is


@lru_cache(maxsize=64)
def _info(path: Path, size: int, mtime_ns: int):
    return gguf_info(path)


def _cached_info(path: Path):
    """gguf_info, read once per file version (parsing a header takes ~0.3 s)."""
    st = path.stat()
    return _info(path, st.st_size, st.st_mtime_ns)


def make_variant(source: Path, quant: str, folder: Path, threads: int | None = None) -> Variant:
    if _cached_info(source).file_type_name == quant:
        path, took = source, 0.0
    else:
        t0 = time.perf_counter()
        path = derive(source, quant, folder, threads)
        took = time.perf_counter() - t0
    info = _cached_info(path)
    label = info.real_label(quant)  # what the file really is (docs/DESIGN.md, K-quant fallback)
    return Variant(
        quant=quant,
        path=path,
        label=label,
        fell_back=label != quant,
        size_bytes=info.file_size,
        bits_per_weight=info.bits_per_weight,
        derive_s=took if took > 0.05 else 0.0,
        from_source=path == source,
    )


# --- the target side, once per document ------------------------------------------------


@dataclass(kw_only=True)
class DocRef:
    """A document's canonical summary and the target's distributions along it."""

    prep: Prepared
    p: np.ndarray  # (S, n_common) float32
    p_sum: np.ndarray  # (S,) float64 Σ_v p
    p_logp: np.ndarray  # (S,) float64 Σ_v p log p
    top1: np.ndarray  # (S,) argmax p


class RefStore:
    """Holds the DocRefs; past REF_MEMORY_BUDGET bytes their p arrays live in a
    temporary file under `spill_dir` (removed on close) instead of RAM."""

    def __init__(self, spill_dir: Path, budget: int = REF_MEMORY_BUDGET):
        self.spill_dir, self.budget, self.in_ram = spill_dir, budget, 0
        self.refs: list[DocRef] = []
        self.n_common = 0
        self._tmp: str | None = None

    def add(self, lab: Lab, prep: Prepared) -> DocRef:
        self.n_common = lab.n_common
        p = (
            lab.target_probs(prep.prompt, prep.summary)
            if prep.summary
            else np.empty((0, lab.n_common), np.float32)
        )
        if self.in_ram + p.nbytes > self.budget and p.size:
            if self._tmp is None:
                self.spill_dir.mkdir(parents=True, exist_ok=True)
                self._tmp = tempfile.mkdtemp(prefix="refs-", dir=self.spill_dir)
            m = np.memmap(os.path.join(self._tmp, f"{len(self.refs)}.f32"), np.float32, "w+", shape=p.shape)
            m[:] = p
            p = m
        else:
            self.in_ram += p.nbytes
        p_sum, p_logp = entropy_terms(p)
        top1 = p.argmax(axis=1) if len(p) else np.empty(0, np.int64)
        ref = DocRef(prep=prep, p=p, p_sum=p_sum, p_logp=p_logp, top1=top1)
        self.refs.append(ref)
        return ref

    def close(self) -> None:
        self.refs = []
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None


@dataclass(kw_only=True)
class Score:
    alpha: float | None
    kl: float | None
    top1: float | None
    tokens: int
    alpha_t: list[np.ndarray] = field(default_factory=list)  # per document


def score_draft(ctx: Context, n_common: int, refs: list[DocRef]) -> Score:
    """One draft pass per document through the acceptance lab's baseline path
    (layouts.prefill_target, then [T[-1]] + S[:-1] with logits by decode_rows),
    so α here equals Lab.evaluate's baseline α. Token-weighted over documents."""
    a_sum = kl_sum = hit = n = 0.0
    per_doc = []
    for ref in refs:
        pr, S = ref.prep.prompt, ref.prep.summary
        alpha = np.empty(len(S), np.float32)
        if S:
            prefill_target(ctx, pr)
            for lo, rows in decode_rows(ctx, [pr.tail[-1]] + S[:-1], len(pr.bare) - 1):
                hi = lo + len(rows)
                hit += float((rows[:, :n_common].argmax(axis=1) == ref.top1[lo:hi]).sum())
                alpha[lo:hi], kl_t = compare_rows(
                    ref.p[lo:hi], rows, n_common, (ref.p_sum[lo:hi], ref.p_logp[lo:hi])
                )
                kl_sum += float(kl_t.sum())
        a_sum += float(alpha.sum(dtype=np.float64))
        n += len(S)
        per_doc.append(alpha)
    if not n:
        return Score(alpha=None, kl=None, top1=None, tokens=0, alpha_t=per_doc)
    return Score(alpha=a_sum / n, kl=kl_sum / n, top1=hit / n, tokens=int(n), alpha_t=per_doc)


# --- the real loop ------------------------------------------------------------------------


@dataclass
class Loop:
    """Sums over documents of one speculative (or target-only) run."""

    tokens: int = 0
    prefill_s: float = 0.0
    gen_s: float = 0.0
    stats: SpecStats = field(default_factory=SpecStats)  # the loop's counters, summed
    tags: dict[str, list[str]] = field(default_factory=dict)  # document id -> the draft's hashtags

    def add(self, gen: Generation) -> None:
        self.tokens += len(gen.tokens)
        self.prefill_s += gen.prefill_s
        self.gen_s += gen.gen_s
        for name in SUMMED_STATS:
            setattr(self.stats, name, getattr(self.stats, name) + getattr(gen.stats, name))
        self.stats.k_hist.update(gen.stats.k_hist)

    @property
    def tokens_per_s(self) -> float | None:
        """End to end: summary tokens ÷ (prompt processing + generation); the
        hashtag phase is not included (target-only has none)."""
        t = self.prefill_s + self.gen_s
        return self.tokens / t if t > 0 else None


def run_loop(engine, docs, spec: SpecConfig) -> Loop:
    out = Loop()
    for d in docs:
        res = engine.run(d.id, d.text, LOOP_MODE, spec)
        out.add(res.gen)
        out.tags[d.id] = list(res.hashtags.tags) if res.hashtags else []
    return out


def run_target_only(engine, docs, spec: SpecConfig) -> Loop:
    out = Loop()
    for d in docs:
        out.add(
            engine.generate_target_only(engine.prompt(d.text), spec, numbers=engine.numbers_for(d.text, spec))
        )
    return out


# --- rows -------------------------------------------------------------------------------------


def upgrade_row(row: dict) -> dict:
    """A row read back from an --out file, under this version's key names (io.schema)."""
    return upgrade("quant", row)


def make_row(v: Variant, sc: Score, loop: Loop | None, base: Loop | None, timing: dict) -> dict:
    row = {
        "quant": v.quant,
        "label": v.label,
        "fell_back": v.fell_back,
        "path": str(v.path),
        "size_bytes": v.size_bytes,
        "bits_per_weight": rounded(v.bits_per_weight, 3),
        "alpha": rounded(sc.alpha, DIGITS),
        "kl": rounded(sc.kl, DIGITS),
        "top1": rounded(sc.top1, DIGITS),
        "summary_tokens": sc.tokens,
        "acceptance_rate": None,
        "mean_tokens_per_call": None,
        "draft_ms_per_token": None,
        "tokens_per_s": None,
        "target_only_tokens_per_s": None,
        "speedup": None,
        "hashtag_jaccard": None,
        "recommended": False,
        "within_margin": False,
        "timing_s": {k: rounded(x, 3) for k, x in timing.items()},
        "hashtags_by_doc": {},
    }
    if loop is not None:
        st = loop.stats
        tps, base_tps = loop.tokens_per_s, base.tokens_per_s if base else None
        row.update(
            {
                "acceptance_rate": rounded(st.acceptance_rate),
                "drafted": st.n_drafted,
                "few_drafted": st.few_drafted,
                "mean_tokens_per_call": rounded(loop.tokens / st.rounds if st.rounds else None, 3),
                "draft_ms_per_token": rounded(st.draft_ms_per_token, 3),
                "tokens_per_s": rounded(tps, 3),
                "target_only_tokens_per_s": rounded(base_tps, 3),
                "speedup": rounded(tps / base_tps if tps and base_tps else None, 3),
                "speedup_meaningful": st.speedup_meaningful,
                "hashtags_by_doc": loop.tags,
            }
        )
    return row


def speed_meaningful(row: dict) -> bool:
    """The row's speed can rank it: the loop ran and drafted enough for its
    speedup over target-only to mean something (SpecStats.speedup_meaningful;
    a row read from an older --out without the key: enough drafted tokens)."""
    if row.get("tokens_per_s") is None:
        return False
    return bool(row.get("speedup_meaningful", not row.get("few_drafted", True)))


def finish_rows(rows: list[dict], margin: float) -> list[dict]:
    """Hashtag agreement with the best-α row, then the order that shows the
    answer: rows whose α is within `margin` of the best α first, fastest end to
    end first among those whose speed is meaningful, then the smallest file;
    then the others by α. The first row is the recommendation when the loop
    did not run or its speed is meaningful: a speed the draft hardly ran for
    recommends nothing."""
    scored = [r for r in rows if r["alpha"] is not None]
    if not scored:
        return rows
    best = max(scored, key=lambda r: r["alpha"])
    for r in rows:
        if r["hashtags_by_doc"] and best["hashtags_by_doc"]:
            ref = best["hashtags_by_doc"]
            r["hashtag_jaccard"] = rounded(
                mean(tag_jaccard(tags, ref[k]) for k, tags in r["hashtags_by_doc"].items() if k in ref)
            )
        r["within_margin"] = r["alpha"] is not None and r["alpha"] >= best["alpha"] - margin - 1e-9
        r["recommended"] = False

    def speed(r):
        return (0, -r["tokens_per_s"], r["size_bytes"]) if speed_meaningful(r) else (1, 0.0, r["size_bytes"])

    ok = sorted((r for r in rows if r["within_margin"]), key=speed)
    rest = sorted(
        (r for r in rows if not r["within_margin"]),
        key=lambda r: -(r["alpha"] if r["alpha"] is not None else -1),
    )
    first = ok[0]
    first["recommended"] = first["tokens_per_s"] is None or speed_meaningful(first)
    return ok + rest


# --- the comparison -------------------------------------------------------------------------


def compare(
    vary: str,
    target: Path,
    draft: Path | None,
    variants: list[Variant],
    docs,
    engine_cfg,
    prompts,
    *,
    spec: SpecConfig,
    loop: bool,
    summaries,
    spill_dir: Path,
    on_row=None,
    log=lambda msg: None,
    on_skip=lambda doc_id, reason: None,
) -> list[dict]:
    """One row per variant (unordered; see finish_rows). vary="draft": `target`
    fixed, each variant is the draft; the target side is prepared once.
    vary="target": `draft` fixed, each variant is the target (prepared per variant).
    A document longer than the models' training context (--ctx auto) is left
    out of every row: on_skip(its id, why) hears it once."""
    from localsidecar.decoding.engine import Engine

    rows: list[dict] = []
    if vary == "draft":
        with Engine(target, None, engine_cfg, prompts) as eng:
            refs = None
            try:
                for v in variants:
                    t0 = time.perf_counter()
                    eng.swap_draft(v.path)
                    load_s = time.perf_counter() - t0
                    timing = {"derive": v.derive_s, "load": load_s}
                    if refs is None:  # Lab needs a draft context: prepared after the first swap
                        refs, base, timing["target_side"], docs = _prepare(
                            eng, docs, spec, loop, summaries, spill_dir, log, on_skip
                        )
                    rows.append(_one(eng, v, refs, base, docs, spec, loop, timing, log))
                    if on_row:
                        on_row(rows[-1])
            finally:
                if refs is not None:
                    refs.close()
        return rows
    for i, v in enumerate(variants):
        t0 = time.perf_counter()
        with Engine(v.path, draft, engine_cfg, prompts) as eng:
            load_s = time.perf_counter() - t0
            skip = on_skip if i == 0 else lambda doc_id, reason: None  # every variant skips the same
            refs, base, prep_s, docs = _prepare(eng, docs, spec, loop, summaries, spill_dir, log, skip)
            try:
                timing = {"derive": v.derive_s, "load": load_s, "target_side": prep_s}
                rows.append(_one(eng, v, refs, base, docs, spec, loop, timing, log))
            finally:
                refs.close()
        if on_row:
            on_row(rows[-1])
    return rows


def _prepare(eng, docs, spec, loop, summaries, spill_dir, log, on_skip):
    """Canonical summaries, target distributions and target-only timing; and
    the documents kept (those within the models' training context)."""
    t0 = time.perf_counter()
    lab = Lab(eng, max_tokens=spec.max_tokens, summaries=summaries)
    refs = RefStore(spill_dir)
    kept = []
    try:
        log(
            f"target {eng.target.path.name}: canonical summaries and distributions of "
            f"{len(docs)} document{'s' * (len(docs) != 1)}"
        )
        for d in docs:
            try:
                refs.add(lab, lab.prepare(d.id, d.text))
            except DocumentTooLong as exc:
                on_skip(d.id, str(exc))
                continue
            kept.append(d)
        base = run_target_only(eng, kept, spec) if loop else None
    except BaseException:
        refs.close()
        raise
    return refs, base, time.perf_counter() - t0, kept


def _one(eng, v: Variant, refs: RefStore, base, docs, spec, loop, timing, log) -> dict:
    log(f"{v.label}: scoring ({v.size_bytes / 1e6:.1f} MB)")
    t0 = time.perf_counter()
    sc = score_draft(eng.d_ctx, refs.n_common, refs.refs)
    timing["score"] = time.perf_counter() - t0
    lp = None
    if loop:
        t0 = time.perf_counter()
        lp = run_loop(eng, docs, spec)
        timing["loop"] = time.perf_counter() - t0
    return make_row(v, sc, lp, base, timing)
