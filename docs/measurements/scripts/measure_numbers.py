#!/usr/bin/env python3
"""Numbers from the document: how many of a summary's numbers its document does not have, --numbers free
against --numbers document, in one run.

Each document is summarized twice with `run`'s defaults (mode rebased, --draft-max auto, the sentence
stop), the two settings interleaved (which goes first alternates), and the summary shown is checked:
every number in it (decoding.numbers.NUMBER) is looked up among the document's. Prints a per-document
table, totals, the summary tokens/s ratio document/free (a ratio within one run: meaningful on a busy
machine where absolute speeds are not) and, with --show, the sentences that hold numbers.

Usage: python scripts/measure_numbers.py [DOCS ...] [--show] [--threads N]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
from _common import ROOT, script_parser  # noqa: E402  (scripts/_common.py: the repository on sys.path)

from localsidecar import Engine, EngineConfig, PromptConfig, SpecConfig
from localsidecar.decoding.defaults import DEFAULT_SOFT_TOKENS
from localsidecar.decoding.numbers import DOCUMENT, FREE, document_numbers, numbers_in
from localsidecar.decoding.sentences import sentence_ends
from localsidecar.io.documents import load_many
from localsidecar.registry.models import resolve_models

DEFAULT_DOCS = [ROOT / "benchmarks" / "notes-style", ROOT / "examples" / "more"]


def sentences_with_numbers(text: str) -> list[str]:
    out, start = [], 0
    for end in [*sentence_ends(text, final=True), len(text)]:
        s = text[start:end].strip()
        if s and numbers_in(s):
            out.append(s)
        start = end
    return list(dict.fromkeys(out))


def main() -> None:
    ap = script_parser(__doc__, docs=[str(p) for p in DEFAULT_DOCS], threads=2)
    ap.add_argument(
        "--show", action="store_true", help="print the sentences with numbers, free then document"
    )
    a = ap.parse_args()
    docs = load_many(a.docs).docs
    t, d = resolve_models(pair=a.pair, target=a.target, draft=a.draft)
    cfg = EngineConfig(n_ctx=4096, threads=a.threads, soft_tokens=DEFAULT_SOFT_TOKENS)
    totals = {m: {"numbers": 0, "invented": 0, "tokens": 0, "gen_s": 0.0} for m in (FREE, DOCUMENT)}
    with Engine(t, d, cfg, PromptConfig()) as eng:
        eng.run(docs[0].id, docs[0].text, "rebased", SpecConfig(max_tokens=8))  # warm-up
        print(
            f"{'document':<28} {'free: numbers':>13} {'invented':>8} {'document: numbers':>17} {'invented':>8}"
        )
        for i, doc in enumerate(docs):
            have = document_numbers(doc.text)
            row = {}
            for mode in (FREE, DOCUMENT) if i % 2 == 0 else (DOCUMENT, FREE):
                r = eng.run(doc.id, doc.text, "rebased", SpecConfig(numbers=mode))
                nums = numbers_in(r.summary)
                bad = [n for n in nums if n not in have]
                row[mode] = (nums, bad, r.summary)
                tot = totals[mode]
                tot["numbers"] += len(nums)
                tot["invented"] += len(bad)
                tot["tokens"] += len(r.gen.tokens)
                tot["gen_s"] += r.gen.gen_s
            (fn, fb, fs), (dn, db, ds) = row[FREE], row[DOCUMENT]
            name = doc.id.rsplit("/", 1)[-1][:28]
            print(f"{name:<28} {len(fn):>13} {len(fb):>8} {len(dn):>17} {len(db):>8}   invented (free): {fb}")
            if a.show:  # as it goes: a long run stopped early keeps what it measured
                print(f"  free:     {sentences_with_numbers(fs)}\n  document: {sentences_with_numbers(ds)}")
            f, dd = totals[FREE], totals[DOCUMENT]
            print(
                f"  running totals: free {f['tokens']} tokens in {f['gen_s']:.1f} s, "
                f"document {dd['tokens']} tokens in {dd['gen_s']:.1f} s",
                flush=True,
            )
    f, dd = totals[FREE], totals[DOCUMENT]
    print(f"{'total':<28} {f['numbers']:>13} {f['invented']:>8} {dd['numbers']:>17} {dd['invented']:>8}")
    tps = {m: v["tokens"] / v["gen_s"] if v["gen_s"] else 0.0 for m, v in totals.items()}
    ratio = tps[DOCUMENT] / tps[FREE] if tps[FREE] else float("nan")
    print(
        f"\n{len(docs)} documents; summary tokens/s document/free: {ratio:.3f} "
        f"({dd['tokens']} and {f['tokens']} tokens; interleaved, one run)"
    )


if __name__ == "__main__":
    main()
