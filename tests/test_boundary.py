"""The program's boundary with its caller: what the entry point installs
(signal handlers, standard streams) and that importing installs nothing;
closed standard streams and a failing stdout as one line each; the one
error type of bad settings (ConfigError)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from localsidecar.errors import ConfigError, LocalsidecarError

from .helpers import EXAMPLES

REPO = Path(__file__).resolve().parents[1]
NOTES = str(EXAMPLES / "notes.txt")
FAST = ["--max-tokens", "2", "--mode", "target-only"]
CLOSED_STDOUT = "Error: stdout is closed (>&-); redirect it to a file, or to /dev/null to discard the output"


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "LOCALSIDECAR_THREADS": "1"}


def program(args, closed: tuple[int, ...] = (), **kw) -> subprocess.CompletedProcess:
    """`python -m localsidecar.cli ARGS` with the descriptors `closed` closed
    before it starts (as `>&-`, `<&-`, `2>&-` do)."""

    def close_them() -> None:
        for fd in closed:
            os.close(fd)

    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    return subprocess.run(
        [sys.executable, "-m", "localsidecar.cli", *map(str, args)],
        text=True,
        timeout=600,
        env=child_env(),
        preexec_fn=close_them,
        **kw,
    )


def test_importing_the_command_line_installs_no_signal_handler():
    """The entry point installs the handlers; an import (even with argv[0]
    "-m", as while `python -m` locates a module) leaves what the process
    started with (Python's own, or SIG_IGN inherited by a background job)."""
    script = textwrap.dedent("""
        import signal, sys
        before = [signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)]
        sys.argv[:] = ["-m"]
        import localsidecar.cli
        from localsidecar.cli import main
        import localsidecar.cli.group
        after = [signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)]
        print(after[0] is before[0], after[1] is before[1], after[0] is not None)
    """)
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=child_env())
    assert p.stdout.split() == ["True", "True", "True"], p.stderr


def test_closed_stdout_is_one_line_before_any_work(tmp_path):
    out = tmp_path / "out.jsonl"
    for args in (["run", NOTES, *FAST, "--out", out], ["models"], ["--help"]):
        p = program(args, closed=(1,))
        assert (p.returncode, p.stderr) == (2, CLOSED_STDOUT + "\n"), (args, p.stderr)
    assert not out.exists()  # refused before the command ran


def test_closed_stdin_is_one_line_when_a_document_is_read_from_it():
    p = program(["run", "-", *FAST], closed=(0,))
    assert p.returncode == 2
    assert p.stderr == "Error: <stdin> is closed; pipe the text to '-' or name a file\n"


def test_closed_stderr_still_runs_and_exits_with_the_right_code(tmp_path):
    ok = program(["models", "--json"], closed=(2,), stderr=None)
    assert ok.returncode == 0 and ok.stdout.startswith("{")
    bad = program(["run", tmp_path / "missing.txt", *FAST], closed=(2,), stderr=None)
    assert (bad.returncode, bad.stdout) == (2, "")


def gone_reader() -> int:
    """The write end of a pipe whose reader has gone (`| head -1` after its line)."""
    r, w = os.pipe()
    os.close(r)
    return w


def test_a_reader_gone_from_stdout_ends_the_command_quietly_with_141():
    """Was: exit 1 (rich's SystemExit(1) on BrokenPipeError), the program's code for a bug."""
    w = gone_reader()
    try:
        p = program(["models"], stdout=w)
    finally:
        os.close(w)
    assert (p.returncode, p.stderr) == (141, "")


@pytest.mark.slow
def test_a_reader_gone_from_stderr_stops_nothing(tmp_path):
    """`run ... 2> >(head -1)`: was exit 1 after the first document (its
    progress line hit the broken pipe), the others never run. Now the
    messages are dropped and every document runs."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in (1, 2, 3):
        (docs / f"d{i}.txt").write_text(f"Note {i}: the library extends its hours on weekends.\n")
    out = tmp_path / "o.jsonl"
    w = gone_reader()
    try:
        p = program(["run", docs, *FAST, "--json", "--out", out], stderr=w)
    finally:
        os.close(w)
    assert p.returncode == 0
    ids = [json.loads(line)["id"] for line in p.stdout.splitlines()]
    assert ids == ["d1", "d2", "d3"] == [json.loads(line)["id"] for line in out.read_text().splitlines()]


def test_a_write_to_stdout_that_failed_fails_again_after_a_caller_swallowed_it():
    """StdoutWriter: a caller that catches the first failure (Click probes
    streams, some libraries catch Exception) never hides it: the next write
    fails the same way, and the final flush into /dev/null is silent."""
    script = textwrap.dedent("""
        import sys
        from localsidecar.io.streams import StdoutError, prepare_standard_streams
        assert prepare_standard_streams() is None
        sys.stdout.write("")  # nothing to write: no error, even on /dev/full
        for attempt in range(2):
            try:
                sys.stdout.write("x" * 10)
                sys.stdout.flush()
            except StdoutError as exc:
                print(attempt, exc, file=sys.stderr)
    """)
    with open("/dev/full", "w") as full:
        p = subprocess.run(
            [sys.executable, "-c", script], stdout=full, stderr=subprocess.PIPE, text=True, env=child_env()
        )
    assert p.returncode == 0, p.stderr
    assert p.stderr.splitlines() == [
        "0 cannot write to stdout (No space left on device)",
        "1 cannot write to stdout (No space left on device)",
    ]


@pytest.mark.parametrize(
    "make",
    [
        lambda: __import__("localsidecar").SpecConfig(draft_max=0),
        lambda: __import__("localsidecar").SpecConfig(numbers="some"),
        lambda: __import__("localsidecar").SpecConfig(summary="abstract"),
        lambda: __import__("localsidecar").SpecConfig(unsupported="hide"),
        lambda: __import__("localsidecar").SpecConfig(names="some"),
        lambda: __import__("localsidecar.decoding.layouts", fromlist=["x"]).prefill_draft(
            None, None, "odd", reserve=0
        ),
        lambda: __import__("localsidecar.decoding.engine", fromlist=["x"]).run_mode("target_only"),
    ],
    ids=["draft_max", "numbers", "summary", "unsupported", "names", "mode", "run-mode"],
)
def test_a_bad_setting_is_a_config_error(make):
    """One type for a setting out of range: the user's to fix (exit 2 at the
    command line) and a ValueError for code that catches bad values."""
    with pytest.raises(ConfigError) as info:
        make()
    assert isinstance(info.value, LocalsidecarError) and isinstance(info.value, ValueError)
    assert "\n" not in str(info.value)
