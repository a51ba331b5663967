#!/usr/bin/env python3
"""Documents per minute with 1 worker × all cores vs N workers × fewer threads,
in one run, on the same documents (`localsidecar run --workers`).

Both settings go through the same driver loop as the CLI (cli/resumable.py)
with local worker processes, so peak RSS is measured the same way: each
worker's own ru_maxrss, read just before it exits. Model loading is timed
apart; documents/minute counts only the time after every worker is ready.
Prints the ratio N-workers ÷ 1-worker, and whether the records are identical
(they need not be when the thread counts differ: llama.cpp's own noise).

--load N runs N busy processes meanwhile (bench_run.py's): a laptop that runs
other programs.

Usage: python scripts/bench_scale.py [DOCS ...] [--n-docs 20] [--workers 2] [--cores C]
       [--max-tokens 64] [--mode rebased] [--load N] [--pair P | --target T --draft D] [--json]
Check it quickly with: --n-docs 3 --max-tokens 4
"""

from __future__ import annotations

import json
import time
from dataclasses import replace

from _common import ROOT, busy_processes, script_parser  # the repository on sys.path
from rich.console import Console

from localsidecar import EngineConfig, PromptConfig, SpecConfig
from localsidecar.backend.hardware import default_threads
from localsidecar.cli.jobs import ModelFiles, RunJob
from localsidecar.cli.resumable import run_resumable
from localsidecar.io.documents import Document, load_many
from localsidecar.scale.executors import ProcessExecutor

DETERMINISTIC = ("summary_ids", "hashtags", "alpha", "drafted", "accepted")


class MeasuredPool(ProcessExecutor):
    """A ProcessExecutor that times its start and reads its workers' peak RSS before closing."""

    def start(self) -> list[str]:
        t0 = time.perf_counter()
        notes = super().start()
        self.load_s = time.perf_counter() - t0
        self.ready_at = time.perf_counter()
        return notes

    def close(self, now: bool = False) -> None:
        if not now:
            self.stats = self.worker_stats()
        super().close(now)


def documents(specs: list[str], n: int) -> list[Document]:
    """The first n documents of `specs`, cycled when there are fewer (ids kept unique)."""
    docs = load_many(specs).docs
    return [replace(docs[i % len(docs)], id=f"{docs[i % len(docs)].id}#{i // len(docs)}") for i in range(n)]


def measure(job: RunJob, docs: list[Document], workers: int, threads: int) -> dict:
    pool: MeasuredPool | None = None
    records: dict[str, dict] = {}
    err = Console(stderr=True, highlight=False, markup=False)

    def start(n: int) -> MeasuredPool:
        nonlocal pool
        pool = MeasuredPool(job, workers, threads)
        return pool

    with run_resumable(err) as run:
        run.drive(docs, start, lambda doc, rec: records.__setitem__(doc.id, rec))
    seconds = time.perf_counter() - pool.ready_at
    return {
        "workers": workers,
        "threads": threads,
        "load_s": round(pool.load_s, 2),
        "run_s": round(seconds, 2),
        "docs_per_min": round(60 * len(docs) / seconds, 2),
        "peak_rss_mb": [round(s["peak_rss_kb"] / 1024, 1) for s in pool.stats],
        "records": records,
    }


def main() -> None:
    ap = script_parser(__doc__, docs=[str(ROOT / "examples")], max_tokens=64)
    ap.add_argument("--n-docs", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2, help="N of the N-worker setting")
    ap.add_argument(
        "--cores", type=int, default=None, help="threads of the 1-worker setting [default: physical cores]"
    )
    ap.add_argument("--mode", default="rebased")
    ap.add_argument("--load", type=int, default=0, help="busy processes running during the benchmark")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()

    cores = a.cores or default_threads()
    files = ModelFiles.resolve(a.pair, a.target, a.draft, None, need_draft=a.mode != "target-only")
    job = RunJob(
        files, EngineConfig(n_ctx=2048), PromptConfig(), mode=a.mode, spec=SpecConfig(max_tokens=a.max_tokens)
    )
    docs = documents(a.docs, a.n_docs)
    with busy_processes(a.load, 3600):
        one = measure(job, docs, 1, cores)
        many = measure(job, docs, a.workers, max(1, cores // a.workers))
    same = all(
        {k: one["records"][i][k] for k in DETERMINISTIC} == {k: many["records"][i][k] for k in DETERMINISTIC}
        for i in one["records"]
    )
    rows = [{k: v for k, v in r.items() if k != "records"} for r in (one, many)]
    ratio = many["docs_per_min"] / one["docs_per_min"]
    if a.json:
        print(
            json.dumps(
                {
                    "documents": len(docs),
                    "max_tokens": a.max_tokens,
                    "load": a.load,
                    "settings": rows,
                    "ratio": round(ratio, 3),
                    "records_identical": same,
                }
            )
        )
        return
    print(
        f"{len(docs)} documents, --max-tokens {a.max_tokens}, --mode {a.mode}, target {files.target.name}, "
        f"{a.load} busy processes"
    )
    print(f"{'setting':<22}{'load s':>8}{'run s':>8}{'docs/min':>10}  peak RSS per worker (MB)")
    for r in rows:
        setting = f"{r['workers']} worker{'s' * (r['workers'] > 1)} × {r['threads']} thread{'s' * (r['threads'] > 1)}"
        print(
            f"{setting:<22}{r['load_s']:>8.1f}{r['run_s']:>8.1f}{r['docs_per_min']:>10.1f}  "
            + ", ".join(f"{x:.0f}" for x in r["peak_rss_mb"])
        )
    print(f"ratio: {a.workers} workers ÷ 1 worker = {ratio:.2f}× documents per minute")
    print("records identical: " + ("yes" if same else "no (different thread counts: llama.cpp's own noise)"))


if __name__ == "__main__":
    main()
