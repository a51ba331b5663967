#!/usr/bin/env python3
"""Benchmark of `localsidecar quant`'s scoring: the cost of one more variant.

For the same documents and canonical summaries (generated once, not timed):

  target side once     canonical summaries' target distributions p (RefStore),
                       paid once per comparison, not per variant
  per variant          find the cached variant and read its header (cached) +
                       load it as the draft (Engine.swap_draft) + score it
                       (α, KL, top-1 along the summaries: score_draft)
  draft pass           the floor: that variant's draft decoding the documents'
                       prompts and summaries with logits, no numpy at all
  ratio                per variant ÷ draft pass (goal <= 1.5)
  naive                Lab.evaluate(baseline) per document: recomputes the
                       target's distributions for every variant
  derive               llama.cpp's quantizer into a fresh folder (paid once;
                       later runs find the cached file)

Repeats are interleaved; figures are medians. The machine may be shared: keep
--threads 1 (default) for stable ratios.

  python scripts/bench_quant.py [DOCS ...] [--quants Q8_0,Q5_0,Q4_0,Q2_K] [--max-tokens 32] [--repeats 3]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from _common import script_parser  # the repository on sys.path

from localsidecar import Engine, EngineConfig, PromptConfig
from localsidecar.backend.gguf import gguf_info
from localsidecar.io.documents import load_many
from localsidecar.lab.acceptance import Lab, SummaryStore
from localsidecar.lab.quant import RefStore, make_variant, parse_quants, score_draft, variants_dir
from localsidecar.registry.embedded import derive, embedded_target_path, models_dir

GOAL = 1.5


def draft_pass(ctx, refs) -> None:
    """The floor of scoring a draft: its prompt and the summary decoded in the
    same segments as score_draft, logits at the summary positions, nothing read."""
    for ref in refs:
        p, S = ref.prep.prompt, ref.prep.summary
        ctx.clear()
        ctx.decode_tokens(p.prefix, 0, (0,), "none")
        ctx.decode_tokens(p.tail[:-1], len(p.prefix), (0,), "none")
        tail = [p.tail[-1]] + S[:-1]
        for s in range(0, len(tail), ctx.n_batch):
            ctx.decode_tokens(tail[s : s + ctx.n_batch], len(p.bare) - 1 + s, (0,), "all")


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> int:
    ap = script_parser(__doc__, models=False, max_tokens=32, threads=1, ctx=1024)
    ap.add_argument("--quants", default="Q8_0,Q5_0,Q4_0,Q2_K")
    ap.add_argument("--max-chars", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-naive", action="store_true", help="Skip the naive Lab.evaluate timing.")
    a = ap.parse_args()

    docs = load_many(a.docs, max_chars=a.max_chars).docs
    source = embedded_target_path()
    folder = variants_dir(source, models_dir())
    names = parse_quants(a.quants)
    with tempfile.TemporaryDirectory() as tmp:
        derive_s = {q: timed(lambda q=q: make_variant(source, q, Path(tmp), a.threads)) for q in names}
        variants = [make_variant(source, q, folder, a.threads) for q in names]
        # a later run finds the file: derive() returns it, its header is read once
        cached_s = {v.quant: timed(lambda v=v: gguf_info(derive(source, v.quant, folder))) for v in variants}
        with Engine(source, None, EngineConfig(n_ctx=a.ctx, threads=a.threads), PromptConfig()) as eng:
            eng.swap_draft(variants[0].path)
            lab = Lab(eng, max_tokens=a.max_tokens, summaries=SummaryStore(Path(tmp) / "summaries.jsonl"))
            preps = [lab.prepare(d.id, d.text) for d in docs]
            refs = RefStore(Path(tmp))
            target_side = timed(lambda: [refs.add(lab, p) for p in preps])
            tokens = sum(len(p.summary) for p in preps)
            t = {v.quant: {"load": [], "score": [], "pass": [], "naive": []} for v in variants}
            for _ in range(a.repeats):
                for v in variants:
                    m = t[v.quant]
                    m["load"].append(timed(lambda v=v: eng.swap_draft(v.path)))
                    m["score"].append(timed(lambda: score_draft(eng.d_ctx, refs.n_common, refs.refs)))
                    m["pass"].append(timed(lambda: draft_pass(eng.d_ctx, refs.refs)))
                    if not a.no_naive:
                        m["naive"].append(timed(lambda: [lab.evaluate(p, ["baseline"]) for p in preps]))
            refs.close()

    med = statistics.median
    print(
        f"{len(docs)} documents, {tokens} summary tokens, {a.repeats} repeats, {a.threads} thread(s); "
        f"target side once: {target_side:.2f}s"
    )
    print(
        f"{'variant':40} {'derive':>7} {'cached':>7} {'load':>6} {'score':>6} {'per var':>7} {'pass':>6} {'ratio':>6} {'naive':>6}"
    )
    ratios = []
    for v in variants:
        m = t[v.quant]
        per = cached_s[v.quant] + med([x + y for x, y in zip(m["load"], m["score"])])
        ratio = per / med(m["pass"])
        ratios.append(ratio)
        naive = f"{cached_s[v.quant] + med(m['load']) + med(m['naive']):6.2f}" if m["naive"] else "     -"
        print(
            f"{v.label:40} {derive_s[v.quant]:7.2f} {cached_s[v.quant]:7.3f} {med(m['load']):6.2f} {med(m['score']):6.2f} "
            f"{per:7.2f} {med(m['pass']):6.2f} {ratio:6.2f} {naive}"
        )
    worst = max(ratios)
    print(
        f"time per variant ÷ one draft pass: median {med(ratios):.2f}, worst {worst:.2f} (goal <= {GOAL}: "
        f"{'met' if worst <= GOAL else 'NOT met'})"
    )
    return 0 if worst <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
