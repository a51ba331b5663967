#!/usr/bin/env python3
"""The default `run` against target-only, as two separate processes each
round: summary tokens/s of `localsidecar run DOC --json` (default settings)
over that of `--mode target-only`, the order alternating every round, median
ratio per document and the geometric mean over documents. With --checkout
DIR a second source tree (for example a `git worktree` of the previous
commit) runs in the same rounds, interleaved, so before and after are
measured under the same conditions; --load N adds N busy processes.

    python scripts/bench_default.py examples/notes.txt benchmarks/articles/birds.txt --repeats 6
    python scripts/bench_default.py DOCS --checkout /tmp/before --load 1
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

from _common import ROOT, busy_processes  # the repository on sys.path


def summary_rate(tree: Path, doc: str, extra: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("LOCALSIDECAR_THREADS", None)  # the default adapts the thread count
    out = subprocess.run(
        [sys.executable, "-m", "localsidecar", "run", doc, "--json", *extra],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
        check=True,
    ).stdout
    return float(json.loads(out.splitlines()[-1])["tokens_per_s"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("docs", nargs="+")
    ap.add_argument("--repeats", type=int, default=6, help="rounds per document")
    ap.add_argument("--checkout", default=None, help="a second source tree measured in the same rounds")
    ap.add_argument("--load", type=int, default=0, help="busy processes for the whole benchmark")
    ap.add_argument("--load-seconds", type=float, default=3600)
    args = ap.parse_args()
    trees = {"this": ROOT} | ({"checkout": Path(args.checkout).resolve()} if args.checkout else {})
    docs = [str(Path(d).resolve()) for d in args.docs]
    ratios: dict[str, dict[str, list[float]]] = {t: {d: [] for d in docs} for t in trees}
    with busy_processes(args.load, args.load_seconds):
        for i in range(args.repeats):
            for doc in docs:
                order = list(trees) if i % 2 == 0 else list(trees)[::-1]
                for name in order:
                    runs = [[], ["--mode", "target-only"]]
                    if (i // 2) % 2:
                        runs.reverse()
                    rate = {}
                    for extra in runs:
                        rate[bool(extra)] = summary_rate(trees[name], doc, extra)
                    ratios[name][doc].append(rate[False] / rate[True])
                    print(
                        f"round {i + 1} {Path(doc).stem} {name}: default {rate[False]:.1f} tok/s, "
                        f"target-only {rate[True]:.1f} tok/s, ratio {rate[False] / rate[True]:.3f}",
                        file=sys.stderr,
                        flush=True,
                    )
    print(f"{args.repeats} rounds, {args.load} busy processes; default ÷ target-only, summary tokens/s")
    for name, per_doc in ratios.items():
        medians = {Path(d).stem: statistics.median(r) for d, r in per_doc.items()}
        gmean = math.exp(sum(math.log(m) for m in medians.values()) / len(medians))
        cells = " ".join(
            f"{k} {m:.3f} [{min(per_doc[d]):.2f}-{max(per_doc[d]):.2f}]"
            for (k, m), d in zip(medians.items(), per_doc)
        )
        print(f"{name}: {cells}; geometric mean {gmean:.3f}")


if __name__ == "__main__":
    main()
