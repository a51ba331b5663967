#!/usr/bin/env python3
"""Buffer types against speed: the project's buffer-type decision
(backend/buffers.py) against use_extra_bufts=False, in one run.

For each model of the pair (target and draft): tokens/s of one-token decoding
(target-only generation: greedy tokens after a short prompt, one per decode)
and of prompt processing (one 512-token batch), both configurations loaded
side by side and measured in interleaved rounds; the ratios chosen ÷ off.
The goal: >= 1.0 everywhere (never slower than extra buffers off), and the
CPU_REPACK speed kept where llama.cpp offers it (Q4_0 weights).

Usage: python scripts/bench_buffers.py [--target T --draft D] [--rounds 3] [--tokens 64] [--threads N] [--json]
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

from localsidecar.backend import Context, Model  # noqa: E402
from localsidecar.backend.buffers import BufferPlan, plan  # noqa: E402
from localsidecar.backend.hardware import default_threads  # noqa: E402

TEXT = (ROOT / "examples" / "notes.txt").read_text(encoding="utf-8")


def one_token_rate(ctx: Context, prompt: list[int], n: int) -> float:
    ctx.clear()
    ctx.decode_tokens(prompt, 0, (0,), "last")
    tok, t0 = int(np.argmax(ctx.logits(-1))), time.perf_counter()
    for i in range(n):
        ctx.decode_tokens([tok], len(prompt) + i, (0,), "last")
        tok = int(np.argmax(ctx.logits(-1)))
    return n / (time.perf_counter() - t0)


def batch_rate(ctx: Context, batch: list[int]) -> float:
    ctx.clear()
    t0 = time.perf_counter()
    ctx.decode_tokens(batch, 0, (0,), "last")
    return len(batch) / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target")
    ap.add_argument("--draft")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=64, help="one-token decodes per round")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.target:
        paths = {"target": Path(args.target), **({"draft": Path(args.draft)} if args.draft else {})}
    else:
        from localsidecar.registry.embedded import embedded_pair

        t, d = embedded_pair()
        paths = {"target": t, "draft": d}
    threads = args.threads or default_threads()
    chosen = plan()
    configs = {
        "chosen": chosen,
        "off": BufferPlan(False, chosen.amx_offered, chosen.offered, "use_extra_bufts=False"),
    }
    report = {"decision": chosen.reason, "threads": threads, "models": {}}
    for role, path in paths.items():
        models = {name: Model(path, buffers=b) for name, b in configs.items()}
        ctxs = {name: Context(m, 1024, n_batch=512, n_threads=threads) for name, m in models.items()}
        toks = models["chosen"].tokenize(TEXT)
        batch = (toks * (1 + 512 // len(toks)))[:512]
        prompt = toks[:32]
        rates = {name: {"one_token": [], "batch_512": []} for name in configs}
        for r in range(args.rounds):
            order = (
                list(configs) if r % 2 == 0 else list(reversed(configs))
            )  # rotated: no config always first
            for name in order:
                rates[name]["one_token"].append(one_token_rate(ctxs[name], prompt, args.tokens))
                rates[name]["batch_512"].append(batch_rate(ctxs[name], batch))
        med = {name: {k: float(np.median(v)) for k, v in rs.items()} for name, rs in rates.items()}
        report["models"][role] = {
            "file": path.name,
            "buffers": {name: m.buffer_sizes for name, m in models.items()},
            "tokens_per_s": med,
            "ratio_chosen_over_off": {k: med["chosen"][k] / med["off"][k] for k in med["chosen"]},
        }
        for c in ctxs.values():
            c.close()
        for m in models.values():
            m.close()
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"decision: {report['decision']}; threads {threads}; medians of {args.rounds} interleaved rounds")
    for role, r in report["models"].items():
        bufs = {n: ", ".join(f"{k} {v:.0f} MiB" for k, v in b.items()) for n, b in r["buffers"].items()}
        print(f"{role} {r['file']}: chosen [{bufs['chosen']}] vs off [{bufs['off']}]")
        for k in ("one_token", "batch_512"):
            print(
                f"  {k:10s} chosen {r['tokens_per_s']['chosen'][k]:8.1f} tok/s  off {r['tokens_per_s']['off'][k]:8.1f} tok/s"
                f"  ratio {r['ratio_chosen_over_off'][k]:.2f}x"
            )


if __name__ == "__main__":
    main()
