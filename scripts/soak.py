#!/usr/bin/env python
"""Soak test: `localsidecar run` and `localsidecar acceptance` over a few
hundred generated documents of random lengths, each command in one process.

Prints per command: documents, wall time, documents/minute, peak RSS, RSS
after the first tenth of the documents and at the end (growth), and any
error. Exits 1 if anything failed: a non-zero exit, an error or traceback on
stderr, a result file that is not one valid line per document.

    python scripts/soak.py                       # 200 documents, a few minutes on 2 idle cores
    python scripts/soak.py --docs 1000 --max-words 800 --max-tokens 32
    python scripts/soak.py --threads 1           # on a machine shared with other work

The documents are generated from --seed (same seed, same documents): words,
numbers, punctuation, some non-ASCII text and control characters, in one
JSONL file. The default model pair (embedded) is used unless --pair/--target/
--draft are given (passed through to both commands).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

WORDS = (
    "the council river bakery solar budget meeting report water school library road festival museum "
    "bridge orchard harbour residents mayor planning weather storm energy prices market train station "
    "hospital nurses teachers students farmers harvest rain flood drought park trees bicycle lane "
    "said would could after before during because although however new old local national"
).split()
ODD = [
    "café",
    "naïve",
    "Zürich",
    "東京",
    "Ελλάδα",
    "مرحبا",
    "emoji 🚲",
    "e\u0301",
    "—",
    "«quoted»",
    "\t",
    "\u200b",
    "[bold]",
    "<|im_end|>",
    "#tag",
    "3.5%",
    "€12",
    "\x07",
]


def make_docs(n: int, seed: int, min_words: int, max_words: int) -> list[dict]:
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        k = rng.randint(min_words, max_words)
        words = [
            rng.choice(ODD)
            if rng.random() < 0.03
            else str(rng.randint(1, 2030))
            if rng.random() < 0.05
            else rng.choice(WORDS)
            for _ in range(k)
        ]
        sentences, cur = [], []
        for w in words:
            cur.append(w)
            if len(cur) >= rng.randint(6, 20):
                sentences.append(" ".join(cur).capitalize() + rng.choice([".", ".", "!", "?"]))
                cur = []
        if cur:
            sentences.append(" ".join(cur).capitalize() + ".")
        paragraphs = [" ".join(sentences[j : j + 4]) for j in range(0, len(sentences), 4)]
        docs.append({"id": f"doc-{i:05d}", "text": "\n\n".join(paragraphs)})
    return docs


def rss_kb(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def count_lines(path: Path) -> int:
    try:
        with open(path, "rb") as f:
            return f.read().count(b"\n")
    except OSError:
        return 0


def soak(name: str, args: list[str], out: Path, n_docs: int, work: Path) -> dict:
    """Run one command to completion, sampling its RSS against its progress."""
    stdout_path, stderr_path = work / f"{name}.stdout", work / f"{name}.stderr"
    cmd = [sys.executable, "-m", "localsidecar.cli", *args]
    print(f"$ {' '.join(cmd)}", flush=True)
    samples: list[tuple[int, int]] = []  # (documents done, RSS kB)
    t0 = time.perf_counter()
    with open(stdout_path, "wb") as so, open(stderr_path, "wb") as se:
        proc = subprocess.Popen(cmd, stdout=so, stderr=se)
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(0.5):
                kb = rss_kb(proc.pid)
                if kb:
                    samples.append((count_lines(out), kb))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        stop.set()
        sampler.join()
    wall = time.perf_counter() - t0
    stderr = stderr_path.read_text(encoding="utf-8", errors="replace")
    problems = []
    if proc.returncode != 0:
        problems.append(f"exit code {proc.returncode}")
    bad = [line for line in stderr.splitlines() if line.startswith("Error") or "Traceback" in line]
    problems += bad[:3]
    try:
        lines = out.read_bytes().decode("utf-8").splitlines()
        ids = [json.loads(line)["id"] for line in lines]
        if sorted(ids) != [f"doc-{i:05d}" for i in range(n_docs)]:
            problems.append(
                f"{out.name}: {len(ids)} records ({len(set(ids))} distinct ids) for {n_docs} documents"
            )
    except (OSError, ValueError, KeyError) as exc:
        problems.append(f"{out.name}: not valid JSONL ({exc})")
    # while documents are being processed (after the last one the models are freed)
    warm = [kb for done, kb in samples if max(1, n_docs // 10) <= done < n_docs] or [
        kb for _, kb in samples[:1]
    ]
    return {
        "command": name,
        "docs": n_docs,
        "wall_s": round(wall, 1),
        "docs_per_min": round(n_docs / wall * 60, 1),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),  # kB on Linux
        "rss_after_10pct_mb": round(warm[0] / 1024, 1) if warm else None,
        "rss_end_mb": round(warm[-1] / 1024, 1) if warm else None,
        "errors": problems,
    }


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--docs", type=int, default=200, help="documents to generate [200]")
    ap.add_argument("--seed", type=int, default=0, help="seed of the generated documents [0]")
    ap.add_argument("--min-words", type=int, default=5, help="shortest document in words [5]")
    ap.add_argument("--max-words", type=int, default=200, help="longest document in words [200]")
    ap.add_argument("--max-tokens", type=int, default=8, help="summary tokens per document [8]")
    ap.add_argument("--mode", default="rebased", help="run --mode [rebased: summary + hashtags]")
    ap.add_argument(
        "--conditions", default="baseline,visible,masked,rebased,deferred", help="acceptance --conditions"
    )
    ap.add_argument("--commands", default="run,acceptance", help="which commands to soak [run,acceptance]")
    ap.add_argument("--threads", type=int, default=None, help="CPU threads per command [all cores]")
    ap.add_argument("--ctx", type=int, default=2048, help="context size [2048]")
    ap.add_argument("--work-dir", default=None, help="keep documents and results here [a temporary folder]")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object at the end")
    ap.add_argument(
        "model_args", nargs=argparse.REMAINDER, help="after --: passed to both commands, e.g. -- --pair small"
    )
    a = ap.parse_args()
    if a.docs < 1 or a.min_words < 1 or a.max_words < a.min_words:
        ap.error("need --docs >= 1 and 1 <= --min-words <= --max-words")
    extra = [x for x in a.model_args if x != "--"]
    common = ["--ctx", str(a.ctx), "--max-tokens", str(a.max_tokens), *extra]
    if a.threads:
        common += ["--threads", str(a.threads)]

    tmp = None if a.work_dir else tempfile.TemporaryDirectory(prefix="localsidecar-soak-")
    work = Path(a.work_dir or tmp.name)
    work.mkdir(parents=True, exist_ok=True)
    docs_path = work / "docs.jsonl"
    docs = make_docs(a.docs, a.seed, a.min_words, a.max_words)
    docs_path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    chars = [len(d["text"]) for d in docs]
    print(
        f"{a.docs} documents, {min(chars)}-{max(chars)} characters (mean {sum(chars) / len(chars):.0f}), "
        f"seed {a.seed}, in {docs_path}",
        flush=True,
    )

    results = []
    for name in [c.strip() for c in a.commands.split(",") if c.strip()]:
        out = work / f"{name}.jsonl"
        if out.exists():
            out.unlink()
        if name == "run":
            args = ["run", str(docs_path), "--mode", a.mode, "--json", "--out", str(out), *common]
        elif name == "acceptance":
            args = [
                "acceptance",
                str(docs_path),
                "--conditions",
                a.conditions,
                "--json",
                "--out",
                str(out),
                "--summaries",
                str(work / "summaries.jsonl"),
                *common,
            ]
        else:
            ap.error(f"unknown command {name!r} in --commands (run, acceptance)")
        results.append(soak(name, args, out, a.docs, work))
        r = results[-1]
        growth = f"{r['rss_after_10pct_mb']} -> {r['rss_end_mb']} MB" if r["rss_after_10pct_mb"] else "-"
        print(
            f"{name:<11} {r['docs']} docs in {r['wall_s']} s: {r['docs_per_min']} docs/min, "
            f"peak RSS {r['peak_rss_mb']} MB, RSS after 10% -> end {growth}, "
            f"errors: {'; '.join(r['errors']) or 'none'}",
            flush=True,
        )
    if a.json:
        print(json.dumps(results))
    if tmp:
        tmp.cleanup()
    failed = [r["command"] for r in results if r["errors"]]
    print("FAILED: " + ", ".join(failed) if failed else "soak passed: nothing failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
