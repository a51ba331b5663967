"""scripts/: every tool answers --help without running, every script the docs
or the code name exists (one-off measurement scripts are in docs/measurements/scripts/),
and the tools import only the library names docs/python-api.md documents."""

from __future__ import annotations

import ast
import importlib
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


def documented_names() -> dict[str, set[str]]:
    """docs/python-api.md's table of the modules the scripts use: module -> names."""
    text = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    section = text.split("\n## The modules the scripts use\n", 1)[1]
    rows = re.findall(r"^\| `(localsidecar[\w.]*)` \| ([^|]+) \|", section, re.M)
    return {module: set(re.findall(r"`(\w+)`", names)) for module, names in rows}


def script_imports(path) -> list[tuple[int, str, str | None]]:
    """(line, module, name) of every localsidecar import in `path`, those inside
    functions too; name None for `import localsidecar.x`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [
                (node.lineno, a.name, None) for a in node.names if a.name.split(".")[0] == "localsidecar"
            ]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "localsidecar":
            found += [(node.lineno, node.module, a.name) for a in node.names]
    return found


def test_scripts_import_only_the_documented_modules():
    documented = documented_names()
    assert len(documented) >= 10 and "localsidecar" in documented, sorted(documented)
    imports = {p.name: script_imports(p) for p in sorted(SCRIPTS.glob("*.py"))}
    assert sum(map(len, imports.values())) >= 40  # the scan sees the scripts' imports
    bad = [
        f"scripts/{name}:{line} imports {module}{'.' + what if what else ''}"
        for name, found in imports.items()
        for line, module, what in found
        if what is None or what not in documented.get(module, ())
    ]
    assert not bad, f"not in docs/python-api.md's modules the scripts use: {bad}"
    used = {(module, what) for found in imports.values() for _, module, what in found}
    unused = sorted(f"{m}.{n}" for m, names in documented.items() for n in names if (m, n) not in used)
    assert not unused, f"documented for the scripts but used by none: {unused}"


def test_the_documented_names_exist():
    missing = [
        f"{module}.{name}"
        for module, names in documented_names().items()
        for name in sorted(names)
        if not hasattr(importlib.import_module(module), name)
    ]
    assert not missing, missing
