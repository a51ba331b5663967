#!/usr/bin/env python3
"""Tokens/s of llama-cpp-python's `Llama.create_completion` with no draft, with
its `LlamaPromptLookupDecoding`, and with `localsidecar.GGUFDraft` at a few
n_draft, on the same prompts, greedy, in one run; prints ratios to no draft.

Usage: python scripts/bench_llama_draft.py [DOCS ...] [--configs none,lookup,1,4,8,auto,4-redecode]
       [--max-tokens 96] [--threads 2] [--ctx 2048] [--p-min 0.0] [--pair/--target/--draft]

Configs: `none` (no draft), `lookup` (LlamaPromptLookupDecoding, num_pred_tokens
--lookup-tokens), an integer or `auto` (GGUFDraft n_draft), and `K-redecode`
(GGUFDraft n_draft=K that removes its proposals after each call and decodes
the accepted ones again, instead of keeping them: the cache strategy
GGUFDraft does not use, for comparison).

Each config gets a fresh Llama over the target (draft configs with
logits_all=True, which llama-cpp-python needs with any draft) and completes
every document's summary prompt (the same chat prompt as `localsidecar run`)
once. tokens/s = completion tokens / seconds of create_completion, prompt
processing included (the target's prompt costs the same in every config; a
draft processes the prompt too, and that is part of its cost).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from _common import script_parser  # the repository on sys.path
from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

from localsidecar import GGUFDraft, PromptConfig, load_llama
from localsidecar.backend import Model
from localsidecar.decoding.prompts import ChatFormat, build_prompt
from localsidecar.io.documents import load_many
from localsidecar.registry.models import resolve_models


def prompt_tokens(target: Path, texts: list[str]) -> list[list[int]]:
    model = Model(target)
    try:
        cfg = PromptConfig()
        fmt = ChatFormat.for_model(model, cfg.system)
        return [build_prompt(model, fmt, text, cfg).bare for text in texts]
    finally:
        model.close()


def make_draft(config: str, draft: Path, args) -> object | None:
    if config == "none":
        return None
    if config == "lookup":
        return LlamaPromptLookupDecoding(num_pred_tokens=args.lookup_tokens)
    k, _, variant = config.partition("-")
    g = GGUFDraft(
        draft, n_draft=k if k == "auto" else int(k), p_min=args.p_min, threads=args.threads, n_ctx=args.ctx
    )
    if variant == "redecode":
        g.keep_proposals = False
    elif variant:
        raise SystemExit(f"unknown config {config!r}")
    return g


def run_config(config: str, target: Path, draft: Path, prompts: list[list[int]], args) -> dict:
    draft_model = make_draft(config, draft, args)
    llm = load_llama(  # Llama(...) with the project's model params: plain Llama(...) died on AMX hosts
        target,
        n_ctx=args.ctx,
        n_threads=args.threads,
        n_threads_batch=args.threads,
        logits_all=draft_model is not None,
        draft_model=draft_model,
        verbose=False,
    )
    tokens, seconds, texts = 0, 0.0, []
    try:
        for p in prompts:
            t0 = time.perf_counter()
            out = llm.create_completion(p, max_tokens=args.max_tokens, temperature=0.0)
            seconds += time.perf_counter() - t0
            tokens += out["usage"]["completion_tokens"]
            texts.append(out["choices"][0]["text"])
    finally:
        llm.close()
    row = {"config": config, "tokens": tokens, "seconds": seconds, "texts": texts}
    if isinstance(draft_model, GGUFDraft):
        row["stats"] = draft_model.stats
        draft_model.close()
    return row


def print_rows(rows: list[dict]) -> None:
    base = next((r for r in rows if r["config"] == "none"), None)
    print(
        f"{'config':>12} {'tokens':>6} {'seconds':>8} {'tok/s':>7} {'ratio':>6} {'accept':>6} "
        f"{'tok/call':>8} {'draft s':>7} {'same text':>9}"
    )
    for r in rows:
        tps = r["tokens"] / r["seconds"] if r["seconds"] else 0.0
        ratio = (
            f"{tps / (base['tokens'] / base['seconds']):6.2f}" if base and base["seconds"] else f"{'-':>6}"
        )
        s = r.get("stats")
        acc = f"{s.acceptance_rate:6.2f}" if s and s.acceptance_rate is not None else f"{'-':>6}"
        per_call = f"{s.accepted / s.calls + 1:8.2f}" if s and s.calls else f"{'-':>8}"
        dsec = f"{s.draft_s + s.catchup_s:7.2f}" if s else f"{'-':>7}"
        same = f"{sum(a == b for a, b in zip(r['texts'], base['texts']))}/{len(r['texts'])}" if base else "-"
        print(
            f"{r['config']:>12} {r['tokens']:6d} {r['seconds']:8.2f} {tps:7.2f} {ratio} {acc} {per_call} {dsec} {same:>9}"
        )


def main() -> None:
    ap = script_parser(__doc__, max_tokens=96, threads=2, ctx=2048)
    ap.add_argument("--configs", default="none,lookup,1,4,8,auto,4-redecode")
    ap.add_argument("--p-min", type=float, default=0.0)
    ap.add_argument("--lookup-tokens", type=int, default=10, help="LlamaPromptLookupDecoding num_pred_tokens")
    args = ap.parse_args()

    docs = load_many(args.docs, max_chars=None).docs
    target, draft = resolve_models(pair=args.pair, target=args.target, draft=args.draft)
    prompts = prompt_tokens(Path(target), [d.text for d in docs])
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    print(
        f"pair: {Path(target).name} / {Path(draft).name}, {len(docs)} documents, max {args.max_tokens} tokens, "
        f"{args.threads} threads, p_min {args.p_min}, greedy"
    )
    rows = []
    for config in configs:
        rows.append(run_config(config, Path(target), Path(draft), prompts, args))
        print(f"  {config}: {rows[-1]['tokens']} tokens in {rows[-1]['seconds']:.2f} s", file=sys.stderr)
    print_rows(rows)


if __name__ == "__main__":
    main()
