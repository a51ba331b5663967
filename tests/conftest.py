"""Shared fixtures: the real embedded model pair, user paths isolated."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
BENCHMARKS = ROOT / "benchmarks"

# Nothing in the tests may reach a hub or touch the user's own caches.
os.environ["HF_HUB_OFFLINE"] = "1"
# A fixed thread count: results are reproducible only at one count (docs/DESIGN.md,
# Batch shape changes results), and the default adapts to the machine's load.
# Tests of the adaptive default pass threads=None explicitly.
# Under pytest-xdist (the README's `-n 2`) each worker decodes with one thread:
# two workers on two cores, never four spinning threads.
TEST_THREADS = 1 if os.environ.get("PYTEST_XDIST_WORKER") else 2
os.environ["LOCALSIDECAR_THREADS"] = str(TEST_THREADS)
# The guarded crash probe (backend/probe.py) caches its verdicts here: the
# session probes each kind of model once, and the user's cache stays untouched.
_PROBE_CACHE = tempfile.mkdtemp(prefix="localsidecar-probe-")
os.environ["LOCALSIDECAR_PROBE_CACHE"] = _PROBE_CACHE
atexit.register(shutil.rmtree, _PROBE_CACHE, True)


def one_line_error(r, code: int = 2) -> str:
    """The single stderr line of a failed CliRunner command (exit `code`, no traceback)."""
    assert r.exit_code == code, (r.exit_code, r.output, r.exception)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.stderr
    assert "Traceback" not in r.output
    return lines[0]


@pytest.fixture(scope="session")
def session_models_dir(tmp_path_factory) -> Path:
    """The models dir of every test, the embedded draft already derived in it:
    the one-line note of a first derivation never lands in a test's stderr."""
    from localsidecar.registry.embedded import embedded_pair

    folder = tmp_path_factory.mktemp("models")
    embedded_pair(folder)
    return folder


@pytest.fixture(autouse=True)
def isolated_paths(monkeypatch, session_models_dir, tmp_path_factory):
    monkeypatch.setenv("LOCALSIDECAR_MODELS_DIR", str(session_models_dir))
    hf = tmp_path_factory.getbasetemp() / "hf-home"
    monkeypatch.setenv("HF_HOME", str(hf))
    monkeypatch.setenv("HF_HUB_CACHE", str(hf / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def pair_paths(session_models_dir) -> tuple[Path, Path]:
    from localsidecar.registry.embedded import embedded_pair

    return embedded_pair(session_models_dir)


@pytest.fixture(scope="session")
def engine(pair_paths):
    from localsidecar.decoding.engine import Engine, EngineConfig
    from localsidecar.decoding.prompts import PromptConfig

    with Engine(
        pair_paths[0], pair_paths[1], EngineConfig(n_ctx=2048, threads=TEST_THREADS), PromptConfig()
    ) as eng:
        yield eng


@pytest.fixture(scope="session")
def example_texts() -> dict[str, str]:
    files = [EXAMPLES / "notes.txt", *sorted((EXAMPLES / "docs").iterdir())]
    return {f.stem: f.read_text(encoding="utf-8") for f in files}


def pytest_terminal_summary(terminalreporter):
    """One line per host-dependent fact a test recorded (record_property):
    which case held on this host (tests/test_llama_facts.py, test_buffers.py)."""
    lines = [
        f"{r.nodeid.split('::')[-1]}: {k}: {v}"
        for r in terminalreporter.stats.get("passed", [])
        for k, v in getattr(r, "user_properties", [])
    ]
    if lines:
        terminalreporter.section("host facts (recorded properties)")
        for line in lines:
            terminalreporter.line(line)
