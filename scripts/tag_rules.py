#!/usr/bin/env python3
"""The measured effect of each hashtag candidate rule (docs/DESIGN.md,
"Hashtag candidates"), without a model: the salience ranking's top 3 scored
against an editor's labels, with every rule on and with one rule off at a
time, and the old grammar's offer (every 1-3-word n-gram) for scale.

  python scripts/tag_rules.py [LABELS DOCS_GLOB ...]

Default sets: examples/tagset (tuned on) and examples/heldout (never tuned on).
"""

from __future__ import annotations

import dataclasses
import glob
import sys
from pathlib import Path

from localsidecar.hashtags.candidates import Rules, candidates
from localsidecar.hashtags.generation import doc_phrases
from localsidecar.hashtags.metrics import mean
from localsidecar.lab.tag_labels import label_scores, load_labels

ROOT = Path(__file__).resolve().parent.parent
SETS = [
    ("tagset", ROOT / "examples/tagset/labels.json", [str(ROOT / "examples/tagset/docs/*")]),
    (
        "held-out",
        ROOT / "examples/heldout/labels.json",
        [str(ROOT / "examples/articles/*"), str(ROOT / "examples/heldout/docs/*")],
    ),
]


def score(docs, labels, rules: Rules) -> dict[str, float]:
    rows = [
        label_scores(["#" + c.text for c in candidates(text, rules=rules, limit=3)], labels[i], text)
        for i, text in docs
    ]
    return {k: mean(r[k] for r in rows) for k in ("good", "bad", "recall")}


def main() -> None:
    for name, labels_path, globs in SETS:
        labels = load_labels(str(labels_path))
        docs = [
            (Path(f).stem, Path(f).read_text(encoding="utf-8")) for g in globs for f in sorted(glob.glob(g))
        ]
        docs = [(i, t) for i, t in docs if i in labels]
        print(f"{name}: {len(docs)} documents (salience top 3)")
        print(f"  {'rules':<22} good   bad    recall")
        base = score(docs, labels, Rules())
        print(f"  {'all':<22} {base['good']:.3f}  {base['bad']:.3f}  {base['recall']:.3f}")
        for f in dataclasses.fields(Rules):
            s = score(docs, labels, dataclasses.replace(Rules(), **{f.name: False}))
            print(f"  {'no ' + f.name:<22} {s['good']:.3f}  {s['bad']:.3f}  {s['recall']:.3f}")
        offered = mean(len(doc_phrases(t)) for _, t in docs)
        print(
            f"  grammar offer: {offered:.0f} n-grams per document before, {len(candidates(docs[0][1]))} candidates now"
        )


if __name__ == "__main__":
    sys.exit(main())
