#!/usr/bin/env python3
"""Do summaries of notes-style documents copy their header block?

Runs `localsidecar run --json` (the default settings, fixed --threads) on
documents that open with a header block (title, Date:, Present: lines) and
prints, per document: how the summary starts, which header lines it copies,
and the dates and numbers in it that the document does not contain.

Usage: python scripts/measure_headers.py [DOCS ...] [--threads 2] [--max-tokens 128] [--show]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]  # the repository
DEFAULT_DOCS = [ROOT / "benchmarks" / "notes-style"]
MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
DATE_RE = re.compile(
    rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{MONTHS})(?:\s+\d{{4}})?|(?:{MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?"
    rf"(?:,?\s+\d{{4}})?|\d{{4}}-\d\d-\d\d)\b"
)
NUMBER_RE = re.compile(r"\b\d[\d,.]*\d\b|\b\d\b")
LABEL_RE = re.compile(
    r"^\s*(?:minutes|present|attendees|apologies|absent|date|chair|facilitator|minutes taken by)\s*:",
    re.IGNORECASE,
)


LABEL_WORD_RE = re.compile(
    r"\b(?:minutes|present|attendees|apologies|absent|facilitator)\b\s*[:,]", re.IGNORECASE
)


def _value(line: str) -> str:
    m = re.match(r"^\s*[A-Za-z][A-Za-z ]{0,24}:\s*(.*)$", line)
    return m.group(1) if m else line


def header_lines(text: str) -> list[str]:
    """The lines before the first blank line after the first line (the header block)."""
    block = text.strip().split("\n\n", 1)[0]
    return [line.strip() for line in block.splitlines() if line.strip()]


def normal(s: str) -> str:
    return " ".join(s.lower().split())


def _date_key(d: str) -> str:
    day = re.search(r"\b(\d{1,2})(?:st|nd|rd|th)?\b", d)
    month = re.search(MONTHS, d)
    return f"{day.group(1) if day else ''} {month.group(0) if month else d}"


def check(text: str, summary: str) -> dict:
    heads = header_lines(text)
    s = normal(summary)
    # a header line counts as copied when its text (without its label) appears in the summary
    copied = [h for h in heads if len(v := _value(h)) >= 10 and normal(v) in s]
    labels = LABEL_WORD_RE.findall(summary)  # "Minutes:", "Present," ... anywhere in the summary
    doc_dates = {_date_key(d) for d in DATE_RE.findall(text)}
    wrong_dates = [d for d in DATE_RE.findall(summary) if _date_key(d) not in doc_dates]
    doc_numbers = {n.replace(",", "") for n in NUMBER_RE.findall(text)}
    wrong_numbers = [
        n for n in NUMBER_RE.findall(summary) if n.replace(",", "").rstrip(".") not in doc_numbers
    ]
    first = re.split(r"(?<=[.!?])\s", summary.strip(), maxsplit=1)[0] if summary.strip() else ""
    # the first sentence repeats a header label or a header line's text
    starts = bool(LABEL_WORD_RE.search(first)) or any(
        len(v := _value(h)) >= 10 and normal(v)[:20] in normal(first) for h in heads
    )
    return {
        "starts_with_header": starts,
        "copied_header_lines": copied,
        "header_labels": labels,
        "wrong_dates": wrong_dates,
        "wrong_numbers": wrong_numbers,
        "first": first[:70],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("docs", nargs="*", default=[str(d) for d in DEFAULT_DOCS])
    ap.add_argument("--threads", default="2")
    ap.add_argument("--max-tokens", default="128")
    ap.add_argument("--show", action="store_true", help="print every summary")
    a = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [
        sys.executable,
        "-m",
        "localsidecar.cli",
        "run",
        *a.docs,
        "--json",
        "--quiet",
        "--threads",
        a.threads,
        "--max-tokens",
        a.max_tokens,
    ]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if out.returncode:
        print(out.stderr, file=sys.stderr)
        return out.returncode
    texts = {}
    for d in a.docs:
        p = Path(d)
        for f in sorted(p.iterdir()) if p.is_dir() else [p]:
            texts[f.stem] = f.read_text(encoding="utf-8")
    totals = {
        "starts_with_header": 0,
        "copied_header_lines": 0,
        "header_labels": 0,
        "wrong_dates": 0,
        "wrong_numbers": 0,
    }
    records = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    for rec in records:
        r = check(texts[rec["id"]], rec["summary"])
        for k in totals:
            totals[k] += int(r[k]) if isinstance(r[k], bool) else len(r[k])
        print(
            f"{rec['id']:<14} starts with header: {'yes' if r['starts_with_header'] else 'no ':<3}  "
            f"copied lines {len(r['copied_header_lines'])}  labels {len(r['header_labels'])}  "
            f"wrong dates {r['wrong_dates'] or '-'}  wrong numbers {r['wrong_numbers'] or '-'}  | {r['first']!r}"
        )
        if a.show:
            print("    " + rec["summary"].replace("\n", "\n    "))
    print(f"total over {len(records)} documents: " + ", ".join(f"{k} {v}" for k, v in totals.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
