#!/usr/bin/env python3
"""How well does the support check find a free summary's factual errors?

Reads `run --summary free --json` records (their `id` and `summary`), the documents
they were made from, and a label file of the errors a reader found in each summary:

    [{"doc": "bbc-economy", "sentence": "...", "span": "...", "kind": "direction"}, ...]

(a summary without an entry has none). The summaries are checked again with the
check as imported (`--recorded`: the record's own `unsupported` instead), and:

- recall: the share of labelled errors whose sentence is flagged;
- precision: the share of flagged sentences that hold a labelled error;
- per summary: summaries with an error that have a flag, flagged summaries with an error
  (how the project's blind judgement counts).

Usage: python docs/measurements/scripts/measure_support.py RECORDS DOCS_DIR LABELS [--recorded] [--show]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from localsidecar.summary.support import check_summary


def load_records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def document_text(docs: Path, doc_id: str) -> str:
    found = [p for p in docs.iterdir() if p.stem == doc_id]
    if len(found) != 1:
        raise SystemExit(f"{doc_id}: {len(found)} documents of that name in {docs}")
    return found[0].read_text(encoding="utf-8")


def flags_of(rec: dict, docs: Path, recorded: bool) -> list[dict]:
    if recorded:
        return rec.get("unsupported") or []
    return [f.as_record() for f in check_summary(rec["summary"], document_text(docs, rec["id"]))]


def caught(label: dict, flags: list[dict]) -> bool:
    return any(
        label["span"] in f["span"] and (f["span"] in label["sentence"] or label["sentence"] in f["span"])
        for f in flags
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("records", type=Path)
    ap.add_argument("docs", type=Path)
    ap.add_argument("labels", type=Path)
    ap.add_argument("--recorded", action="store_true", help="the records' own flags, not a new check")
    ap.add_argument("--show", action="store_true", help="list missed errors and false flags")
    a = ap.parse_args()
    records = load_records(a.records)
    labels = json.loads(a.labels.read_text(encoding="utf-8"))
    ids = {r["id"] for r in records}
    unknown = {lab["doc"] for lab in labels} - ids
    if unknown:
        raise SystemExit(f"labels of documents without a record: {sorted(unknown)}")
    n_err = n_caught = n_flags = n_real = 0
    sum_err = sum_err_flagged = sum_flagged = 0  # summaries: with an error, those flagged, flagged
    kinds, kinds_caught = Counter(), Counter()
    for rec in sorted(records, key=lambda r: r["id"]):
        flags = flags_of(rec, a.docs, a.recorded)
        mine = [lab for lab in labels if lab["doc"] == rec["id"]]
        for lab in mine:
            if lab["span"] not in rec["summary"] or lab["sentence"] not in rec["summary"]:
                raise SystemExit(f"{rec['id']}: label not in the summary: {lab['span']!r}")
            hit = caught(lab, flags)
            n_err += 1
            n_caught += hit
            kinds[lab["kind"]] += 1
            kinds_caught[lab["kind"]] += hit
            if a.show and not hit:
                print(f"MISSED {rec['id']} [{lab['kind']}] {lab['span']!r}")
        for f in flags:
            real = any(lab["span"] in f["span"] for lab in mine)
            n_flags += 1
            n_real += real
            if a.show and not real:
                print(f"FALSE  {rec['id']}: {f['span']!r}\n       why: {f['why']}")
        sum_err += bool(mine)
        sum_err_flagged += bool(mine) and bool(flags)
        sum_flagged += bool(flags)
    print(
        f"summaries {len(records)}, with an error {sum_err}, labelled errors {n_err}, flagged sentences {n_flags}"
    )
    print(f"per error:   recall {n_caught}/{n_err} = {n_caught / max(n_err, 1):.2f}")
    print(f"per flag:    precision {n_real}/{n_flags} = {n_real / max(n_flags, 1):.2f}")
    print(
        f"per summary: recall {sum_err_flagged}/{sum_err} = {sum_err_flagged / max(sum_err, 1):.2f}, "
        f"precision {sum_err_flagged}/{sum_flagged} = {sum_err_flagged / max(sum_flagged, 1):.2f}"
    )
    print("caught by kind: " + ", ".join(f"{k} {kinds_caught[k]}/{kinds[k]}" for k in sorted(kinds)))


if __name__ == "__main__":
    main()
