"""scripts/: every tool answers --help without running, and every script the docs
or the code name exists (one-off measurement scripts are in docs/measurements/scripts/)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from .helpers import ROOT

SCRIPTS = ROOT / "scripts"
# not tools: a helper the scripts import; a catalogue of cases that is becoming tests
NOT_TOOLS = {"_common.py", "fault_catalogue.py"}
TOOLS = sorted(p.name for p in [*SCRIPTS.glob("*.py"), *SCRIPTS.glob("*.sh")] if p.name not in NOT_TOOLS)


def test_the_tools_are_found():
    assert {"bench_run.py", "host_facts.py", "reproduce.sh", "sweep_families.py"} <= set(TOOLS)
    assert not any(name.startswith("measure_") for name in TOOLS)


@pytest.mark.parametrize("name", TOOLS)
def test_every_tool_answers_help(name):
    path = SCRIPTS / name
    cmd = ["bash", str(path)] if name.endswith(".sh") else [sys.executable, str(path)]
    out = subprocess.run(
        [*cmd, "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT / "tests",  # a tool that ran instead of answering would write nothing here
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() and not out.stderr.strip(), (out.stdout[:200], out.stderr[:500])


def test_every_script_the_docs_and_code_name_exists():
    texts = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "localsidecar").rglob("*.py")]
    named = {
        m
        for path in texts
        for m in re.findall(
            r"(?<![\w/.])((?:docs/measurements/)?scripts/\w+\.(?:py|sh))", path.read_text(encoding="utf-8")
        )
    }
    assert len(named) >= 10, sorted(named)
    missing = sorted(m for m in named if not (ROOT / m).is_file())
    assert not missing, f"named but not in the repository: {missing}"
