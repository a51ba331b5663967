"""Notes per minute of `localsidecar tag`, and a rerun's time over the unchanged vault.

    python scripts/bench_tag.py make OUT [--notes 100]   # a vault from examples/ and a notes corpus
    python scripts/bench_tag.py time VAULT [--busy] [-- TAG OPTIONS...]

`make` writes notes in the shapes of tests/data/vault (front matter or none,
lists, CRLF, ...) whose bodies are the project's example documents, the
notes corpus at $NOTES_CORPUS (default /work/corpus/notes-dev) and mixes of
two of them. `time` copies VAULT, runs `tag` over the copy, then runs it
again (nothing changed: no model load), and prints both times, notes per
minute and the load average; --busy runs one busy process (a spinning
Python loop) beside it. Timings on a shared machine are noisy: compare runs
made together.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (
    "benchmarks/articles",
    "examples/docs",
    "examples/more",
    "benchmarks/notes-style",
    "benchmarks/tagset/docs",
)
SHAPES = (
    "{body}",
    "---\ntitle: {title}\n---\n{body}",
    "---\ntitle: {title}\ntags:\n  - notes\n  - inbox\n---\n{body}",
    "---\ntags: [notes, {slug}]\ncreated: 2024-03-{day:02d}\n---\n{body}",
    "---\ntags: notes\naliases: [{title}]\n---\n{body}",
    '+++\ntitle = "{title}"\ntags = ["notes"]\n+++\n{body}',
)


def documents() -> list[tuple[str, str]]:
    found = []
    for folder in SOURCES:
        for p in sorted((ROOT / folder).glob("*")):
            if p.suffix in (".txt", ".md"):
                found.append((p.stem, p.read_text(encoding="utf-8").strip()))
    corpus = Path(os.environ.get("NOTES_CORPUS", "/work/corpus/notes-dev"))
    for p in sorted(corpus.glob("*.md")) if corpus.is_dir() else []:
        found.append((p.stem, p.read_text(encoding="utf-8").strip()[:5000]))
    return found


def make(out: Path, n: int) -> None:
    rng = random.Random(0)
    docs = documents()
    out.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        name, text = docs[i % len(docs)]
        if i >= len(docs):  # a mix: the paragraphs of two documents
            other = docs[rng.randrange(len(docs))][1]
            paras = text.split("\n\n")[:3] + other.split("\n\n")[1:3]
            text = "\n\n".join(paras)
        title = re.sub(r"[^\w ]", "", text.splitlines()[0])[:60].strip() or name
        note = SHAPES[i % len(SHAPES)].format(
            body=text + "\n", title=title, slug=name.replace("_", "-"), day=i % 28 + 1
        )
        newline = "\r\n" if i % 10 == 7 else "\n"
        folder = out / ("daily" if i % 3 == 0 else "projects" if i % 3 == 1 else "")
        folder.mkdir(exist_ok=True)
        (folder / f"{i:03d}-{name}.md").write_bytes(note.replace("\n", newline).encode("utf-8"))
    print(f"wrote {n} notes in {out}", file=sys.stderr)


def run(vault: Path, args: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-m", "localsidecar.cli", "tag", str(vault), "--quiet", *args],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        raise SystemExit(r.stderr)
    return time.perf_counter() - t0, r.stderr.strip().splitlines()[-1]


def timed(vault: Path, busy: bool, args: list[str]) -> None:
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if busy else None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / "vault"
            shutil.copytree(vault, copy)
            load = os.getloadavg()[0]
            first, said = run(copy, args)
            again, said_again = run(copy, args)
    finally:
        if spinner:
            spinner.kill()
    tagged = int(said.split(" note")[0])
    print(
        f"busy={busy} load={load:.1f} threads={os.environ.get('LOCALSIDECAR_THREADS', 'auto')}: "
        f"{said} in {first:.0f} s = {60 * tagged / first:.1f} notes/min; "
        f"rerun {again:.2f} s ({said_again})"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("out", type=Path)
    m.add_argument("--notes", type=int, default=100)
    t = sub.add_parser("time")
    t.add_argument("vault", type=Path)
    t.add_argument("--busy", action="store_true")
    t.add_argument("tag_args", nargs="*")
    a = ap.parse_args()
    if a.cmd == "make":
        make(a.out, a.notes)
    else:
        timed(a.vault, a.busy, a.tag_args)


if __name__ == "__main__":
    main()
