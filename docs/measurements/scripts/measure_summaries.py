#!/usr/bin/env python3
"""How should a summary end on a sentence? Measures the stop policies in one run.

Greedy decoding is deterministic, so one target-only greedy summary per
document up to --cap tokens contains every shorter run: each policy is
replayed on those tokens.

- cut at cap H: generate until the model stops or H tokens, then cut the shown
  summary back to its last complete sentence;
- soft S / cap H: also stop at the first sentence end confirmed once S tokens
  are written (the `run` default: --soft-tokens S --max-tokens H).

Per policy: share of summaries that end on a complete sentence
(summary_complete), sentences shown (mean, range, share with 2–4), tokens
generated (the cost) and the share of generated text cut away.

Usage: python scripts/measure_summaries.py [DOCS ...] [--cap 256] [--soft 32,48,64,80] [--hard 96,128,160,200]
       [--target T --draft D] [--show S/H]
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
from _common import ROOT, script_parser  # noqa: E402  (scripts/_common.py: the repository on sys.path)

from localsidecar import Engine, EngineConfig, PromptConfig, SpecConfig
from localsidecar.decoding.sentences import SentenceStop, complete_summary, sentence_ends
from localsidecar.io.documents import load_many
from localsidecar.registry.models import resolve_models

DEFAULT_DOCS = [
    ROOT / "examples" / "notes.txt",
    ROOT / "examples" / "docs",
    ROOT / "examples" / "more",
    ROOT / "benchmarks" / "articles",
]


def replay(tokens: list[int], stopped: str, detok, soft: int | None, hard: int) -> dict:
    """What `run` shows with --soft-tokens soft --max-tokens hard, from a longer greedy run."""
    hook = SentenceStop(detok, soft)
    n, reason = len(tokens), stopped
    for i in range(1, len(tokens) + 1):
        if (r := hook(tokens[:i])) is not None:
            n, reason = i, r
            break
        if i == hard:
            n, reason = i, "max_tokens"
            break
    if reason not in ("eog", "sentence", "max_tokens") or n > hard:
        raise SystemExit(f"--cap is too small to replay a cap of {hard}")
    full = detok(tokens[:n]).strip()
    shown, complete = complete_summary(full)
    return {
        "tokens": n,
        "stopped": reason,
        "complete": complete,
        "shown": shown,
        "sentences": len(sentence_ends(shown, final=True)),
        "cut": 1 - len(shown) / max(1, len(full)),
    }


def report(name: str, rows: list[dict]) -> str:
    sents = [r["sentences"] for r in rows]
    return (
        f"{name:<16} {sum(r['complete'] for r in rows) / len(rows):>8.2f} {statistics.mean(sents):>6.1f} "
        f"{min(sents):>3}-{max(sents):<3} {sum(2 <= s <= 4 for s in sents) / len(rows):>6.2f} "
        f"{statistics.mean(r['tokens'] for r in rows):>7.1f} {max(r['tokens'] for r in rows):>5} "
        f"{statistics.mean(r['cut'] for r in rows):>6.2f}"
    )


def main() -> None:
    ap = script_parser(__doc__, docs=[str(p) for p in DEFAULT_DOCS], threads=None)
    ap.add_argument(
        "--cap", type=int, default=256, help="tokens generated per document (the longest replayed cap)"
    )
    ap.add_argument("--soft", default="32,48,64,80")
    ap.add_argument("--hard", default="96,128,160,200")
    ap.add_argument(
        "--show", default=None, help="S/H: print every summary shown under that policy (S may be 'none')"
    )
    a = ap.parse_args()
    softs = [int(x) for x in a.soft.split(",") if x]
    hards = [int(x) for x in a.hard.split(",") if x and int(x) <= a.cap]
    docs = load_many(a.docs).docs
    t, _ = resolve_models(pair=a.pair, target=a.target, draft=a.draft, require_draft=False)
    runs = []
    with Engine(t, None, EngineConfig(n_ctx=4096, threads=a.threads), PromptConfig()) as eng:
        spec = SpecConfig(max_tokens=a.cap)
        for d in docs:
            gen = eng.generate_target_only(eng.prompt(d.text), spec)
            runs.append((d.id, gen.tokens, gen.stopped))
        detok = eng.target.detokenize
        print(
            f"{len(docs)} documents, greedy target-only up to {a.cap} tokens: "
            f"{sum(s == 'eog' for _, _, s in runs)} ended by the model, lengths "
            f"{sorted(len(tk) for _, tk, _ in runs)}"
        )
        print(
            f"{'policy':<16} {'complete':>8} {'sent.':>6} {'range':<7} {'2-4':>6} {'tokens':>7} {'max':>5} {'cut':>6}"
        )
        policies = [(None, h) for h in hards] + [(s, h) for h in hards for s in softs if s < h]
        for soft, hard in policies:
            rows = [replay(tk, st, detok, soft, hard) for _, tk, st in runs]
            print(report(f"cut at {hard}" if soft is None else f"soft {soft} / {hard}", rows))
        if a.show:
            s, h = a.show.split("/")
            for doc_id, tk, st in runs:
                r = replay(tk, st, detok, None if s == "none" else int(s), int(h))
                print(
                    f"\n[{doc_id}] {r['tokens']} tokens, {r['stopped']}, {r['sentences']} sentences, "
                    f"complete={r['complete']}\n{r['shown']}"
                )
    print(
        "\ncomplete: share ending on a sentence; sent.: sentences shown (mean, range, share with 2-4); "
        "tokens: generated per document (mean, max); cut: share of the generated text not shown"
    )


if __name__ == "__main__":
    main()
