"""docs/environment.md's table names every LOCALSIDECAR_* variable the code
reads, and none it does not."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = re.compile(r"LOCALSIDECAR_[A-Z0-9_]*[A-Z0-9]")


def test_every_variable_the_code_reads_is_in_the_table_and_only_those():
    in_code = {
        m for path in (ROOT / "localsidecar").rglob("*.py") for m in NAME.findall(path.read_text("utf-8"))
    }
    doc = (ROOT / "docs" / "environment.md").read_text("utf-8")
    rows = set(re.findall(r"^\| `(LOCALSIDECAR_[A-Z0-9_]+)` \|", doc, re.M))
    assert len(in_code) >= 13  # the search finds them (TARGET, DRAFT, MODELS_DIR, ..., PROBE_CACHE)
    assert in_code - rows == set(), "add these to docs/environment.md"
    assert rows - in_code == set(), "docs/environment.md names variables the code no longer reads"
