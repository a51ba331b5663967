"""Result files and interrupts: real files, real child processes, real signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from localsidecar.cli.signals import Interrupted, graceful_interrupts
from localsidecar.errors import LocalsidecarError
from localsidecar.io.results import ResultWriter, config_fingerprint
from tests.helpers import send_delivered

from .helpers import EXAMPLES, one_line_error

REPO = Path(__file__).resolve().parents[1]
CONFIG = {"target": "t.gguf", "draft": "d.gguf", "mode": "rebased", "options": {"draft_max": 4}}


def lines_of(path) -> list[dict]:
    return lines_of_bytes(Path(path).read_bytes())


def lines_of_bytes(data: bytes) -> list[dict]:
    assert data == b"" or data.endswith(b"\n")
    return [json.loads(line) for line in data.decode().splitlines()]


def error_of(fn, *args, **kwargs) -> str:
    with pytest.raises(LocalsidecarError) as info:
        fn(*args, **kwargs)
    message = str(info.value)
    assert "\n" not in message
    return message


def write_records(path, ids, config=CONFIG):
    with ResultWriter(path, config) as writer:
        for record_id in ids:
            writer.write({"id": record_id, "summary": f"summary of {record_id}"})


def test_config_fingerprint_is_canonical():
    fp = config_fingerprint(CONFIG)
    assert len(fp) == 16 and int(fp, 16) >= 0
    reordered = {"options": {"draft_max": 4}, "mode": "rebased", "draft": "d.gguf", "target": "t.gguf"}
    assert config_fingerprint(reordered) == fp
    assert config_fingerprint({"a": (1, 2), "p": Path("x")}) == config_fingerprint({"a": [1, 2], "p": "x"})
    assert config_fingerprint({**CONFIG, "mode": "masked"}) != fp


def test_write_appends_one_complete_line_per_record(tmp_path):
    out = tmp_path / "out.jsonl"
    write_records(out, ["a", "b"])
    write_records(out, ["c"])
    records = lines_of(out)
    assert [r["id"] for r in records] == ["a", "b", "c"]
    assert {r["config"] for r in records} == {config_fingerprint(CONFIG)}
    assert records[0]["summary"] == "summary of a"


def test_unicode_newlines_and_lone_surrogates_stay_on_one_line(tmp_path):
    out = tmp_path / "out.jsonl"
    text = "line\nbreak\u2028sep \U0001f600 \ud800"
    write_records(out, [text])
    assert out.read_bytes().count(b"\n") == 1
    assert lines_of(out)[0]["id"] == text


def test_resume_reports_done_ids(tmp_path):
    out = tmp_path / "out.jsonl"
    write_records(out, ["a", "b"])
    with ResultWriter(out, CONFIG) as writer:
        assert writer.done_ids == {"a", "b"} and writer.notes == []
        writer.write({"id": "c"})
        assert writer.done_ids == {"a", "b", "c"} and writer.written == 1


def test_different_configuration_refused_and_file_untouched(tmp_path):
    out = tmp_path / "out.jsonl"
    write_records(out, ["a"])
    with open(out, "ab") as f:
        f.write(b'{"id": "b", "summ')  # a crash fragment must not be repaired either
    before = out.read_bytes()
    other = {**CONFIG, "mode": "visible"}
    message = error_of(ResultWriter, out, other)
    # what differs, then a new --out name first; --overwrite says it deletes the results
    assert message.startswith(
        f'{out} holds results of a different configuration (mode "rebased" in the file, "visible" now); '
    )
    assert message.endswith(
        f"use another --out (e.g. {tmp_path / 'out-2.jsonl'}), "
        "or --overwrite to delete its 1 results and start over"
    )
    assert out.read_bytes() == before
    # records of an older version carry no settings: the fingerprints are named instead
    legacy = tmp_path / "legacy.jsonl"
    legacy.write_bytes(b'{"id": "a", "config": "0123456789abcdef"}\n')
    message = error_of(ResultWriter, legacy, other)
    assert "0123456789abcdef in the file" in message and config_fingerprint(other) in message
    assert "--overwrite to delete its 1 results" in message


def test_overwrite_starts_over(tmp_path):
    out = tmp_path / "out.jsonl"
    write_records(out, ["a", "b"])
    other = {**CONFIG, "mode": "visible"}
    with ResultWriter(out, other, overwrite=True) as writer:
        assert writer.done_ids == set()
        writer.write({"id": "z"})
    assert [(r["id"], r["config"]) for r in lines_of(out)] == [("z", config_fingerprint(other))]


@pytest.mark.parametrize("fragment", [b'{"id": "c", "summary": "cut', b'{"id": "c", "sum\n', b" \t"])
def test_trailing_crash_fragment_removed_with_note(tmp_path, fragment):
    out = tmp_path / "out.jsonl"
    write_records(out, ["a", "b"])
    complete = out.read_bytes()
    with open(out, "ab") as f:
        f.write(fragment)
    with ResultWriter(out, CONFIG) as writer:
        assert writer.done_ids == {"a", "b"}
        assert len(writer.notes) == 1 and "incomplete last line" in writer.notes[0]
        assert out.read_bytes() == complete
        writer.write({"id": "c"})
    assert [r["id"] for r in lines_of(out)] == ["a", "b", "c"]


@pytest.mark.parametrize(
    "content",
    [
        b'{"id": "doc1", "text": "a documents file, not results"}\n',
        b'{"id": "a", "config": "x"}\nplain text in the middle\n{"id": "b", "config": "x"}\n',
        b"my notes without a final newline",
        b'{"id": "a", "text": "complete JSON without newline"}',
        # a last line that no kill can leave: no prefix of any JSON object
        b'{"id": "a", "config": "x"}\n{my important note: keep}\n',
        b'{"id": "a", "config": "x"}\n{my important note: keep}',
        b'{"id": "a", "config": "x"}\n{"note": keep}\n',
    ],
)
def test_foreign_file_is_never_modified(tmp_path, content):
    out = tmp_path / "notes.jsonl"
    out.write_bytes(content)
    message = error_of(ResultWriter, out, CONFIG)
    assert str(out) in message and "use another --out (e.g. " in message
    assert "--overwrite to replace the file (its contents are deleted)" in message
    assert out.read_bytes() == content


def test_unopenable_paths(tmp_path):
    assert "cannot open for writing" in error_of(ResultWriter, tmp_path, CONFIG)
    missing = tmp_path / "no-such-folder" / "out.jsonl"
    assert error_of(ResultWriter, missing, CONFIG).startswith(f"{missing}: cannot open for writing")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # keeps the writer's open from blocking
    try:
        assert "not a regular file" in error_of(ResultWriter, fifo, CONFIG)
    finally:
        os.close(fd)


def test_second_writer_on_the_same_file_is_refused(tmp_path):
    out = tmp_path / "out.jsonl"
    with ResultWriter(out, CONFIG):
        assert "being written by another run" in error_of(ResultWriter, out, CONFIG)
    ResultWriter(out, CONFIG).close()


def test_record_contract(tmp_path):
    with ResultWriter(tmp_path / "out.jsonl", CONFIG) as writer:
        with pytest.raises(ValueError):
            writer.write({"summary": "no id"})
        with pytest.raises(ValueError):
            writer.write({"id": "a", "config": "0" * 16})
    with pytest.raises(ValueError):
        writer.write({"id": "late"})


# --- child processes ---------------------------------------------------------

WORKER = textwrap.dedent("""
    import sys, time
    from localsidecar.io.results import ResultWriter
    from localsidecar.cli.signals import Interrupted, graceful_interrupts

    out, count, seconds_per_doc = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    gated = sys.argv[4:] == ["gate"]  # each document waits for a line on stdin (the test's "go")
    writer = None
    try:
        with graceful_interrupts() as guard, ResultWriter(out, {"mode": "test"}) as writer:
            done = writer.done_ids
            print(f"skipped {len(done)}", flush=True)
            for i in range(count):
                doc_id = f"doc-{i}"
                if doc_id in done:
                    continue
                print(f"start {doc_id}", flush=True)
                if gated:
                    sys.stdin.readline()
                else:
                    time.sleep(seconds_per_doc)
                writer.write({"id": doc_id, "i": i, "summary": "x" * 4000})
                print(f"done {doc_id}", flush=True)
                guard.check()
    except Interrupted as exc:
        print(f"interrupted: {writer.written if writer else 0} completed", flush=True)
        sys.exit(exc.exit_code)
""")


def start_worker(tmp_path, out, count, seconds_per_doc, gate: bool = False):
    """The worker; with `gate`, each document waits for `release(proc)`."""
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [
            sys.executable,
            str(script),
            str(out),
            str(count),
            str(seconds_per_doc),
            *(["gate"] if gate else []),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def release(proc) -> None:
    """Let a gated worker finish the document it started."""
    proc.stdin.write("go\n")
    proc.stdin.flush()


def read_until(proc, prefix: str) -> list[str]:
    seen = []
    for line in proc.stdout:
        seen.append(line.strip())
        if line.startswith(prefix):
            return seen
    raise AssertionError(f"worker ended before {prefix!r}: {seen} {proc.stderr.read()}")


def test_sigkill_mid_run_leaves_valid_jsonl_and_rerun_does_the_rest(tmp_path):
    out = tmp_path / "out.jsonl"
    proc = start_worker(tmp_path, out, 1_000_000, 0)
    deadline = time.monotonic() + 60
    while (not out.exists() or out.read_bytes().count(b"\n") < 200) and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.kill()
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    # A record is one write(2) of 4 KB; SIGKILL can still cut it at a page
    # boundary (the kernel ends a write early on a fatal signal), so the file
    # is whole records plus at most one fragment, which the next open removes.
    data = out.read_bytes()
    whole, fragment = data[: data.rfind(b"\n") + 1], data[data.rfind(b"\n") + 1 :]
    records = lines_of_bytes(whole)  # every complete line parseable
    killed_at = len(records)
    assert killed_at >= 200 and [r["i"] for r in records] == list(range(killed_at))
    with ResultWriter(out, {"mode": "test"}) as writer:
        assert writer.done_ids == {f"doc-{i}" for i in range(killed_at)}
        assert writer.notes == (
            [f"{out}: removed an incomplete last line ({len(fragment)} bytes) left by an interrupted run"]
            if fragment
            else []
        )
    assert out.read_bytes() == whole

    total = killed_at + 25
    rerun = start_worker(tmp_path, out, total, 0)
    stdout, stderr = rerun.communicate(timeout=60)
    assert rerun.returncode == 0, stderr
    assert stdout.splitlines()[0] == f"skipped {killed_at}"
    assert stdout.count("start ") == 25
    assert [r["i"] for r in lines_of(out)] == list(range(total))


def test_sigterm_finishes_current_document_and_exits_143(tmp_path):
    out = tmp_path / "out.jsonl"
    proc = start_worker(tmp_path, out, 50, 0, gate=True)
    for doc in range(2):
        read_until(proc, f"start doc-{doc}")
        release(proc)
    read_until(proc, "start doc-2")
    send_delivered(proc, signal.SIGTERM)  # while doc-2 runs (waits for its "go")
    release(proc)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 143, stderr
    assert "done doc-2" in stdout and "start doc-3" not in stdout
    assert "interrupted: 3 completed" in stdout and "Traceback" not in stderr
    assert [r["id"] for r in lines_of(out)] == ["doc-0", "doc-1", "doc-2"]


def test_second_sigint_discards_current_document_and_exits_130(tmp_path):
    out = tmp_path / "out.jsonl"
    proc = start_worker(tmp_path, out, 50, 0, gate=True)
    read_until(proc, "start doc-0")
    send_delivered(proc, signal.SIGINT)  # doc-0 never gets its "go": only the signals end it
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert "done doc-0" not in stdout and "interrupted: 0 completed" in stdout
    assert out.read_bytes() == b""


def test_write_failure_keeps_earlier_lines_intact(tmp_path):
    out = tmp_path / "out.jsonl"
    write_records(out, ["a"], config={"mode": "test"})
    before = out.read_bytes()
    script = textwrap.dedent("""
        import resource, signal, sys
        from localsidecar.errors import LocalsidecarError
        from localsidecar.io.results import ResultWriter
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # exceeding the limit: EFBIG, not death
        limit = int(sys.argv[2])
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        try:
            with ResultWriter(sys.argv[1], {"mode": "test"}) as writer:
                writer.write({"id": "big", "summary": "y" * limit})
        except LocalsidecarError as exc:
            print(exc)
            sys.exit(2)
    """)
    limit = len(before) + 1000
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", script, str(out), str(limit)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout.startswith(f"{out}: cannot write results (File too large)")
    assert out.read_bytes() == before


# --- graceful_interrupts in process --------------------------------------------


def test_sigterm_waits_for_check_and_handlers_are_restored():
    previous = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    reached_check = False
    with pytest.raises(Interrupted) as info:
        with graceful_interrupts() as guard:
            os.kill(os.getpid(), signal.SIGTERM)
            assert guard.requested
            reached_check = True
            guard.check()
    assert reached_check
    assert (info.value.signum, info.value.exit_code) == (signal.SIGTERM, 143)
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == previous


def test_unchecked_signal_is_raised_on_leaving_the_block():
    with pytest.raises(Interrupted) as info:
        with graceful_interrupts():
            os.kill(os.getpid(), signal.SIGTERM)
    assert info.value.exit_code == 143


def test_keyboard_interrupt_becomes_interrupted_130():
    with pytest.raises(Interrupted) as info:
        with graceful_interrupts():
            raise KeyboardInterrupt
    assert (info.value.signum, info.value.exit_code) == (signal.SIGINT, 130)


def test_uncaught_interrupted_ends_a_click_command_cleanly():
    @click.command()
    def cmd():
        with graceful_interrupts():
            os.kill(os.getpid(), signal.SIGTERM)

    result = CliRunner().invoke(cmd)
    assert result.exit_code == 143
    assert result.output.strip() == "Error: interrupted by SIGTERM"


def test_a_foreign_last_line_after_records_stops_the_run_and_is_kept(tmp_path):
    """Was: `{my important note: keep}` after the records, with its newline,
    deleted as "an incomplete last line left by an interrupted run"."""
    from localsidecar.cli import main

    out = tmp_path / "out.jsonl"
    args = [
        "run",
        str(EXAMPLES / "notes.txt"),
        "--max-tokens",
        "2",
        "--mode",
        "target-only",
        "--out",
        str(out),
    ]
    r = CliRunner().invoke(main, args, env={"LOCALSIDECAR_THREADS": "1"})
    assert r.exit_code == 0, r.output
    with open(out, "ab") as f:
        f.write(b"{my important note: keep}\n")
    before = out.read_bytes()
    line = one_line_error(CliRunner().invoke(main, args, env={"LOCALSIDECAR_THREADS": "1"}))
    assert line.startswith(f"Error: {out}:2 is not a localsidecar result record; use another --out"), line
    assert out.read_bytes() == before
