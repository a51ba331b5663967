#!/usr/bin/env python3
"""Benchmark of `localsidecar acceptance` against its ideal floor and a naive variant.

Prints, for the same documents and canonical summaries (generated once, not timed):

  acceptance / floor   all five conditions (Lab.evaluate) ÷ the ideal floor:
                       one target pass over the bare sequence + one draft pass
                       over the compound sequence, logits at the summary
                       positions (goal <= 1.3)
  naive / acceptance   every condition recomputed from scratch (target and
                       draft prefill per condition, full logits copied, float64
                       softmax) ÷ acceptance (goal >= 3)
  peak RSS             after an acceptance pass (before the other variants), against model files + KV
                       caches + 300 MB

The three variants are interleaved and repeated; ratios use medians. The
machine may be shared: run with --threads 1 (default) for stable ratios.

  python scripts/bench_acceptance.py [DOCS ...] [--max-tokens 48] [--repeats 3]
"""

from __future__ import annotations

import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import script_parser  # the repository on sys.path

from localsidecar import Engine, EngineConfig, PromptConfig
from localsidecar.decoding.layouts import Seq, prefill_draft, prefill_target
from localsidecar.io.documents import load_many
from localsidecar.lab.acceptance import CONDITIONS, Lab, SummaryStore
from localsidecar.registry.models import resolve_models

MB = 1 << 20


def _rss() -> int:
    """Peak resident set size of this process so far, in bytes (Linux: ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def kv_bytes(model, n_ctx: int) -> int:
    """f16 K and V for every layer and cell (llama.cpp's default cache type)."""
    arch = model.meta("general.architecture") or "llama"
    get = lambda k, d=None: int(model.meta(f"{arch}.{k}") or d)  # noqa: E731
    n_layer, n_embd, n_head = get("block_count"), get("embedding_length"), get("attention.head_count")
    n_kv = get("attention.head_count_kv", n_head)
    k_len = get("attention.key_length", n_embd // n_head)
    v_len = get("attention.value_length", n_embd // n_head)
    return n_layer * n_ctx * n_kv * (k_len + v_len) * 2


def floor_pass(eng, preps) -> None:
    t, d = eng.t_ctx, eng.d_ctx
    for prep in preps:
        p, tail = prep.prompt, [prep.prompt.tail[-1]] + prep.summary[:-1]
        prefill_target(t, p)
        t.decode_tokens(tail, len(p.bare) - 1, (Seq.SUMMARY,), "all")
        t.logits_rows()
        lay = prefill_draft(d, p, "visible", reserve=len(tail))  # the compound sequence A + N + T[:-1]
        d.decode_tokens(tail, lay.n_cached + lay.shift, (Seq.SUMMARY,), "all")
        d.logits_rows()


def _softmax64(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def naive_pass(eng, preps) -> list[float]:
    t, d = eng.t_ctx, eng.d_ctx
    alphas = []
    for prep in preps:
        p, tail = prep.prompt, [prep.prompt.tail[-1]] + prep.summary[:-1]
        for mode in CONDITIONS:
            prefill_target(t, p)
            t.decode_tokens(tail, len(p.bare) - 1, (Seq.SUMMARY,), "all")
            P = _softmax64(np.array(t.logits_rows()))
            lay = prefill_draft(d, p, mode, reserve=len(tail))
            d.decode_tokens(tail, lay.n_cached + lay.shift, (Seq.SUMMARY,), "all")
            Q = _softmax64(np.array(d.logits_rows()))
            alphas.append(float(np.minimum(P, Q).sum(axis=1).mean()))
    return alphas


def main() -> int:
    ap = script_parser(__doc__, max_tokens=48, threads=1, ctx=2048)
    ap.add_argument("--max-chars", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()

    docs = load_many(a.docs, max_chars=a.max_chars).docs
    t_path, d_path = resolve_models(pair=a.pair, target=a.target, draft=a.draft)
    eng = Engine(t_path, d_path, EngineConfig(n_ctx=a.ctx, threads=a.threads), PromptConfig())
    with tempfile.TemporaryDirectory() as tmp:
        lab = Lab(eng, max_tokens=a.max_tokens, summaries=SummaryStore(Path(tmp) / "s.jsonl"))
        t0 = time.perf_counter()
        preps = [lab.prepare(doc.id, doc.text) for doc in docs]
        gen_s = time.perf_counter() - t0
    p0 = preps[0].prompt
    S = sum(len(x.summary) for x in preps)
    A = sum(len(x.prompt.prefix) for x in preps)
    print(
        f"pair: {t_path.name} (target) / {d_path.name} (draft); {len(docs)} documents, "
        f"prefix {A} tokens, suffix n = {len(p0.suffix)}, tail {len(p0.tail)}, {S} summary tokens; threads {a.threads}"
    )
    print(f"canonical summaries (one-time, cached afterwards): {gen_s:.2f} s")

    rss_before = _rss()
    for prep in preps:  # untimed warm-up; the peak RSS of acceptance alone is read after it
        lab.evaluate(prep, CONDITIONS)
    rss_after_acceptance = _rss()
    variants = {
        "acceptance": lambda prep: lab.evaluate(prep, CONDITIONS),
        "floor": lambda prep: floor_pass(eng, [prep]),
        "naive": lambda prep: naive_pass(eng, [prep]),
    }
    wall = {k: [] for k in variants}
    cpu = {k: [] for k in variants}
    for rep in range(a.repeats):
        tot_w, tot_c = dict.fromkeys(variants, 0.0), dict.fromkeys(variants, 0.0)
        for prep in preps:  # interleaved per document: load drifts hit all variants alike
            for k, fn in variants.items():
                w0, c0 = time.perf_counter(), time.process_time()
                fn(prep)
                tot_w[k] += time.perf_counter() - w0
                tot_c[k] += time.process_time() - c0
        for k in variants:
            wall[k].append(tot_w[k])
            cpu[k].append(tot_c[k])
        print(
            f"  repeat {rep + 1}: "
            + ", ".join(f"{k} {tot_w[k]:.2f} s wall / {tot_c[k]:.2f} s cpu" for k in variants),
            flush=True,
        )

    for label, t in (("wall", wall), ("cpu", cpu)):
        med = {k: statistics.median(v) for k, v in t.items()}
        r1, r2 = med["acceptance"] / med["floor"], med["naive"] / med["acceptance"]
        print(
            f"[{label} time, medians of {a.repeats}] acceptance (all {len(CONDITIONS)} conditions) {med['acceptance']:.2f} s, "
            f"floor {med['floor']:.2f} s, naive {med['naive']:.2f} s"
        )
        print(
            f"  acceptance / floor = {r1:.2f}  (goal <= 1.3: {'met' if r1 <= 1.3 else 'missed'});  "
            f"naive / acceptance = {r2:.2f}  (goal >= 3: {'met' if r2 >= 3 else 'missed'})"
        )
    n_tail = len(p0.tail)
    print(
        "tokens decoded per document (target | draft): "
        f"acceptance A+T+S | A+n+4(T+S) (baseline, rebased, masked, visible; deferred = baseline); "
        f"floor A+T+S | A+n+T+S; naive 5x(A+T+S) | 5x(A+[n]+T+S).  Here: A={A / len(docs):.0f}, n={len(p0.suffix)}, "
        f"T={n_tail}, S={S / len(docs):.0f} on average"
    )
    files = t_path.stat().st_size + (d_path.stat().st_size if d_path != t_path else 0)
    kv = kv_bytes(eng.target, eng.t_ctx.n_ctx) + kv_bytes(eng.draft, eng.d_ctx.n_ctx)
    budget = files + kv + 300 * MB
    print(
        f"peak RSS: {rss_before / MB:.0f} MB with models loaded and summaries made, {rss_after_acceptance / MB:.0f} MB after "
        f"the acceptance runs (whole script {_rss() / MB:.0f} MB); budget = model files {files / MB:.0f} MB + KV caches "
        f"{kv / MB:.0f} MB + 300 MB = {budget / MB:.0f} MB: {'within' if rss_after_acceptance <= budget else 'OVER'}"
    )
    eng.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
