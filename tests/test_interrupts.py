"""Issue 5: real `localsidecar run` / `acceptance` processes killed and
interrupted mid-way on the embedded pair; the result file stays valid JSONL
and reruns do only what is missing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from localsidecar.cli import main

REPO = Path(__file__).resolve().parents[1]
TOPICS = ["bakery opens a second shop", "river flooded the fields", "school roof gets solar panels",
          "library extends its hours", "harbour bridge closes for repairs", "orchard harvest comes early"]
RUN = ["--mode", "baseline", "--max-tokens", "8"]
TIMEOUT = 600  # seconds; a busy 2-core machine is slow, an idle one takes a few


@pytest.fixture()
def folder(tmp_path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i, topic in enumerate(TOPICS, start=1):
        (docs / f"d{i}.txt").write_text(f"News {i}: the {topic}. Residents say the change was overdue "
                                        f"and the council will review it next month.\n")
    return docs


@pytest.fixture()
def env(pair_paths, session_models_dir) -> dict[str, str]:
    # pair_paths has derived the draft already: the children only read it.
    return {**os.environ, "PYTHONPATH": str(REPO), "LOCALSIDECAR_MODELS_DIR": str(session_models_dir),
            "LOCALSIDECAR_THREADS": "1", "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}


def start(args, env) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "localsidecar.cli", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def wait_for_lines(out: Path, n: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if out.exists() and out.read_bytes().count(b"\n") >= n:
            return
        if proc.poll() is not None:
            raise AssertionError(f"exited {proc.returncode} before line {n}: {proc.stderr.read()}")
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"no line {n} in {out} after {TIMEOUT} s")


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
    wait_for_lines(out, 1, p)
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
    wait_for_lines(out, 1, p)
    p.kill()
    p.communicate(timeout=TIMEOUT)
    assert p.returncode == -signal.SIGKILL
    killed = valid_records(out)
    k = len(killed)
    assert 1 <= k < len(TOPICS)

    # 2. the rerun skips them; Ctrl-C finishes the current document, exit 130
    p = start(args, env)
    wait_for_lines(out, k + 1, p)
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
    assert f"skipped {k + j} document{'s' * (k + j != 1)} already in {out}; running {len(TOPICS) - k - j}" in err
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
    r = CliRunner().invoke(main, ["run", str(folder), "--mode", "baseline", "--max-tokens", "6", "--out", str(out)])
    assert r.exit_code == 2
    assert "holds results of a different configuration" in r.stderr and "--overwrite" in r.stderr
    assert out.read_bytes() == before

    # 6. --overwrite starts over with the new configuration
    r = CliRunner().invoke(main, ["run", str(folder / "d2.txt"), "--mode", "baseline", "--max-tokens", "6",
                                  "--out", str(out), "--overwrite"], env={"LOCALSIDECAR_THREADS": "1"})
    assert r.exit_code == 0, r.output
    recs = valid_records(out)
    assert [x["id"] for x in recs] == ["d2"] and recs[0]["config"] != final[0]["config"]


def test_sigterm_stops_acceptance_after_the_current_document_exit_143(folder, env, tmp_path):
    out = tmp_path / "acc.jsonl"
    args = ["acceptance", folder, "--max-tokens", "6", "--conditions", "baseline,rebased", "--out", out]
    done, err = signal_after_first_record(args, env, out, signal.SIGTERM)  # exit 143
    assert 1 <= len(done) < len(TOPICS)
    assert f"interrupted: {len(done)} of {len(TOPICS)} documents completed, saved in {out}" in err


@pytest.mark.skipif("quant" not in main.commands, reason="no quant command")
def test_sigint_stops_quant_after_the_current_variant_exit_130(folder, env, tmp_path):
    out = tmp_path / "quant.jsonl"
    # Q4_1 is the embedded target itself (nothing to derive); the others are derived
    args = ["quant", folder / "d1.txt", "--quants", "Q4_1,Q8_0,Q5_0,Q4_0", "--no-loop", "--max-tokens", "4", "--out", out]
    done, err = signal_after_first_record(args, env, out, signal.SIGINT)  # exit 130
    assert 1 <= len(done) < 4 and done[0]["id"] == "Q4_1"
    assert f"interrupted: {len(done)} of 4 variants completed, saved in {out}" in err


def test_sigint_stops_hashtags_eval_after_the_current_document_exit_130(folder, env, tmp_path):
    out = tmp_path / "tags.jsonl"
    args = ["hashtags-eval", folder, "--max-tokens", "6", "--variants", "rebased-shifted,target", "--out", out]
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
