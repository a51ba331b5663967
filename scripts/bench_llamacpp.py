#!/usr/bin/env python3
"""Compare localsidecar's speculative loop with llama.cpp's own
`llama-speculative-simple` on the same pair, prompts, draft size and greedy
settings; prints the tokens/s ratio measured in one run (goal: >= 1.0).

Build the example from the llama.cpp sources vendored in the llama-cpp-python
sdist (same llama.cpp as the Python package):

    pip download --no-deps --no-binary :all: llama-cpp-python==<version>
    tar xzf llama_cpp_python-<version>.tar.gz && cd llama_cpp_python-<version>/vendor/llama.cpp
    cmake -B build -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF && cmake --build build -j --target llama-speculative-simple

Usage: python scripts/bench_llamacpp.py --binary build/bin/llama-speculative-simple
       [DOCS ...] [--draft-max 1,4] [--max-tokens 96] [--threads 2] [--pair/--target/--draft]

Both sides: greedy (temperature 0), p-min 0, the target's chat prompt with no
hidden suffix (localsidecar mode "baseline": the draft drafts exactly as in
rebased), tokens/s of the generation loop after the prompt is processed.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

from _common import script_parser  # the repository on sys.path

from localsidecar import Engine, EngineConfig, PromptConfig, SpecConfig
from localsidecar.io.documents import load_many
from localsidecar.registry.models import resolve_models

DECODED = re.compile(r"decoded\s+(\d+) tokens in\s+([\d.]+) seconds")
COUNTER = re.compile(r"\b(n_drafted|n_accept)\s*=\s*(\d+)")


def run_llamacpp(
    binary: str,
    target: Path,
    draft: Path,
    prompt_text: str,
    k: int,
    max_tokens: int,
    threads: int,
    n_ctx: int,
) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".txt", encoding="utf-8") as f:
        f.write(prompt_text)
        f.flush()
        cmd = [
            binary,
            "-m",
            str(target),
            "-md",
            str(draft),
            "-f",
            f.name,
            "-n",
            str(max_tokens),
            "--spec-type",
            "draft-simple",
            "--spec-draft-n-max",
            str(k),
            "--spec-draft-n-min",
            "0",
            "--spec-draft-p-min",
            "0",
            "--temp",
            "0",
            "-t",
            str(threads),
            "-td",
            str(threads),
            "-c",
            str(n_ctx),
        ]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    log = out.stdout + out.stderr
    m = DECODED.search(log)
    if out.returncode != 0 or not m:
        raise SystemExit(f"llama-speculative-simple failed ({out.returncode}): {log[-400:]}")
    counters = {k: int(v) for k, v in COUNTER.findall(log)}
    return {"tokens": int(m.group(1)), "seconds": float(m.group(2)), **counters}


def main() -> None:
    ap = script_parser(__doc__, max_tokens=96, threads=2, ctx=2048)
    ap.add_argument("--binary", required=True, help="path of llama-speculative-simple")
    ap.add_argument("--draft-max", default="1,4")
    args = ap.parse_args()

    docs = load_many(args.docs, max_chars=None).docs
    t_path, d_path = resolve_models(pair=args.pair, target=args.target, draft=args.draft)
    ks = [int(k) for k in args.draft_max.split(",")]
    print(
        f"pair: {Path(t_path).name} / {Path(d_path).name}, {len(docs)} documents, max {args.max_tokens} tokens, "
        f"{args.threads} threads"
    )
    print(
        f"{'k':>2} {'ours tok/s':>10} {'llama.cpp tok/s':>15} {'ratio':>6} {'ours acc':>8} {'llama.cpp acc':>13} "
        f"{'ours tokens':>11} {'llama.cpp tokens':>16}"
    )
    with Engine(t_path, d_path, EngineConfig(threads=args.threads, n_ctx=args.ctx), PromptConfig()) as engine:
        prompts = []
        for doc in docs:
            p = engine.prompt(doc.text)
            text = engine.target.detokenize(p.bare, special=True)
            if engine.target.tokenize(text, special=True, add_bos=engine.target.add_bos) != p.bare:
                raise SystemExit(f"{doc.id}: the prompt text does not tokenize back to the same ids")
            prompts.append((doc, text))
        engine.run(docs[0].id, docs[0].text, "baseline", SpecConfig(max_tokens=8))  # warm-up
        for k in ks:
            spec = SpecConfig(draft_max=k, max_tokens=args.max_tokens)
            ours = {"tokens": 0, "seconds": 0.0, "n_drafted": 0, "n_accept": 0}
            ref = {"tokens": 0, "seconds": 0.0, "n_drafted": 0, "n_accept": 0}
            for doc, text in prompts:
                # interleaved per document, so load changes hit both sides alike
                g = engine.run(doc.id, doc.text, "baseline", spec).gen
                for key, v in (
                    ("tokens", len(g.tokens)),
                    ("seconds", g.gen_s),
                    ("n_drafted", g.stats.n_drafted),
                    ("n_accept", g.stats.n_accept),
                ):
                    ours[key] += v
                r = run_llamacpp(
                    args.binary, t_path, d_path, text, k, args.max_tokens, args.threads, args.ctx
                )
                for key in ref:
                    ref[key] += r.get(key, 0)
            o_tps, r_tps = ours["tokens"] / ours["seconds"], ref["tokens"] / ref["seconds"]
            o_acc = ours["n_accept"] / max(1, ours["n_drafted"])
            r_acc = ref["n_accept"] / max(1, ref["n_drafted"])
            print(
                f"{k:>2} {o_tps:10.1f} {r_tps:15.1f} {o_tps / r_tps:6.2f} {o_acc:8.3f} {r_acc:13.3f} "
                f"{ours['tokens']:11d} {ref['tokens']:16d}"
            )


if __name__ == "__main__":
    main()
