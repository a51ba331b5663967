"""What the scripts share: the repository root on sys.path (so a script runs
from a checkout without installing), the usual argparse block and a load
generator. A helper, not a script: scripts import it, never each other.

    from _common import ROOT, script_parser
    ap = script_parser(__doc__, max_tokens=96, threads=2, ctx=2048)
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

EXAMPLE_DOCS = [str(ROOT / "examples" / "notes.txt"), str(ROOT / "examples" / "docs")]
_UNSET = object()


def script_parser(
    doc: str | None,
    *,
    docs: list[str] | None = EXAMPLE_DOCS,
    models: bool = True,
    max_tokens: int | None = None,
    threads=_UNSET,
    ctx: int | None = None,
    threads_help: str | None = None,
) -> argparse.ArgumentParser:
    """An ArgumentParser with the first paragraph of `doc` as description and
    the block the scripts share: DOCS (default `docs`; None: no positional),
    --pair/--target/--draft (`models`), --max-tokens, --threads, --ctx (each
    only when given a default)."""
    ap = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0].strip())
    if docs is not None:
        ap.add_argument("docs", nargs="*", default=list(docs))
    if models:
        ap.add_argument("--pair", default=None, help="named pair from the registry")
        ap.add_argument("--target", default=None, help="target GGUF: a path or REPO:FILE")
        ap.add_argument("--draft", default=None, help="draft GGUF: a path or REPO:FILE")
    if max_tokens is not None:
        ap.add_argument("--max-tokens", type=int, default=max_tokens)
    if threads is not _UNSET:
        ap.add_argument("--threads", type=int, default=threads, help=threads_help)
    if ctx is not None:
        ap.add_argument("--ctx", type=int, default=ctx)
    return ap


BUSY = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"


@contextmanager
def busy_processes(n: int, seconds: float):
    """n processes that keep one CPU busy each, for at most `seconds`."""
    procs = [subprocess.Popen([sys.executable, "-c", BUSY.format(seconds=seconds)]) for _ in range(n)]
    try:
        time.sleep(0.5 if n else 0)  # let them start before anything is measured
        yield procs
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=10)
