"""Is `run` repeatable? Runs the same `localsidecar run ... --json` command
N times, alternating idle runs with runs under --load busy processes, and
counts the distinct outputs (summary, summary_ids, hashtags) per document
(goal: 1). Thread counts are left to the default (LOCALSIDECAR_THREADS unset).

    python scripts/bench_repeat.py benchmarks/articles/*.txt --repeats 10 --load 1
    python scripts/bench_repeat.py DOCS --repeats 4 -- --draft-max 3 --mode masked
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict


def run_once(docs: list[str], extra: list[str]) -> tuple[list[dict], float]:
    env = {k: v for k, v in os.environ.items() if k != "LOCALSIDECAR_THREADS"}
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "localsidecar", "run", *docs, "--json", *extra],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    return [json.loads(line) for line in out.splitlines()], time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("docs", nargs="+")
    ap.add_argument("--repeats", type=int, default=10, help="runs per condition")
    ap.add_argument(
        "--load", type=int, default=1, help="busy processes in the loaded runs (0: idle runs only)"
    )
    ap.add_argument("--out", default=None, help="append every record here (JSONL)")
    args, extra = ap.parse_known_args()
    extra = [x for x in extra if x != "--"]
    conditions = ["idle"] + ([f"load {args.load}"] if args.load else [])
    outputs: dict[str, dict[str, set]] = {c: defaultdict(set) for c in conditions}
    threads: dict[str, set] = {c: set() for c in conditions}
    walls: dict[str, list[float]] = {c: [] for c in conditions}
    every: dict[str, set] = defaultdict(set)
    for i in range(args.repeats):
        for cond in conditions if i % 2 == 0 else conditions[::-1]:
            busy = [
                subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(args.load if cond != "idle" else 0)
            ]
            try:
                recs, wall = run_once(args.docs, extra)
            finally:
                for b in busy:
                    b.kill()
                    b.wait()
            walls[cond].append(wall)
            for r in recs:
                key = json.dumps([r["summary"], r["summary_ids"], r["hashtags"]])
                outputs[cond][r["id"]].add(key)
                every[r["id"]].add(key)
                threads[cond].add(json.dumps(r["threads"], sort_keys=True))
            if args.out:
                with open(args.out, "a", encoding="utf-8") as f:
                    for r in recs:
                        f.write(json.dumps({"repeat": i, "condition": cond, **r}) + "\n")
            print(
                f"repeat {i + 1} {cond}: {wall:.1f} s; distinct outputs so far per document: "
                + " ".join(f"{d}:{len(s)}" for d, s in every.items()),
                flush=True,
            )
    for cond in conditions:
        counts = {d: len(s) for d, s in outputs[cond].items()}
        print(
            f"{cond}: {len(walls[cond])} runs, median {sorted(walls[cond])[len(walls[cond]) // 2]:.1f} s; "
            f"distinct outputs per document {counts}; thread counts seen {sorted(threads[cond])}"
        )
    print("both conditions together: " + " ".join(f"{d}:{len(s)}" for d, s in every.items()))


if __name__ == "__main__":
    main()
