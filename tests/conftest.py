"""Shared fixtures: the real embedded model pair, user paths isolated."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import socket
import tempfile
from pathlib import Path

import pytest

from .helpers import EXAMPLES, ROOT, SLOW_FILES, TEST_THREADS

# Nothing in the tests may reach a hub or touch the user's own caches.
os.environ["HF_HUB_OFFLINE"] = "1"
# A fixed thread count: results are reproducible only at one count (docs/DESIGN.md,
# Batch shape changes results), and the default adapts to the machine's load.
# Tests of the adaptive default pass threads=None explicitly.
# Under pytest-xdist (the README's `-n 2`) each worker decodes with one thread:
# two workers on two cores, never four spinning threads.
os.environ["LOCALSIDECAR_THREADS"] = str(TEST_THREADS)
# A suite started in the background of a non-interactive shell inherits SIGINT
# ignored, and so would every localsidecar process it starts (an ignored signal
# stays ignored across exec): the signal tests need Ctrl-C's default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
# The guarded crash probe (backend/probe.py) caches its verdicts here: the
# session probes each kind of model once, and the user's cache stays untouched.
_PROBE_CACHE = tempfile.mkdtemp(prefix="localsidecar-probe-")
os.environ["LOCALSIDECAR_PROBE_CACHE"] = _PROBE_CACHE
atexit.register(shutil.rmtree, _PROBE_CACHE, True)


def _llama_only_with_the_projects_model_params() -> None:
    """Any test that builds llama-cpp-python's Llama outside
    localsidecar.backend.llama_model_defaults (which load_llama uses) fails:
    llama.cpp's default model params put the weights in the AMX buffer type
    on an AMX host, and the first decode there killed the whole test run
    (SIGSEGV; docs/DESIGN.md, Buffer types and AMX)."""
    import llama_cpp.llama_cpp as LL
    from llama_cpp import Llama

    original = Llama.__init__

    def guarded(self, *args, **kwargs):
        if getattr(LL.llama_model_default_params, "localsidecar_plan", None) is None:
            self._stack = contextlib.ExitStack()  # what Llama.__del__ closes
            raise AssertionError(
                "a test built llama_cpp.Llama with llama.cpp's default model params, which put the weights "
                "in the AMX buffer type on an AMX host (SIGSEGV there): build it with localsidecar.load_llama"
            )
        original(self, *args, **kwargs)

    Llama.__init__ = guarded


_llama_only_with_the_projects_model_params()


def pytest_collection_modifyitems(items):
    """The files of helpers.SLOW_FILES are marked slow whole."""
    for item in items:
        if item.path.name in SLOW_FILES:
            item.add_marker(pytest.mark.slow)


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


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """An empty hub cache in tmp_path, offline; huggingface_hub's import-time
    constants are pointed there too (they were read when it was first imported)."""
    from huggingface_hub import constants

    home = tmp_path / "hf-home"
    cache = home / "hub"
    cache.mkdir(parents=True)
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("LOCALSIDECAR_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setattr(constants, "HF_HOME", str(home))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(home / "token"), raising=False)
    monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", str(home / "stored_tokens"), raising=False)
    return cache


@pytest.fixture
def network_attempts(monkeypatch):
    """Refuse every socket connect and DNS look-up; the list records attempts."""
    attempts: list[str] = []

    def refuse(what):
        def blocked(*args, **kwargs):
            attempts.append(what)
            raise OSError(f"network disabled in tests ({what})")

        return blocked

    monkeypatch.setattr(socket.socket, "connect", refuse("connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("connect_ex"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    monkeypatch.setattr(socket, "create_connection", refuse("create_connection"))
    return attempts


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


@pytest.fixture(scope="session")
def env(pair_paths, session_models_dir) -> dict[str, str]:
    """The environment of a localsidecar child process: this checkout, the
    session's models (pair_paths derived the draft: children only read it),
    one thread, offline, no Ray cluster of the user's, 200 columns."""
    base = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    return {
        **base,
        "PYTHONPATH": str(ROOT),
        "LOCALSIDECAR_MODELS_DIR": str(session_models_dir),
        "LOCALSIDECAR_THREADS": "1",
        "HF_HUB_OFFLINE": "1",
        "COLUMNS": "200",
    }
