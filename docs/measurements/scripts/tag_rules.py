#!/usr/bin/env python3
"""The measured effect of each hashtag candidate rule (docs/DESIGN.md,
"Hashtag candidates"), without a model: the salience ranking's top 3 scored
against an editor's labels (and the offer the draft picks from), with every rule on and with one rule off at a
time, and the old grammar's offer (every 1-3-word n-gram) for scale.

  python scripts/tag_rules.py [LABELS DOCS_GLOB ...]

Default sets: benchmarks/tagset (tuned on) and benchmarks/heldout (never tuned on).
"""

from __future__ import annotations

import dataclasses
import glob
import sys
from pathlib import Path

from localsidecar.hashtags.candidates import candidates, offer
from localsidecar.hashtags.document import Rules
from localsidecar.hashtags.generation import doc_phrases
from localsidecar.hashtags.metrics import mean
from localsidecar.lab.tag_labels import label_scores, load_labels

ROOT = Path(__file__).resolve().parents[3]  # the repository
SETS = [
    ("tagset", ROOT / "benchmarks/tagset/labels.json", [str(ROOT / "benchmarks/tagset/docs/*")]),
    (
        "held-out",
        ROOT / "benchmarks/heldout/labels.json",
        [str(ROOT / "benchmarks/articles/*"), str(ROOT / "benchmarks/heldout/docs/*")],
    ),
]


def score(docs, labels, rules: Rules, floor: bool = True) -> dict[str, float]:
    """good / bad / recall of the top 3; good / bad / length of the offer (the list the draft picks from)."""
    rows, offered = [], []
    for i, text in docs:
        ranked = candidates(text, rules=rules)
        cands = ["#" + c.text for c in (offer(ranked, 3) if floor else ranked)]
        rows.append(label_scores(cands[:3], labels[i], text))
        offered.append({**label_scores(cands, labels[i], text), "n": len(cands)})
    out = {k: mean(r[k] for r in rows) for k in ("good", "bad", "recall")}
    return {**out, **{"offer_" + k: mean(r[k] for r in offered) for k in ("good", "bad", "n")}}


def main() -> None:
    for name, labels_path, globs in SETS:
        labels = load_labels(str(labels_path))
        docs = [
            (Path(f).stem, Path(f).read_text(encoding="utf-8")) for g in globs for f in sorted(glob.glob(g))
        ]
        docs = [(i, t) for i, t in docs if i in labels]
        print(f"{name}: {len(docs)} documents (salience top 3)")
        print(f"  {'rules':<22} good   bad    recall | offer: good  bad    length")
        rows = [("all", Rules(), True), ("no offer floor", Rules(), False)] + [
            ("no " + f.name, dataclasses.replace(Rules(), **{f.name: False}), True)
            for f in dataclasses.fields(Rules)
        ]
        for name, rules, floor in rows:
            s = score(docs, labels, rules, floor)
            print(
                f"  {name:<22} {s['good']:.3f}  {s['bad']:.3f}  {s['recall']:.3f}  |"
                f"  {s['offer_good']:.3f}  {s['offer_bad']:.3f}  {s['offer_n']:.2f}"
            )
        offered = mean(len(doc_phrases(t)) for _, t in docs)
        print(
            f"  grammar offer: {offered:.0f} n-grams per document before, {len(candidates(docs[0][1]))} candidates now"
        )


if __name__ == "__main__":
    sys.exit(main())
