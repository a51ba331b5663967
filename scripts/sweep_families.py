"""Combine one-document `sweep --json` outputs into the n-sweep table of a
model family, with paired bootstrap intervals over documents, split by
whether the prompt is longer than a sliding window.

Why one document per `sweep` run: each run's result is kept as soon as it is
done, so a long measurement on a busy machine can be stopped and resumed
(`sweep` itself writes only at the end). Per document, α·S is recovered from
the rounded α (6 decimals) and S, the document's summary tokens.

    python scripts/sweep_families.py --window 512 DIR [DIR ...]   # DIR: one JSON per document
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from localsidecar.lab.bootstrap import paired_bootstrap  # noqa: E402

NS = (25, 50, 100, 200, 400)


def _suffix_tokens(r: dict) -> int:
    """The suffix length of a sweep --json (or one of its rows), `n` before io.schema's rename."""
    return r["suffix_tokens"] if "suffix_tokens" in r else r["n"]


def load(folder: Path) -> list[dict]:
    docs = []
    for f in sorted(folder.glob("*.json")):
        data = json.loads(f.read_text(encoding="utf-8"))
        rows = {_suffix_tokens(r): r for r in data["nsweep"]}
        tokens = rows[NS[0]]["tokens"]
        if not tokens:
            continue
        doc = {
            "id": f.stem,
            "S": tokens,
            "baseline": rows[NS[0]]["alpha_baseline"] * tokens,
            "target": data["target"],
            "prompt_tokens": data.get("prompt_tokens"),
        }
        for n in NS:
            doc[n] = rows[n]["alpha_masked"] * tokens
        doc["n_real"] = _suffix_tokens(data)  # the hashtag suffix's own length
        doc[doc["n_real"]] = rows[doc["n_real"]]["alpha_masked"] * tokens
        docs.append(doc)
    return docs


def table(docs: list[dict], resamples: int, seed: int) -> list[dict]:
    counts = np.array([d["S"] for d in docs], dtype=float)
    real = docs[0]["n_real"]
    ns = sorted({real, *NS}) if all(d["n_real"] == real for d in docs) else list(NS)
    sums = {"baseline": np.array([d["baseline"] for d in docs])}
    sums.update({f"masked@{n}": np.array([d[n] for d in docs]) for n in ns})
    est = paired_bootstrap(
        sums, counts, {f"cost@{n}": ("baseline", f"masked@{n}") for n in ns}, n_resamples=resamples, seed=seed
    )
    return [
        {
            "n": n,
            "alpha_baseline": est["baseline"].value,
            "alpha_masked": est[f"masked@{n}"].value,
            "cost": est[f"cost@{n}"].value,
            "lo": est[f"cost@{n}"].lo,
            "hi": est[f"cost@{n}"].hi,
            "docs": len(docs),
            "tokens": int(counts.sum()),
            "is_real": n == real,
        }
        for n in ns
    ]


def prompt_lengths(docs: list[dict], doc_files: dict[str, Path]) -> None:
    """Bare prompt tokens of each document, with the family's tokenizer."""
    from localsidecar.backend import Model
    from localsidecar.decoding.prompts import ChatFormat, PromptConfig, build_prompt

    model = Model(Path(docs[0]["target"]))
    fmt = ChatFormat.for_model(model)
    for d in docs:
        text = doc_files[d["id"]].read_text(encoding="utf-8")
        d["prompt_tokens"] = len(build_prompt(model, fmt, text, PromptConfig()).bare)
    model.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--window", type=int, default=512, help="split documents at this prompt length (tokens)")
    ap.add_argument("--examples", type=Path, default=Path(__file__).resolve().parent.parent / "examples")
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    files = {p.stem: p for p in args.examples.rglob("*") if p.suffix in (".txt", ".md")}
    out = {}
    for folder in args.dirs:
        docs = load(folder)
        if not docs:
            continue
        prompt_lengths(docs, files)
        groups = {
            "all": docs,
            f"prompt > {args.window}": [d for d in docs if d["prompt_tokens"] > args.window],
            f"prompt <= {args.window}": [d for d in docs if d["prompt_tokens"] <= args.window],
        }
        out[folder.name] = {g: table(ds, args.resamples, args.seed) for g, ds in groups.items() if ds}
        out[folder.name]["prompt_tokens"] = {d["id"]: d["prompt_tokens"] for d in docs}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    for family, groups in out.items():
        for g, rows in groups.items():
            if g == "prompt_tokens":
                continue
            r0 = rows[0]
            print(
                f"{family} [{g}]: {r0['docs']} docs, {r0['tokens']} summary tokens, baseline α {r0['alpha_baseline']:.4f}"
            )
            print("| n | masked α | position cost (baseline − masked) | 95% CI |")
            print("|---|---|---|---|")
            for r in rows:
                print(
                    f"| {r['n']}{' (real)' if r['is_real'] else ''} | {r['alpha_masked']:.4f} | {r['cost']:+.4f} | [{r['lo']:+.4f}, {r['hi']:+.4f}] |"
                )
            print()


if __name__ == "__main__":
    main()
