"""Real `localsidecar run` / `acceptance` processes killed and
interrupted mid-way on the embedded pair; the result file stays valid JSONL
and reruns do only what is missing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from localsidecar.cli import main
from tests.helpers import send_delivered, signal_bit, wait_for_lines, wait_until

REPO = Path(__file__).resolve().parents[1]
TOPICS = [
    "bakery opens a second shop",
    "river flooded the fields",
    "school roof gets solar panels",
    "library extends its hours",
    "harbour bridge closes for repairs",
    "orchard harvest comes early",
]
RUN = ["--mode", "baseline", "--max-tokens", "8"]
TIMEOUT = 600  # seconds; a busy 2-core machine is slow, an idle one takes a few


@pytest.fixture()
def folder(tmp_path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i, topic in enumerate(TOPICS, start=1):
        (docs / f"d{i}.txt").write_text(
            f"News {i}: the {topic}. Residents say the change was overdue "
            f"and the council will review it next month.\n"
        )
    return docs


def start(args, env) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "localsidecar.cli", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def valid_records(out: Path) -> list[dict]:
    """Every line complete, one JSON object each."""
    data = out.read_bytes()
    assert data.endswith(b"\n"), data[-200:]
    recs = [json.loads(line) for line in data.decode("utf-8").splitlines()]
    assert all(isinstance(r, dict) and r["id"] and r["config"] for r in recs)
    return recs


def signal_after_first_record(args, env, out: Path, sig: int) -> tuple[list[dict], str]:
    """Start a command, send `sig` once its first record is saved; it must exit
    128 + sig without a traceback. Returns (valid records, stderr)."""
    p = start(args, env)
    wait_for_lines(out, 1, p, TIMEOUT, 0.05)
    p.send_signal(sig)
    _, err = p.communicate(timeout=TIMEOUT)
    assert p.returncode == 128 + sig, err
    assert "Traceback" not in err
    return valid_records(out), err


def test_killed_and_interrupted_runs_resume_without_losing_or_repeating(folder, env, tmp_path):
    out = folder / "res.jsonl"  # inside the documents folder: never read back as a document
    args = ["run", folder, *RUN, "--out", out]

    # 1. SIGKILL as soon as the first document is saved
    p = start(args, env)
    wait_for_lines(out, 1, p, TIMEOUT, 0.05)
    p.kill()
    p.communicate(timeout=TIMEOUT)
    assert p.returncode == -signal.SIGKILL
    killed = valid_records(out)
    k = len(killed)
    assert 1 <= k < len(TOPICS)

    # 2. the rerun skips them; Ctrl-C finishes the current document, exit 130
    p = start(args, env)
    wait_for_lines(out, k + 1, p, TIMEOUT, 0.05)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=TIMEOUT)
    assert p.returncode == 130, err
    assert f"skipped {k} document{'s' * (k != 1)} already in {out}; running {len(TOPICS) - k}" in err
    assert f"note: {out}: skipped, it is this command's output file" in err
    after_int = valid_records(out)
    j = len(after_int) - k
    assert j >= 1 and after_int[:k] == killed
    assert f"interrupted: {j} of {len(TOPICS) - k} documents completed, saved in {out}" in err
    assert "Traceback" not in err

    # 3. the last rerun completes only the rest
    p = start(args, env)
    stdout, err = p.communicate(timeout=TIMEOUT)
    assert p.returncode == 0, err
    assert (
        f"skipped {k + j} document{'s' * (k + j != 1)} already in {out}; running {len(TOPICS) - k - j}" in err
    )
    final = valid_records(out)
    assert final[: k + j] == after_int
    assert sorted(r["id"] for r in final) == [f"d{i}" for i in range(1, len(TOPICS) + 1)]
    assert len({r["config"] for r in final}) == 1

    # 4. nothing left: says so, loads no model, touches nothing
    before = out.read_bytes()
    r = CliRunner().invoke(main, [str(a) for a in args], env={"LOCALSIDECAR_THREADS": "1"})
    assert r.exit_code == 0 and f"skipped {len(TOPICS)} documents already in {out}; running 0" in r.stderr
    assert out.read_bytes() == before

    # 5. another configuration is refused, the file untouched
    r = CliRunner().invoke(
        main, ["run", str(folder), "--mode", "baseline", "--max-tokens", "6", "--out", str(out)]
    )
    assert r.exit_code == 2
    assert "holds results of a different configuration" in r.stderr and "--overwrite" in r.stderr
    assert out.read_bytes() == before

    # 6. --overwrite starts over with the new configuration
    r = CliRunner().invoke(
        main,
        [
            "run",
            str(folder / "d2.txt"),
            "--mode",
            "baseline",
            "--max-tokens",
            "6",
            "--out",
            str(out),
            "--overwrite",
        ],
        env={"LOCALSIDECAR_THREADS": "1"},
    )
    assert r.exit_code == 0, r.output
    recs = valid_records(out)
    assert [x["id"] for x in recs] == ["d2"] and recs[0]["config"] != final[0]["config"]


def test_sigterm_stops_acceptance_after_the_current_document_exit_143(folder, env, tmp_path):
    out = tmp_path / "acc.jsonl"
    args = ["acceptance", folder, "--max-tokens", "6", "--conditions", "baseline,rebased", "--out", out]
    done, err = signal_after_first_record(args, env, out, signal.SIGTERM)  # exit 143
    assert 1 <= len(done) < len(TOPICS)
    assert f"interrupted: {len(done)} of {len(TOPICS)} documents completed, saved in {out}" in err


def test_sigint_stops_quant_after_the_current_variant_exit_130(folder, env, tmp_path):
    out = tmp_path / "quant.jsonl"
    # Q4_1 is the embedded target itself (nothing to derive); the others are derived
    args = [
        "quant",
        folder / "d1.txt",
        "--quants",
        "Q4_1,Q8_0,Q5_0,Q4_0",
        "--no-loop",
        "--max-tokens",
        "4",
        "--out",
        out,
    ]
    done, err = signal_after_first_record(args, env, out, signal.SIGINT)  # exit 130
    assert 1 <= len(done) < 4 and done[0]["id"] == "Q4_1"
    assert f"interrupted: {len(done)} of 4 variants completed, saved in {out}" in err


def test_sigint_stops_hashtags_eval_after_the_current_document_exit_130(folder, env, tmp_path):
    out = tmp_path / "tags.jsonl"
    args = [
        "hashtags-eval",
        folder,
        "--max-tokens",
        "6",
        "--variants",
        "rebased-shifted,target",
        "--out",
        out,
    ]
    done, err = signal_after_first_record(args, env, out, signal.SIGINT)  # exit 130
    assert 1 <= len(done) < len(TOPICS)
    assert f"interrupted: {len(done)} of {len(TOPICS)} documents completed, saved in {out}" in err
    # the rerun evaluates only the rest
    p = start(args, env)
    _, err = p.communicate(timeout=TIMEOUT)
    assert p.returncode == 0, err
    final = valid_records(out)
    assert final[: len(done)] == done
    assert sorted(r["id"] for r in final) == [f"d{i}" for i in range(1, len(TOPICS) + 1)]


# --- issue 13: signals at any moment ------------------------------------------------------

# The program's entry points: `python -m localsidecar.cli`, and what the console
# script runs (`localsidecar.__main__:main`, pyproject's [project.scripts]).
ENTRIES = {
    "python -m localsidecar.cli": ["-m", "localsidecar.cli"],
    "console script": ["-c", "import sys; from localsidecar.__main__ import main; sys.exit(main())"],
}


def _wait(predicate, proc: subprocess.Popen, what: str) -> None:
    wait_until(predicate, proc, what, TIMEOUT)


def stderr_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.strip()]


def _mapped(pid: int, name: str) -> bool:
    """Whether process `pid` has a file whose path holds `name` mapped (/proc/PID/maps)."""
    try:
        with open(f"/proc/{pid}/maps") as f:
            return name in f.read()
    except OSError:
        return False


# The moments a signal is sent at, each an event the process shows (no delay):
# its handler installed (SigCgt: Python itself catches only SIGINT) while Click
# and numpy are still being imported; llama.cpp's library loaded (the command
# runs, no guard open yet); the target's file mapped (its models load inside
# the command's guard: the first signal is recorded, the command then stops).
PHASES = ("handler installed", "llama.cpp loaded", "model mapping")


def _phase_reached(p: subprocess.Popen, phase: str, model: Path) -> bool:
    if phase == "handler installed":
        return signal_bit(p.pid, "SigCgt", signal.SIGTERM)
    return _mapped(p.pid, "libllama" if phase == "llama.cpp loaded" else model.name)


@pytest.mark.parametrize("entry", list(ENTRIES))
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_the_program_starts_is_one_line_and_128_plus_signum(
    entry, sig, env, folder, pair_paths
):
    """Case 9: from the handler's installation on, while Click, numpy and
    llama.cpp are still being imported, and later while the models load."""
    for phase in PHASES:
        p = subprocess.Popen(
            [sys.executable, *ENTRIES[entry], "run", str(folder / "d1.txt"), *RUN],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        _wait(lambda: _phase_reached(p, phase, pair_paths[0]), p, phase)
        p.send_signal(sig)
        _, err = p.communicate(timeout=TIMEOUT)
        lines = stderr_lines(err)
        assert p.returncode == 128 + sig, (phase, p.returncode, err)
        assert "Traceback" not in err and "Exception ignored" not in err, err
        assert lines[-1] == f"Error: interrupted by {signal.Signals(sig).name}", (phase, err)
        # once the command runs (models loading) it also says what it completed
        assert all(line.startswith(("interrupted: ", "stopping ")) for line in lines[:-1]), (phase, err)
        if phase == "model mapping":
            assert lines[:-1] == ["interrupted: 0 of 1 documents completed"], err


@pytest.mark.parametrize(
    "command",
    [
        ["run", *RUN[:2], "--max-tokens", "24"],
        ["acceptance", "--max-tokens", "24", "--conditions", "baseline,rebased,masked,visible"],
    ],
    ids=["run", "acceptance"],
)
def test_a_second_signal_right_after_the_first_stops_at_once(command, folder, env, tmp_path):
    """Case 10: two SIGINTs in quick succession (the second sent as soon as the
    kernel delivered the first, typically while one llama_decode runs, when
    Python sees both in one handler call) stop before the next document is
    finished: nothing merges them into one 'finish the current document'."""
    out = tmp_path / "out.jsonl"
    p = start([command[0], folder, *command[1:], "--out", out], env)
    wait_for_lines(out, 1, p, TIMEOUT, 0.05)
    send_delivered(p, signal.SIGINT)
    send_delivered(p, signal.SIGINT)
    _, err = p.communicate(timeout=TIMEOUT)
    assert p.returncode == 130, err
    assert "Traceback" not in err
    done = valid_records(out)
    assert len(done) == 1, err  # the document in progress was discarded
    assert f"interrupted: 1 of {len(TOPICS)} documents completed, saved in {out}" in err


def test_signals_merged_inside_one_c_call_are_counted():
    """Two SIGTERMs that reach Python's C-level handler while the main thread
    is in one C call (a blocking read, both signals blocked in it so another
    thread takes them) make ONE Python handler call; the guard still counts
    two and raises at once instead of recording a first signal."""
    import threading

    from localsidecar.cli.signals import Interrupted, graceful_interrupts

    me, main_tid = os.getpid(), threading.get_native_id()
    r, w = os.pipe()

    def main_in_read() -> bool:
        with open(f"/proc/self/task/{main_tid}/wchan") as f:
            return "pipe" in f.read()

    def sender():
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})  # threads inherit the mask
        deadline = time.monotonic() + 10
        while not main_in_read() and time.monotonic() < deadline:
            time.sleep(0.001)
        for _ in range(2):
            os.kill(me, signal.SIGTERM)
            while signal_bit(me, "ShdPnd", signal.SIGTERM) and time.monotonic() < deadline:
                time.sleep(0.001)
        os.write(w, b"x")

    try:
        with pytest.raises(Interrupted) as info:
            with graceful_interrupts() as guard:
                old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
                try:
                    helper = threading.Thread(target=sender)
                    helper.start()
                    os.read(r, 1)  # one blocking C call: no Python handler runs until it returns
                finally:
                    signal.pthread_sigmask(signal.SIG_SETMASK, old)
                for _ in range(100):  # the handler runs at the next bytecodes: it must raise there
                    pass
                raise AssertionError(f"no Interrupted after two signals (first recorded: {guard.requested})")
        helper.join()
    finally:
        os.close(r)
        os.close(w)
    assert info.value.exit_code == 143


def test_interrupt_outside_a_command_removes_temporary_files_and_keeps_printed_output(tmp_path):
    """With no guard open, a signal ends the program at once: registered temporary
    files are removed, stdout written so far is flushed, one line, exit 130."""
    script = textwrap.dedent("""
        import os, signal, sys, time
        from localsidecar.io import interrupts
        interrupts.install_process_handlers()
        print("printed before the signal")  # block-buffered: stdout is a pipe
        tmp = sys.argv[1]
        open(tmp, "w").write("half a file")
        with interrupts.removed_on_exit(tmp):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(30)
        print("not reached")
    """)
    tmp = tmp_path / ".out.csv.part"
    p = subprocess.run(
        [sys.executable, "-c", script, str(tmp)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert p.returncode == 130, p.stderr
    assert p.stdout == "printed before the signal\n"
    assert stderr_lines(p.stderr) == ["Error: interrupted by SIGINT"]
    assert not tmp.exists()


def test_a_second_signal_inside_llama_cpps_log_callback_is_not_lost(monkeypatch):
    """llama.cpp calls a Python function for every log line (model loading
    logs hundreds); an exception raised there is dropped by ctypes ("Exception
    ignored on calling ctypes callback function"). Two signals arriving in it
    are kept by the guard and raised at the next check instead (the program,
    with its process handlers, ends at once: interrupts.exit_now)."""
    from localsidecar.backend import runtime
    from localsidecar.cli.signals import Interrupted, graceful_interrupts

    swallowed = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: swallowed.append(u.exc_value))

    class SignalsWhileLogging:
        @staticmethod
        def write(fd, text):
            for _ in range(2):
                os.kill(os.getpid(), signal.SIGTERM)
            return len(text)

    monkeypatch.setattr(runtime, "_verbose", True)
    monkeypatch.setattr(runtime, "os", SignalsWhileLogging)
    with pytest.raises(Interrupted) as info:
        with graceful_interrupts() as guard:
            runtime._log_callback(
                2, b"llama_model_loader: loaded meta data\n", None
            )  # through C, as llama.cpp calls it
            assert swallowed == [] and guard.requested
            guard.check()
    assert info.value.exit_code == 143


def _probe_child_of(driver: int) -> bool:
    """The one-time probe's child (a test decode in a child process) runs under `driver`."""
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == driver and b"probe_child" in cmd:
            return True
    return False


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_ctrl_c_to_the_process_group_during_the_probe_is_an_interrupt_not_a_crash(sig, env, folder, tmp_path):
    """A terminal's Ctrl-C reaches the probe's child too. Was: exit 2,
    `Error: llama.cpp crashed on this CPU (SIGINT in a test decode ...); set
    LOCALSIDECAR_EXTRA_BUFTS=0 ...`, advice for a crash that never was."""
    p = subprocess.Popen(
        [sys.executable, "-m", "localsidecar.cli", "run", str(folder / "d1.txt"), *RUN],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**env, "LOCALSIDECAR_PROBE_CACHE": str(tmp_path / "probe")},  # empty: the probe runs
        start_new_session=True,  # its own process group, as a terminal gives a command
    )
    _wait(lambda: _probe_child_of(p.pid), p, "the probe's child")
    os.killpg(p.pid, sig)
    _, err = p.communicate(timeout=TIMEOUT)
    assert p.returncode == 128 + sig, err
    assert stderr_lines(err) == [
        "interrupted: 0 of 1 documents completed",
        f"Error: interrupted by {signal.Signals(sig).name}",
    ], err


def test_a_second_signal_inside_llamas_log_callback_still_says_what_was_completed():
    """A second SIGINT that lands in llama.cpp's log callback ends the process at once
    (an exception there would be lost): the command's 'interrupted: N of M ...' line
    still comes first. The callback is a Python function of backend.runtime's module
    name, called from this script the way ctypes calls it."""
    code = textwrap.dedent(
        """
        import signal, sys
        from localsidecar.io import interrupts
        interrupts.install_process_handlers()
        from localsidecar.cli.signals import completed_line, graceful_interrupts
        with graceful_interrupts() as guard:
            guard.last_line = lambda: completed_line(1, 6, "out.jsonl")
            guard.on_signal(signal.SIGINT, 1, sys._getframe())  # the first: recorded
            scope = {"__name__": "localsidecar.backend.runtime", "guard": guard, "signal": signal, "sys": sys}
            exec("def _log_callback():\\n    guard.on_signal(signal.SIGINT, 1, sys._getframe())\\n_log_callback()", scope)
        print("not reached")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT, cwd=REPO
    )
    assert done.returncode == 130, done.stderr
    assert (
        done.stderr
        == "interrupted: 1 of 6 documents completed, saved in out.jsonl\nError: interrupted by SIGINT\n"
    )
    assert "not reached" not in done.stdout
