#!/usr/bin/env python3
"""What a user reads, in figures: from `localsidecar run --out FILE` records and
the documents they came from.

- share of summaries that end on a complete sentence (the record's
  summary_complete, or for records without it: the summary text);
- sentences per summary (range, share with 2-4);
- tags per document; share of tags whose words occur contiguously, in order,
  in the document or the summary (case and punctuation aside); share whose
  words all occur somewhere (by stem).

Works on records of any version (older ones held hyphenated tags).

Usage: python scripts/output_figures.py RESULTS.jsonl DOCS [DOCS ...] [--show]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import _common  # noqa: F401  (the repository on sys.path)

from localsidecar.decoding.sentences import complete_summary, sentence_ends
from localsidecar.hashtags.metrics import grounding, phrase_grounding
from localsidecar.io.documents import load_many


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("docs", nargs="+")
    ap.add_argument("--show", action="store_true", help="print every summary and its tags")
    a = ap.parse_args()
    texts = {d.id: d.text for d in load_many(a.docs).docs}
    recs = [
        r
        for r in map(json.loads, Path(a.results).read_text(encoding="utf-8").splitlines())
        if "summary" in r and r.get("id") in texts
    ]
    complete, sentences, n_tags, phrase, stem = [], [], [], [], []
    for r in recs:
        ok = (
            r["summary_complete"]
            if "summary_complete" in r
            else complete_summary(r["summary"])[1]
            and complete_summary(r["summary"])[0] == r["summary"].strip()
        )
        complete.append(bool(ok))
        sentences.append(len(sentence_ends(r["summary"], final=True)))
        tags = r["hashtags"]
        n_tags.append(len(tags))
        text = texts[r["id"]]
        phrase += [phrase_grounding([t], text, r["summary"]) for t in tags]
        stem += [grounding([t], text, r["summary"]) for t in tags]
        if a.show:
            print(
                f"[{r['id']}] {r['summary_tokens']} tokens, {r.get('stopped')}, complete={ok}\n{r['summary']}\n"
                f"  tags: {' '.join(tags)}   raw: {r.get('hashtags_raw')}\n"
            )
    n = len(recs)
    print(f"{n} documents from {a.results}")
    print(f"summaries ending on a complete sentence: {sum(complete)}/{n} = {sum(complete) / n:.2f}")
    print(
        f"sentences per summary: mean {statistics.mean(sentences):.1f}, range {min(sentences)}-{max(sentences)}, "
        f"2-4: {sum(2 <= s <= 4 for s in sentences) / n:.2f}"
    )
    print(
        f"tags per document: mean {statistics.mean(n_tags):.2f}, range {min(n_tags)}-{max(n_tags)}; "
        f"{len(phrase)} tags in all"
    )
    if phrase:
        print(
            f"tags that are phrases of the document or summary (contiguous): {sum(phrase):.0f}/{len(phrase)} = "
            f"{sum(phrase) / len(phrase):.2f}"
        )
        print(f"tags whose words all occur somewhere (by stem): {sum(stem) / len(stem):.2f}")


if __name__ == "__main__":
    main()
