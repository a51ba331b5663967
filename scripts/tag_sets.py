#!/usr/bin/env python3
"""The tag sets of every system for each document of FOLDER, for a blind judge.

  python scripts/tag_sets.py FOLDER --out FILE.json [--records FILE.jsonl] [-- HASHTAGS-EVAL OPTIONS]

Per document (id: the file stem): sidecar (what the default `run` prints, after run's summary:
hashtags-eval's `rebased-shifted`), target (the target writes its own tags
after its own summary: hashtags-eval's `target`; `run --mode target-only`
writes none), salience (the top 3 of the candidate ranking, no model) and
tfidf (TF-IDF's top 3 words, IDF over FOLDER's documents: hashtags-eval's
`keywords`). The model runs go through `localsidecar hashtags-eval --out
RECORDS` (resumable: a rerun skips the documents RECORDS holds; default:
FILE.json's name with .jsonl); options after `--` go to it unchanged
(`--threads 1`, `--pair NAME`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

SYSTEMS = {"sidecar": "rebased-shifted", "target": "target", "salience": "salience", "tfidf": "keywords"}
TOP = 3


def sets_of(records: str) -> dict[str, dict[str, list[str]]]:
    """Document id -> system -> its tags (top 3), from hashtags-eval's JSONL records."""
    variant_system = {v: s for s, v in SYSTEMS.items()}
    out: dict[str, dict[str, list[str]]] = {}
    for line in Path(records).read_text(encoding="utf-8").splitlines():
        rec = json.loads(line) if line.startswith("{") else {}
        if "rows" in rec and rec.get("kind", "document") == "document":
            rows = {variant_system[r["variant"]]: r["hashtags"][:TOP] for r in rec["rows"]}
            out[rec["id"]] = {s: rows[s] for s in SYSTEMS if s in rows}
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--out", type=Path, required=True, help="the sets, one JSON object")
    ap.add_argument("--records", type=Path, default=None, help="hashtags-eval's records (default: OUT.jsonl)")
    a = ap.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    docs = sorted(p for p in a.folder.iterdir() if p.suffix in (".txt", ".md")) if a.folder.is_dir() else []
    if not docs:
        print(f"Error: {a.folder} holds no .txt or .md documents", file=sys.stderr)
        return 2
    records = a.records or a.out.with_suffix(".jsonl")
    cmd = [sys.executable, "-m", "localsidecar", "hashtags-eval", *map(str, docs)]
    cmd += ["--variants", ",".join(SYSTEMS.values()), "--out", str(records), "--no-per-doc", *extra]
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL)
    if done.returncode != 0:
        print(
            f"Error: hashtags-eval failed (exit {done.returncode}); records so far in {records}",
            file=sys.stderr,
        )
        return done.returncode
    sets = sets_of(str(records))
    missing = [p.stem for p in docs if p.stem not in sets]
    if missing:
        print(f"Error: no records for {', '.join(missing)} in {records}", file=sys.stderr)
        return 1
    body = {"systems": SYSTEMS, "documents": {p.stem: sets[p.stem] for p in docs}}
    a.out.write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(docs)} documents -> {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
