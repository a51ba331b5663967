#!/usr/bin/env python3
"""Extract summaries (`run`'s default on the embedded pair) against free ones, in one run.

Every round runs each document under four settings, in an order that alternates from
round to round so load changes hit them alike: the default (`--summary extract`, rebased,
--draft-max auto), `--summary free` (same layout and drafting), and both target-only. It
prints per document the median summary seconds, summary tokens/s and whole-run seconds
(prompt, summary and hashtags) of each setting, then the ratios extract ÷ free of the
whole runs' time and of the summaries' time (medians of the per-round ratios, geometric
mean over documents). --load N adds N busy processes for the whole benchmark;
--no-target-only leaves the two target-only settings out. The free settings decode as
`run --summary free` does (--names document, the support check).

    python scripts/bench_summary.py benchmarks/notes-style --repeats 3
    LOCALSIDECAR_THREADS=1 python scripts/bench_summary.py benchmarks/notes-style --load 1
"""

from __future__ import annotations

import math
import os
import statistics
import sys

from _common import busy_processes, script_parser  # the repository on sys.path

SETTINGS = {
    "extract": ("rebased", "extract"),
    "free": ("rebased", "free"),
    "extract target-only": ("target-only", "extract"),
    "free target-only": ("target-only", "free"),
}


def main() -> None:
    ap = script_parser(
        __doc__,
        ctx=4096,
        threads=None,
        threads_help="default: LOCALSIDECAR_THREADS, else adapt",
    )
    ap.add_argument(
        "--max-tokens", type=int, default=None, help="most summary tokens (default: run's auto, by the mode)"
    )
    ap.add_argument("--repeats", type=int, default=3, help="rounds per document")
    ap.add_argument("--load", type=int, default=0, help="busy processes for the whole benchmark")
    ap.add_argument("--load-seconds", type=float, default=3600)
    ap.add_argument("--no-target-only", action="store_true", help="time extract and free with the draft only")
    args = ap.parse_args()

    from localsidecar import Engine, EngineConfig, PromptConfig, SpecConfig
    from localsidecar.decoding.defaults import DEFAULT_SOFT_TOKENS
    from localsidecar.io.documents import load_many
    from localsidecar.registry.models import resolve_models

    docs = load_many(args.docs).docs
    threads = args.threads or (
        int(os.environ["LOCALSIDECAR_THREADS"]) if os.environ.get("LOCALSIDECAR_THREADS") else None
    )
    target, draft = resolve_models(pair=args.pair, target=args.target, draft=args.draft)
    cfg = EngineConfig(n_ctx=args.ctx, threads=threads, soft_tokens=DEFAULT_SOFT_TOKENS)
    settings = {k: v for k, v in SETTINGS.items() if not (args.no_target_only and v[0] == "target-only")}
    rows: dict[str, dict[str, list[tuple[float, float, int]]]] = {
        d.id: {s: [] for s in settings} for d in docs
    }
    load_before = os.getloadavg()
    with Engine(target, draft, cfg, PromptConfig()) as engine, busy_processes(args.load, args.load_seconds):
        engine.run(docs[0].id, docs[0].text, "rebased", SpecConfig(max_tokens=8))  # warm-up
        for i in range(args.repeats):
            for j, doc in enumerate(docs):
                order = list(settings) if (i + j) % 2 == 0 else list(settings)[::-1]
                for name in order:
                    mode, summary = settings[name]
                    spec = SpecConfig(max_tokens=args.max_tokens, summary=summary, names="document")
                    r = engine.run(doc.id, doc.text, mode, spec)
                    rows[doc.id][name].append((r.gen.gen_s, r.wall_s, len(r.gen.tokens)))
                print(f"round {i + 1} {doc.id} done", file=sys.stderr, flush=True)
    load = os.getloadavg()
    print(
        f"{args.repeats} rounds, {args.load} busy processes, threads {threads or 'adaptive'}, "
        f"load average (1, 5, 15 min) at the start {', '.join(f'{x:.1f}' for x in load_before)}, "
        f"at the end {', '.join(f'{x:.1f}' for x in load)}"
    )
    print(f"{'document':24} " + " ".join(f"{s:>34}" for s in settings))
    print(f"{'':24} " + " ".join(f"{'summary s  tok/s  run s':>34}" for _ in settings))
    whole_ratios, summary_ratios = [], []
    for doc_id, by in rows.items():
        cells = []
        for name in settings:
            gen = statistics.median(g for g, _, _ in by[name])
            wall = statistics.median(w for _, w, _ in by[name])
            tps = statistics.median(n / g if g > 0 else 0.0 for g, _, n in by[name])
            cells.append(f"{gen:>10.2f} {tps:>6.1f} {wall:>7.2f}")
        print(f"{doc_id[:24]:24} " + " ".join(f"{c:>34}" for c in cells))
        whole_ratios.append(statistics.median(e[1] / f[1] for e, f in zip(by["extract"], by["free"])))
        summary_ratios.append(statistics.median(e[0] / f[0] for e, f in zip(by["extract"], by["free"])))

    def gmean(xs: list[float]) -> float:
        return math.exp(sum(math.log(x) for x in xs) / len(xs))

    print(
        f"extract ÷ free, whole run's time: {gmean(whole_ratios):.3f} (per document {', '.join(f'{x:.2f}' for x in whole_ratios)})"
    )
    print(
        f"extract ÷ free, summary time: {gmean(summary_ratios):.3f} (per document {', '.join(f'{x:.2f}' for x in summary_ratios)})"
    )


if __name__ == "__main__":
    main()
