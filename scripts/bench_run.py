#!/usr/bin/env python3
"""Benchmark `localsidecar run` on a model pair; prints ratios measured in one run.

Draft length (section "grid", the default):
- tokens/s of target-only, of every fixed setting of the grid --draft-max x
  --p-min, and of `--draft-max auto` (a fresh policy, as a new process has);
  auto ÷ target-only and auto ÷ the best fixed setting
- the whole `run` with auto, hashtags included, ÷ (target-only + auto's own
  hashtag phase): the sidecar's price when auto never drafts
- overhead: wall time of the runs / time spent inside llama_decode
- cost model: draft ms/token and target ms per verify batch of k+1 tokens,
  predicted vs measured tokens/s of each fixed setting

Threads (section "threads", the default with --load): the default (threads
follow the free cores) against every fixed --threads 1..cores, target-only
and the default `run`, rows interleaved over --repeats; default ÷ the best
fixed count and ÷ one thread.

--load N starts N busy processes (pure Python loops that stop by themselves
after --load-seconds, and are stopped when the benchmark ends) for the whole
benchmark: the machine of a user who runs other programs.

Usage: python scripts/bench_run.py [DOCS ...] [--draft-max 1,2,4,8] [--p-min 0,0.8] [--max-tokens 96]
       [--cap 8] [--load N] [--sections grid,threads] [--repeats 2] [--target T --draft D] [--json]
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from _common import busy_processes, script_parser  # the repository on sys.path

from localsidecar import Engine, EngineConfig, PromptConfig, SpecConfig
from localsidecar.backend.hardware import default_threads
from localsidecar.decoding.defaults import DEFAULT_DRAFT_MAX_CAP
from localsidecar.decoding.layouts import Seq, prefill_target
from localsidecar.io.documents import load_many
from localsidecar.registry.models import resolve_models

# --- measurements -------------------------------------------------------------------------


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
            engine.t_ctx.decode_plan(
                (tok, len(p.bare) - 1 + i, (Seq.SUMMARY,), True) for i, tok in enumerate(toks)
            )
            times.append(time.perf_counter() - t0)
        out[n] = 1000 * float(np.median(times))
    return out


def draft_token_ms(engine: Engine, text: str, reps: int = 20) -> float:
    p = engine.prompt(text)
    ctx = engine.d_ctx
    ctx.clear()
    ctx.decode_tokens(p.bare[:-1], 0, (Seq.SUMMARY,), "none")
    times = []
    for i in range(reps):
        t0 = time.perf_counter()
        ctx.decode_tokens(
            [p.bare[-1] if i == 0 else p.prefix[i]], len(p.bare) - 1 + i, (Seq.SUMMARY,), "last"
        )
        times.append(time.perf_counter() - t0)
    return 1000 * float(np.median(times))


def run_all(engine: Engine, docs, mode: str, spec: SpecConfig, label: str) -> dict:
    """Every document once; sums of tokens, loop time, whole-run wall time."""
    d0, t0 = decode_seconds(engine), time.perf_counter()
    tokens = gen_s = drafted = accepted = rounds = 0
    run_s = hashtag_s = 0.0
    for doc in docs:
        r = engine.run(doc.id, doc.text, mode, spec)
        s = r.gen.stats
        tokens += len(r.gen.tokens)
        gen_s += r.gen.gen_s
        drafted, accepted, rounds = drafted + s.n_drafted, accepted + s.n_accept, rounds + s.rounds
        run_s += r.wall_s
        hashtag_s += r.hashtags.wall_s if r.hashtags else 0.0
    wall = time.perf_counter() - t0
    return {
        "setting": label,
        "mode": mode,
        "draft_max": spec.draft_max if mode != "target-only" else 0,
        "p_min": spec.p_min if mode != "target-only" else None,
        "tokens": tokens,
        "gen_s": gen_s,
        "tokens_per_s": tokens / gen_s,
        "run_s": run_s,
        "hashtag_s": hashtag_s,
        "wall_s": wall,
        "decode_s": decode_seconds(engine) - d0,
        "overhead": wall / (decode_seconds(engine) - d0),
        "acceptance_rate": accepted / drafted if drafted else None,
        "tokens_per_call": tokens / rounds,
        "drafted_per_round": drafted / rounds,
    }


# --- section: draft length -------------------------------------------------------------------


def grid_section(engine: Engine, docs, args) -> dict:
    ks = [int(k) for k in args.draft_max.split(",")]
    p_mins = [float(v) for v in args.p_min.split(",")]
    engine.run(docs[0].id, docs[0].text, args.mode, SpecConfig(max_tokens=8, draft_max=1))  # warm-up
    base = run_all(engine, docs, "target-only", SpecConfig(max_tokens=args.max_tokens), "target-only")
    rows = []
    for p_min in p_mins:
        for k in ks:
            spec = SpecConfig(draft_max=k, p_min=p_min, max_tokens=args.max_tokens)
            rows.append(
                run_all(
                    engine,
                    docs,
                    args.mode,
                    spec,
                    f"--draft-max {k}" + (f" --p-min {p_min:g}" if p_min else ""),
                )
            )
    engine.policy = None  # auto starts from nothing, as in a new process
    auto = run_all(
        engine, docs, args.mode, SpecConfig(max_tokens=args.max_tokens, draft_max_cap=args.cap), "auto"
    )
    cost = batch_cost_ms(engine, docs[0].text, sorted({1, *[k + 1 for k in ks]}))
    d_ms = draft_token_ms(engine, docs[0].text)
    for r in rows:
        # per round: the draft decodes ~drafted_per_round tokens (catch-up
        # included), the target verifies k+1; tokens_per_call come out
        round_ms = r["drafted_per_round"] * d_ms + cost[r["draft_max"] + 1]
        r["predicted_tokens_per_s"] = 1000 * r["tokens_per_call"] / round_ms
    for r in [*rows, auto]:
        r["speedup"] = r["tokens_per_s"] / base["tokens_per_s"]
    best = max(rows, key=lambda r: r["tokens_per_s"])
    return {
        "draft_ms_per_token": d_ms,
        "target_ms_per_batch": cost,
        "rows": [base, *rows, auto],
        "best_fixed": {"draft_max": best["draft_max"], "p_min": best["p_min"], "speedup": best["speedup"]},
        "auto_over_target_only": auto["tokens_per_s"] / base["tokens_per_s"],
        "auto_over_best_fixed": auto["tokens_per_s"] / best["tokens_per_s"],
        # the whole run (prompt, summary, hashtags) against target-only plus the hashtag phase alone
        "auto_run_over_target_only_plus_hashtags": auto["run_s"] / (base["run_s"] + auto["hashtag_s"]),
    }


def print_grid(g: dict) -> None:
    print(
        f"draft ms/token {g['draft_ms_per_token']:.2f}; target ms per batch: "
        + ", ".join(f"{n}:{v:.1f}" for n, v in g["target_ms_per_batch"].items())
    )
    print(
        f"{'setting':24} {'tok/s':>7} {'pred':>7} {'speedup':>7} {'acc':>5} {'tok/call':>8} {'k mean':>6} {'wall/decode':>11}"
    )
    for r in g["rows"]:
        acc = f"{r['acceptance_rate']:.3f}" if r["acceptance_rate"] is not None else "-"
        pred = f"{r['predicted_tokens_per_s']:.1f}" if "predicted_tokens_per_s" in r else "-"
        sp = f"{r['speedup']:.3f}" if "speedup" in r else "1.000"
        print(
            f"{r['setting']:24} {r['tokens_per_s']:7.1f} {pred:>7} {sp:>7} {acc:>5} {r['tokens_per_call']:8.2f} "
            f"{r['drafted_per_round']:6.2f} {r['overhead']:11.3f}"
        )
    b = g["best_fixed"]
    print(
        f"auto: {g['auto_over_target_only']:.3f}x target-only, {g['auto_over_best_fixed']:.3f}x the best fixed "
        f"setting (--draft-max {b['draft_max']} --p-min {b['p_min']:g}, {b['speedup']:.3f}x target-only)"
    )
    print(
        f"whole run with auto (hashtags included) / (target-only + hashtag phase): "
        f"{g['auto_run_over_target_only_plus_hashtags']:.3f}"
    )
    print(
        f"to pin the best fixed setting instead of auto: "
        f"export LOCALSIDECAR_DRAFT_MAX={b['draft_max']} LOCALSIDECAR_P_MIN={b['p_min']:g}"
    )


# --- section: threads ------------------------------------------------------------------------


def threads_section(t_path, d_path, docs, args) -> dict:
    """Default threads vs every fixed count, rows interleaved over the repeats
    (each repeat starts with another setting)."""
    settings = ["default"] + [str(n) for n in range(1, default_threads() + 1)]
    sums = {(s, m): [0, 0.0] for s in settings for m in ("target-only", "run")}
    engines = {}
    try:
        for s in settings:
            cfg = EngineConfig(threads=None if s == "default" else int(s))
            engines[s] = Engine(t_path, d_path, cfg, PromptConfig())
        # warm-up: one unmeasured pass each (an engine's first pass over the documents ran
        # up to 2x slower under load, whatever its threads)
        for s in settings:
            run_all(engines[s], docs, "target-only", SpecConfig(max_tokens=args.max_tokens), s)
        for rep in range(args.repeats):
            for s in (
                settings[rep % len(settings) :] + settings[: rep % len(settings)]
            ):  # no setting always first
                for mode, label in (("target-only", "target-only"), (args.mode, "run")):
                    r = run_all(
                        engines[s],
                        docs,
                        mode,
                        SpecConfig(max_tokens=args.max_tokens, draft_max_cap=args.cap),
                        s,
                    )
                    sums[(s, label)][0] += r["tokens"]
                    sums[(s, label)][1] += r["gen_s"]
        final = {s: engines[s].threads() for s in settings}
    finally:
        for e in engines.values():
            e.close()
    rows = [
        {"threads": s, "mode": m, "tokens_per_s": n / t, "threads_at_end": final[s]}
        for (s, m), (n, t) in sums.items()
    ]
    out = {"load": args.load, "rows": rows}
    for m in ("target-only", "run"):
        by = {r["threads"]: r["tokens_per_s"] for r in rows if r["mode"] == m}
        fixed = {s: v for s, v in by.items() if s != "default"}
        best = max(fixed, key=fixed.get)
        out[m] = {
            "default": by["default"],
            "best_fixed_threads": int(best),
            "best_fixed": fixed[best],
            "one_thread": fixed["1"],
            "default_over_best_fixed": by["default"] / fixed[best],
            "default_over_one_thread": by["default"] / fixed["1"],
        }
    return out


def print_threads(t: dict) -> None:
    print(f"threads under load {t['load']} (busy processes): tokens/s")
    print(f"{'threads':>8} {'target-only':>12} {'run':>8}  threads at the end")
    by = {}
    for r in t["rows"]:
        by.setdefault(r["threads"], {})[r["mode"]] = r
    for s, m in by.items():
        print(
            f"{s:>8} {m['target-only']['tokens_per_s']:12.1f} {m['run']['tokens_per_s']:8.1f}  {m['run']['threads_at_end']}"
        )
    for m in ("target-only", "run"):
        x = t[m]
        print(
            f"{m}: default {x['default']:.1f} tok/s = {x['default_over_best_fixed']:.3f}x the best fixed "
            f"(--threads {x['best_fixed_threads']}, {x['best_fixed']:.1f}), {x['default_over_one_thread']:.3f}x one thread"
        )


# --- main ------------------------------------------------------------------------------------


def main() -> None:
    ap = script_parser(
        __doc__,
        max_tokens=96,
        threads=None,
        threads_help="fixed threads for the grid section [default: adaptive]",
    )
    ap.add_argument("--draft-max", default="1,2,3,4,6,8")
    ap.add_argument("--p-min", default="0")
    ap.add_argument("--cap", type=int, default=DEFAULT_DRAFT_MAX_CAP, help="--draft-max-cap of the auto rows")
    ap.add_argument("--mode", default="rebased")
    ap.add_argument("--load", type=int, default=0, help="busy processes running during the benchmark")
    ap.add_argument(
        "--load-seconds", type=float, default=1800, help="the busy processes stop by themselves after this"
    )
    ap.add_argument("--sections", default=None, help="grid,threads [default: grid; threads with --load]")
    ap.add_argument("--repeats", type=int, default=2, help="rounds over the thread settings (interleaved)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    sections = (args.sections or ("threads" if args.load else "grid")).split(",")
    docs = load_many(args.docs, max_chars=None).docs
    t_path, d_path = resolve_models(pair=args.pair, target=args.target, draft=args.draft)
    result = {
        "target": str(t_path),
        "draft": str(d_path),
        "docs": len(docs),
        "max_tokens": args.max_tokens,
        "load": args.load,
    }
    with busy_processes(args.load, args.load_seconds):
        if "grid" in sections:
            with Engine(t_path, d_path, EngineConfig(threads=args.threads), PromptConfig()) as engine:
                result["grid"] = grid_section(engine, docs, args)
        if "threads" in sections:
            result["threads"] = threads_section(t_path, d_path, docs, args)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"pair: {Path(t_path).name} / {Path(d_path).name}, {len(docs)} documents, max {args.max_tokens} tokens, "
        f"{args.load} busy processes"
    )
    if "grid" in result:
        print_grid(result["grid"])
    if "threads" in result:
        print_threads(result["threads"])


if __name__ == "__main__":
    main()
