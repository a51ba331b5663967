#!/usr/bin/env python3
"""Packets for a blind judge of hashtag sets: per document its text and the
tag sets of every system, shuffled with a fixed seed and labelled A, B, ...,
one file per document, and a separate key (document -> letter -> system)
beside the packets' folder, never in it.

  python scripts/judge_packets.py EVAL.jsonl... --docs DOC... [--out DIR] [--seed N]

EVAL.jsonl: `localsidecar hashtags-eval DOCS --variants rebased-shifted,
target,salience --json` (its document records, from one run or several;
ids are the file stems). The systems: sidecar (variant rebased-shifted,
what `run` prints), target (the target writes its own tags), salience (the
top 3 of the candidate ranking, no model), tfidf (TF-IDF's top 3 words, IDF
over the DOCs given here), composed (no model: the ranking through the plan's choice, TagPlan.finish,
so a topic is always in the set: what the model's pick must beat), and yake
(YAKE's top 3 keyphrases, n <= 3, as CamelCase hashtags, when the optional
`yake` package is installed).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

from localsidecar.hashtags.generation import HashtagSettings, normalize_tag
from localsidecar.hashtags.metrics import tag_key, tfidf_keywords

LETTERS = "ABCDEFGH"
TOP = 3


def camel(phrase: str) -> str:
    return "#" + "".join(w[:1].upper() + w[1:] for w in re.findall(r"[^\W_]+", phrase))


def yake_tags(text: str) -> list[str] | None:
    """YAKE's top 3 distinct keyphrases (n <= 3) as hashtags; None without yake."""
    try:
        import yake  # optional: only this script uses it
    except ImportError:
        return None
    out: list[str] = []
    for kw, _score in yake.KeywordExtractor(lan="en", n=3, top=20).extract_keywords(text):
        tag = camel(kw)
        if len(tag) > 1 and tag_key(tag) not in {tag_key(t) for t in out}:
            out.append(tag)
        if len(out) == TOP:
            break
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("eval_jsonl", nargs="+", help="hashtags-eval --json outputs (then --docs)")
    ap.add_argument("--docs", nargs="+", required=True)
    ap.add_argument("--out", default="/tmp/judge20")
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument(
        "--key", default=None, help="where the key goes (default: key.json beside --out, not in it)"
    )
    a = ap.parse_args(argv)
    rows: dict[str, dict[str, list[str]]] = {}
    for line in "\n".join(Path(f).read_text(encoding="utf-8") for f in a.eval_jsonl).splitlines():
        rec = json.loads(line) if line.startswith("{") else {}
        if rec.get("kind") == "document":
            rows[rec["id"]] = {r["variant"]: r["hashtags"] for r in rec["rows"]}
    rng = random.Random(a.seed)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    key: dict[str, dict[str, str]] = {}
    texts = [Path(path).read_text(encoding="utf-8") for path in a.docs]
    tfidf = [[normalize_tag(w) for w in ws][:TOP] for ws in tfidf_keywords(texts, TOP)]
    for path, text, keywords in zip(a.docs, texts, tfidf):
        doc_id = Path(path).stem
        got = rows.get(doc_id)
        if got is None or not {"rebased-shifted", "target", "salience"} <= set(got):
            print(
                f"Error: {' '.join(a.eval_jsonl)} has no sidecar, target and salience rows for {doc_id}",
                file=sys.stderr,
            )
            return 2
        plan = HashtagSettings().plan("", text)
        sets = {
            "sidecar": got["rebased-shifted"],
            "target": got["target"],
            "salience": got["salience"],
            "tfidf": keywords,
            "composed": plan.finish(["#" + c.text for c in plan.candidates]) if plan else [],
        }
        third = yake_tags(text)
        if third is not None:
            sets["yake"] = third
        order = list(sets)
        rng.shuffle(order)
        letters = {LETTERS[i]: s for i, s in enumerate(order)}
        key[doc_id] = letters
        body = [text.rstrip(), "", "Hashtag sets:"]
        body += [f"{letter}: {' '.join(sets[s]) or '(none)'}" for letter, s in letters.items()]
        (out / f"{doc_id}.txt").write_text("\n".join(body) + "\n", encoding="utf-8")
    meta = {"_seed": a.seed, "_yake": all("yake" in k.values() for k in key.values())}
    key_path = Path(a.key) if a.key else out.parent / "key.json"
    key_path.write_text(json.dumps({**meta, **key}, indent=1) + "\n", encoding="utf-8")
    print(f"{len(key)} packets in {out}/, key in {key_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
