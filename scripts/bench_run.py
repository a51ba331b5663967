#!/usr/bin/env python3
"""Benchmark `localsidecar run` on a model pair; prints ratios measured in one run.

- overhead: wall time of the runs / time spent inside llama_decode (goal <= 1.10)
- tokens/s of speculative (per --draft-max) vs target-only, on the same documents
- cost model: draft ms/token and target ms per verify batch of k+1 tokens,
  predicted vs measured tokens/s

- the best speculative setting of the grid --draft-max x --p-min (what the
  CLI default should be for this pair)

Usage: python scripts/bench_run.py [DOCS ...] [--draft-max 1,2,4,8] [--p-min 0,0.8] [--max-tokens 96]
       [--target T --draft D] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from localsidecar.documents import load_many  # noqa: E402
from localsidecar.engine import Engine, EngineConfig  # noqa: E402
from localsidecar.layouts import prefill_target  # noqa: E402
from localsidecar.registry.models import resolve_models  # noqa: E402
from localsidecar.prompts import PromptConfig  # noqa: E402
from localsidecar.speculative import SpecConfig  # noqa: E402


def decode_seconds(engine: Engine) -> float:
    return engine.t_ctx.stats.decode_s + (engine.d_ctx.stats.decode_s if engine.d_ctx else 0.0)


def batch_cost_ms(engine: Engine, text: str, sizes: list[int], reps: int = 5) -> dict[int, float]:
    """Median ms of one target decode of n tokens right after a real prompt."""
    p = engine.prompt(text)
    out = {}
    for n in sizes:
        times = []
        for _ in range(reps):
            prefill_target(engine.t_ctx, p)
            toks = [p.bare[-1]] + p.prefix[: n - 1]
            t0 = time.perf_counter()
            engine.t_ctx.decode_plan((tok, len(p.bare) - 1 + i, (0,), True) for i, tok in enumerate(toks))
            times.append(time.perf_counter() - t0)
        out[n] = 1000 * float(np.median(times))
    return out


def draft_token_ms(engine: Engine, text: str, reps: int = 20) -> float:
    p = engine.prompt(text)
    ctx = engine.d_ctx
    ctx.clear()
    ctx.decode_tokens(p.bare[:-1], 0, (0,), "none")
    times = []
    for i in range(reps):
        t0 = time.perf_counter()
        ctx.decode_tokens([p.bare[-1] if i == 0 else p.prefix[i]], len(p.bare) - 1 + i, (0,), "last")
        times.append(time.perf_counter() - t0)
    return 1000 * float(np.median(times))


def run_all(engine: Engine, docs, mode: str, spec: SpecConfig) -> dict:
    d0, t0 = decode_seconds(engine), time.perf_counter()
    tokens = gen_s = drafted = accepted = rounds = 0
    for doc in docs:
        r = engine.run(doc.id, doc.text, mode, spec)
        tokens += len(r.gen.tokens)
        gen_s += r.gen.gen_s
        drafted += r.gen.stats.n_drafted
        accepted += r.gen.stats.n_accept
        rounds += r.gen.stats.rounds
    wall = time.perf_counter() - t0
    return {
        "mode": mode, "draft_max": spec.draft_max if mode != "target-only" else 0,
        "p_min": spec.p_min if mode != "target-only" else None,
        "tokens": tokens, "tokens_per_s": tokens / gen_s, "wall_s": wall,
        "decode_s": decode_seconds(engine) - d0, "overhead": wall / (decode_seconds(engine) - d0),
        "acceptance_rate": accepted / drafted if drafted else None,
        "tokens_per_call": tokens / rounds, "drafted_per_round": drafted / rounds,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("docs", nargs="*", default=[str(ROOT / "examples" / "notes.txt"), str(ROOT / "examples" / "docs")])
    ap.add_argument("--draft-max", default="1,2,3,4,6,8")
    ap.add_argument("--p-min", default="0")
    ap.add_argument("--max-tokens", type=int, default=96)
    ap.add_argument("--mode", default="rebased")
    ap.add_argument("--pair", default=None)
    ap.add_argument("--target", default=None)
    ap.add_argument("--draft", default=None)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    docs = load_many(args.docs, max_chars=None).docs
    t_path, d_path = resolve_models(pair=args.pair, target=args.target, draft=args.draft)
    ks = [int(k) for k in args.draft_max.split(",")]
    p_mins = [float(v) for v in args.p_min.split(",")]
    rows = []
    with Engine(t_path, d_path, EngineConfig(threads=args.threads), PromptConfig()) as engine:
        engine.run(docs[0].id, docs[0].text, args.mode, SpecConfig(max_tokens=8))  # warm-up
        base = run_all(engine, docs, "target-only", SpecConfig(max_tokens=args.max_tokens))
        rows.append(base)
        for p_min in p_mins:
            for k in ks:
                spec = SpecConfig(draft_max=k, p_min=p_min, max_tokens=args.max_tokens)
                rows.append(run_all(engine, docs, args.mode, spec))
        cost = batch_cost_ms(engine, docs[0].text, sorted({1, *[k + 1 for k in ks]}))
        d_ms = draft_token_ms(engine, docs[0].text)
    for r in rows[1:]:
        k = r["draft_max"]
        # per round: the draft decodes ~drafted_per_round tokens (catch-up
        # included), the target verifies k+1; tokens_per_call come out
        round_ms = r["drafted_per_round"] * d_ms + cost[k + 1]
        r["predicted_tokens_per_s"] = 1000 * r["tokens_per_call"] / round_ms
        r["speedup"] = r["tokens_per_s"] / base["tokens_per_s"]
    best = max(rows[1:], key=lambda r: r["tokens_per_s"])
    result = {"target": str(t_path), "draft": str(d_path), "docs": len(docs), "draft_ms_per_token": d_ms,
              "target_ms_per_batch": cost, "rows": rows,
              "best": {"draft_max": best["draft_max"], "p_min": best["p_min"], "speedup": best["speedup"]}}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"pair: {Path(t_path).name} / {Path(d_path).name}, {len(docs)} documents, max {args.max_tokens} tokens")
    print(f"draft ms/token {d_ms:.2f}; target ms per batch: " + ", ".join(f"{n}:{v:.1f}" for n, v in cost.items()))
    print(f"{'mode':12} {'k':>2} {'p_min':>5} {'tok/s':>7} {'pred':>7} {'speedup':>7} {'acc':>5} {'tok/call':>8} {'wall/decode':>11}")
    for r in rows:
        acc = f"{r['acceptance_rate']:.3f}" if r["acceptance_rate"] is not None else "-"
        pred = f"{r['predicted_tokens_per_s']:.1f}" if "predicted_tokens_per_s" in r else "-"
        sp = f"{r['speedup']:.3f}" if "speedup" in r else "1.000"
        pm = f"{r['p_min']:.2f}" if r["p_min"] is not None else "-"
        print(f"{r['mode']:12} {r['draft_max']:>2} {pm:>5} {r['tokens_per_s']:7.1f} {pred:>7} {sp:>7} {acc:>5} "
              f"{r['tokens_per_call']:8.2f} {r['overhead']:11.3f}")
    print(f"best speculative setting: --draft-max {best['draft_max']} --p-min {best['p_min']:g} "
          f"({best['speedup']:.3f}x target-only); to make it your default: "
          f"export LOCALSIDECAR_DRAFT_MAX={best['draft_max']} LOCALSIDECAR_P_MIN={best['p_min']:g}")


if __name__ == "__main__":
    main()
