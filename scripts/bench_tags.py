#!/usr/bin/env python3
"""The hashtag phase's price: seconds of the sidecar's phase (`run`'s
default, hashtags-eval variant rebased-shifted) and of the target writing
its own tags (variant target), each with two pickers (default: the score
picker, the default, and the token trie, the former default; `--pickers`
names others, e.g. trie,grammar). One engine per picker in one process, the
four runs of a document interleaved and their order rotated every round;
median phase seconds per document and geometric means over documents of the
ratios. --load N adds N busy processes.

    python scripts/bench_tags.py benchmarks/articles --repeats 3
    python scripts/bench_tags.py benchmarks/articles --load 1
"""

from __future__ import annotations

import math
import statistics
from dataclasses import replace
from pathlib import Path

from _common import busy_processes, script_parser  # the repository on sys.path

from localsidecar import Engine, EngineConfig, PromptConfig, SpecConfig
from localsidecar.hashtags.generation import HashtagSettings
from localsidecar.lab.hashtag_eval import run_sidecar, run_target
from localsidecar.registry.embedded import embedded_pair, models_dir


def gmean(xs: list[float]) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def main() -> None:
    ap = script_parser(__doc__, docs=["benchmarks/articles"], models=False, threads=None, ctx=4096)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--limit", type=int, default=10, help="at most this many documents")
    ap.add_argument("--load", type=int, default=0, help="busy processes for the whole benchmark")
    ap.add_argument("--load-seconds", type=float, default=3600)
    ap.add_argument("--pickers", default="score,trie", help="two pickers: the new one, then the reference")
    args = ap.parse_args()
    new, ref = args.pickers.split(",")
    RUNS = [("sidecar", new), ("target", new), ("sidecar", ref), ("target", ref)]
    files = sorted(f for d in args.docs for f in (Path(d).glob("*.txt") if Path(d).is_dir() else [Path(d)]))
    files = files[: args.limit]
    target, draft = embedded_pair(models_dir())
    base = EngineConfig(n_ctx=args.ctx, threads=args.threads)
    engines = {
        p: Engine(target, draft, replace(base, hashtags=HashtagSettings(picker=p)), PromptConfig())
        for p in (new, ref)
    }
    spec = SpecConfig()
    phase: dict[tuple[str, str], dict[str, list[float]]] = {r: {} for r in RUNS}
    tags: dict[tuple[str, str], dict[str, list[str]]] = {r: {} for r in RUNS}
    with busy_processes(args.load, args.load_seconds):
        for rnd in range(args.repeats):
            for i, f in enumerate(files):
                text = f.read_text(encoding="utf-8")
                k = (rnd + i) % len(RUNS)
                for who, picker in RUNS[k:] + RUNS[:k]:
                    eng = engines[picker]
                    if who == "sidecar":
                        r = run_sidecar(eng, f.stem, text, "rebased-shifted", spec)
                    else:
                        r = run_target(eng, f.stem, text, spec)
                    phase[(who, picker)].setdefault(f.stem, []).append(r.extra_s)
                    tags[(who, picker)][f.stem] = r.tags
    for e in engines.values():
        e.close()
    med = {r: {d: statistics.median(v) for d, v in phase[r].items()} for r in RUNS}
    docs = list(med[RUNS[0]])
    print(
        f"{len(docs)} documents, {args.repeats} rounds, {args.load} busy processes; hashtag phase, median ms"
    )
    print(f"{'document':<22}" + "".join(f"{w + '/' + p:>18}" for w, p in RUNS))
    for d in docs:
        print(f"{d[:22]:<22}" + "".join(f"{med[r][d] * 1000:>18.0f}" for r in RUNS))

    def ratio(a: tuple[str, str], b: tuple[str, str]) -> float:
        return gmean([med[a][d] / med[b][d] for d in docs])

    print("geometric mean over documents:")
    print(f"  sidecar/{new} ÷ target/{new}   {ratio(RUNS[0], RUNS[1]):.2f}  (both with the same picker)")
    print(
        f"  sidecar/{new} ÷ target/{ref}   {ratio(RUNS[0], RUNS[3]):.2f}  (the sidecar vs the former target)"
    )
    print(f"  sidecar/{ref} ÷ target/{ref}   {ratio(RUNS[2], RUNS[3]):.2f}  (before)")
    print(f"  {new} ÷ {ref}, sidecar          {ratio(RUNS[0], RUNS[2]):.2f}")
    print(f"  {new} ÷ {ref}, target           {ratio(RUNS[1], RUNS[3]):.2f}")

    def same(a: tuple[str, str], b: tuple[str, str]) -> int:
        return sum(set(tags[a][d]) == set(tags[b][d]) for d in docs)

    print(
        f"the same tag set: sidecar with either picker on {same(RUNS[0], RUNS[2])} of {len(docs)} documents, "
        f"sidecar and target with the {new} picker on {same(RUNS[0], RUNS[1])}"
    )


if __name__ == "__main__":
    main()
