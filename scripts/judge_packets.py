#!/usr/bin/env python3
"""Packets for a blind judge of hashtag sets (issue 20): per document its
text and four tag sets, shuffled with a fixed seed and labelled A-D, and a
separate key (document -> letter -> system).

  python scripts/judge_packets.py EVAL.jsonl DOC... [--out DIR] [--seed N]

EVAL.jsonl: `localsidecar hashtags-eval DOCS --variants rebased-shifted,
target,keywords --json` (its document records; ids are the file stems). The
systems: sidecar (variant rebased-shifted, what `run` prints), target (the
target writes its own tags), tfidf (the keywords variant cut to its first 3)
and yake (YAKE's top 3 keyphrases, n <= 3, as CamelCase hashtags; the `yake`
package is optional: without it the salience baseline, the top 3 of the
sidecar's own candidate ranking, stands in and the key says so).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

from localsidecar.hashtags.candidates import candidates
from localsidecar.hashtags.metrics import tag_key

LETTERS = "ABCD"
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
    ap.add_argument("eval_jsonl")
    ap.add_argument("docs", nargs="+")
    ap.add_argument("--out", default="/tmp/judge20")
    ap.add_argument("--seed", type=int, default=20)
    a = ap.parse_args(argv)
    rows: dict[str, dict[str, list[str]]] = {}
    for line in Path(a.eval_jsonl).read_text(encoding="utf-8").splitlines():
        rec = json.loads(line) if line.startswith("{") else {}
        if rec.get("kind") == "document":
            rows[rec["id"]] = {r["variant"]: r["hashtags"] for r in rec["rows"]}
    rng = random.Random(a.seed)
    packets, key = [], {}
    fallback = False
    for path in a.docs:
        doc_id, text = Path(path).stem, Path(path).read_text(encoding="utf-8")
        got = rows.get(doc_id)
        if got is None or not {"rebased-shifted", "target", "keywords"} <= set(got):
            print(
                f"Error: {a.eval_jsonl} has no sidecar, target and keywords rows for {doc_id}",
                file=sys.stderr,
            )
            return 2
        third = yake_tags(text)
        if third is None:
            fallback = True
            third = ["#" + c.text for c in candidates(text, limit=TOP)]
        sets = {
            "sidecar": got["rebased-shifted"],
            "target": got["target"],
            "tfidf": got["keywords"][:TOP],
            "salience" if fallback else "yake": third,
        }
        order = list(sets)
        rng.shuffle(order)
        packets.append(
            {"doc": doc_id, "text": text, "sets": {LETTERS[i]: sets[s] for i, s in enumerate(order)}}
        )
        key[doc_id] = {LETTERS[i]: s for i, s in enumerate(order)}
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "packets.json").write_text(
        json.dumps(packets, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    meta = {"_seed": a.seed, "_yake": not fallback}
    (out / "key.json").write_text(json.dumps({**meta, **key}, indent=1) + "\n", encoding="utf-8")
    print(
        f"{len(packets)} packets in {out}/packets.json, key in {out}/key.json"
        + (" (salience for yake)" * fallback)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
