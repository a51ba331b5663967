"""The buffer-type decision (backend/buffers.py), the buffer types the weights
really went to, and the guarded crash probe (backend/probe.py), on the real
embedded models. docs/cpus.md."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from localsidecar.backend import Context, Model, buffers, probe
from localsidecar.backend.buffers import AMX_ENV, EXTRA_BUFTS_ENV, decide
from localsidecar.cli import main as cli_main

from .helpers import EXAMPLES, one_line_error

AMX_FLAGS = {"avx2", "avx512f", "avx512_vnni", "amx_tile", "amx_int8", "amx_bf16"}
PLAIN_FLAGS = {"avx2", "fma", "f16c"}
SIGILL_PRELUDE = "import os, signal; os.kill(os.getpid(), signal.SIGILL)"


# --- the decision, from its inputs ---------------------------------------------------------------


@pytest.mark.parametrize(
    "offered, flags, env, extra",
    [
        (("AMX", "CPU_REPACK"), AMX_FLAGS, {}, False),  # an AMX build on an AMX CPU: off
        (("AMX", "CPU_REPACK"), AMX_FLAGS, {AMX_ENV: "1"}, True),  # opted in
        (("AMX", "CPU_REPACK"), AMX_FLAGS, {AMX_ENV: "0"}, False),
        (("CPU_REPACK",), AMX_FLAGS, {}, True),  # AMX CPU, build without AMX: REPACK kept
        (("CPU_REPACK",), PLAIN_FLAGS, {}, True),  # this kind of host
        ((), PLAIN_FLAGS, {}, True),
        (None, AMX_FLAGS, {}, False),  # list unknown: the CPU flags decide
        (None, AMX_FLAGS, {AMX_ENV: "1"}, True),
        (None, PLAIN_FLAGS, {}, True),
        (("CPU_REPACK",), PLAIN_FLAGS, {EXTRA_BUFTS_ENV: "0"}, False),  # forced off everywhere
        (("AMX", "CPU_REPACK"), AMX_FLAGS, {AMX_ENV: "1", EXTRA_BUFTS_ENV: "0"}, False),
    ],
)
def test_the_decision_from_offered_types_cpu_flags_and_environment(offered, flags, env, extra):
    d = decide(offered, flags, env)
    assert d.use_extra_bufts is extra
    assert d.amx_offered is (
        ("AMX" in offered) if offered is not None else True if flags is AMX_FLAGS else False
    )
    assert d.reason and (AMX_ENV in d.reason or EXTRA_BUFTS_ENV in d.reason or "no AMX" in d.reason)


def test_cpu_flags_are_read_from_cpuinfo(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text(
        "processor\t: 0\nflags\t\t: fpu avx2 amx_tile amx_int8\n\nprocessor\t: 1\nflags\t\t: fpu\n"
    )
    assert buffers.cpu_flags(info) == {"fpu", "avx2", "amx_tile", "amx_int8"}
    assert buffers.cpu_flags(tmp_path / "missing") == frozenset()


def test_llama_cpp_offers_what_this_build_has():
    offered = buffers.offered_extra_bufts()
    info = buffers.plan()
    assert offered is not None and info.offered == offered
    from localsidecar.backend import system_info

    assert ("CPU_REPACK" in offered) == ("REPACK = 1" in system_info())
    assert ("AMX" in offered) == ("AMX_INT8 = 1" in system_info())


# --- where the weights went -----------------------------------------------------------------------


def _expected_buffers(model: Model) -> None:
    sizes, plan = model.buffer_sizes, model.buffers
    assert sizes and all(mib > 0 for mib in sizes.values()), sizes
    if not plan.use_extra_bufts or os.environ.get(AMX_ENV) != "1":
        assert "AMX" not in sizes
    if not plan.use_extra_bufts:
        assert set(sizes) <= {"CPU", "CPU_Mapped"}
    return sizes


@pytest.mark.slow
def test_both_models_load_with_the_defaults_and_decode_a_batch_and_one_token(pair_paths, record_property):
    for path in pair_paths:
        m = Model(path)
        try:
            sizes = _expected_buffers(m)
            record_property(f"buffers {path.name}", json.dumps(sizes))
            if (
                m.buffers.use_extra_bufts
                and "CPU_REPACK" in (m.buffers.offered or ())
                and "Q4_0" in path.name
            ):
                assert sizes.get("CPU_REPACK", 0) > 10  # REPACK kept for Q4_0 where llama.cpp offers it
            c = Context(m, 128, n_threads=1)
            try:
                toks = m.tokenize("The river clean-up drew forty volunteers on Saturday morning.")
                c.decode_tokens(toks, 0, (0,), "all")
                batch = np.array(c.logits_rows())
                c.decode_tokens([int(batch[-1].argmax())], len(toks), (0,), "last")
                one = np.array(c.logits(-1))
                assert (
                    batch.shape == (len(toks), m.n_vocab)
                    and np.isfinite(batch).all()
                    and np.isfinite(one).all()
                )
            finally:
                c.close()
        finally:
            m.close()


@pytest.mark.slow
def test_extra_buffer_types_off_on_request(pair_paths, monkeypatch):
    monkeypatch.setenv(EXTRA_BUFTS_ENV, "0")
    m = Model(pair_paths[1])
    try:
        assert m.buffers.use_extra_bufts is False and EXTRA_BUFTS_ENV in m.buffers.reason
        assert set(m.buffer_sizes) <= {"CPU", "CPU_Mapped"} and m.buffer_sizes
    finally:
        m.close()


@pytest.mark.slow
def test_load_llama_loads_with_the_decision(pair_paths, monkeypatch):
    from localsidecar import load_llama

    for env, extra in (({}, buffers.plan().use_extra_bufts), ({EXTRA_BUFTS_ENV: "0"}, False)):
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        llm = load_llama(pair_paths[1], n_ctx=256, verbose=False)
        try:
            assert llm.model_params.use_extra_bufts is extra
            out = llm.create_completion("The river", max_tokens=3, temperature=0.0)
            assert out["usage"]["completion_tokens"] >= 1
        finally:
            llm.close()
    import llama_cpp.llama_cpp as LL

    assert LL.llama_model_default_params().use_extra_bufts is True  # the default is restored afterwards


# --- the probe ------------------------------------------------------------------------------------


@pytest.fixture()
def fresh_probe(tmp_path, monkeypatch):
    """An empty probe cache and no verdicts remembered by this process."""
    monkeypatch.setenv(probe.CACHE_ENV, str(tmp_path / "probe"))
    monkeypatch.delenv(probe.PROBE_ENV, raising=False)
    monkeypatch.setattr(probe, "_checked", {})
    return tmp_path / "probe"


@pytest.mark.slow
def test_a_child_killed_by_sigill_is_one_error_line_with_exit_2(fresh_probe, monkeypatch):
    monkeypatch.setattr(probe, "CHILD_PRELUDE", SIGILL_PRELUDE)
    r = CliRunner().invoke(cli_main, ["run", str(EXAMPLES / "notes.txt"), "--max-tokens", "4"])
    line = one_line_error(r)
    assert line.startswith("Error: llama.cpp crashed on this CPU (SIGILL in a test decode of SmolLM2-135M")
    assert EXTRA_BUFTS_ENV in line or AMX_ENV in line or "CMAKE_ARGS" in line
    assert r.stdout == ""
    assert not any(fresh_probe.glob("*.json"))  # a crash is not cached: the next run probes again


@pytest.mark.slow
def test_a_cached_verdict_skips_the_child(fresh_probe, pair_paths, monkeypatch):
    chosen = buffers.plan()
    first = probe.verdict(pair_paths[1], chosen)
    assert first.ok is True and not first.cached and first.seconds > 0
    assert (
        first.buffers == Model(pair_paths[1], buffers=chosen).buffer_sizes
    )  # the child's weights, the parent's
    monkeypatch.setattr(probe, "_checked", {})
    monkeypatch.setattr(probe, "CHILD_PRELUDE", SIGILL_PRELUDE)  # a child now would die
    again = probe.verdict(pair_paths[1], chosen)
    assert again.ok is True and again.cached and again.key == first.key
    m = Model(pair_paths[1])  # the load consults the same cache: no child, no error
    assert m.probe.cached
    m.close()
    forced = probe.verdict(pair_paths[1], chosen, force=True)  # force ignores the cache
    assert forced.ok is False and forced.signal == "SIGILL"


@pytest.mark.slow
def test_the_key_follows_the_decision_and_the_tensor_types(pair_paths):
    on = buffers.BufferPlan(True, False, ("CPU_REPACK",), "")
    off = buffers.BufferPlan(False, False, ("CPU_REPACK",), "")
    target, draft = (probe._tensor_types(p) for p in pair_paths)
    assert "q4_1" in {t.lower() for t in target} and "q4_0" in {t.lower() for t in draft}
    keys = {probe.probe_key(t, b) for t in (target, draft) for b in (on, off)}
    assert len(keys) == 4


@pytest.mark.slow
def test_the_probe_can_be_turned_off(fresh_probe, pair_paths, monkeypatch):
    monkeypatch.setenv(probe.PROBE_ENV, "0")
    monkeypatch.setattr(probe, "CHILD_PRELUDE", SIGILL_PRELUDE)
    m = Model(pair_paths[1])
    assert m.probe is None
    m.close()


@pytest.mark.slow
def test_doctor_reports_the_decision_and_each_models_verdict(fresh_probe, session_models_dir):
    r = CliRunner().invoke(cli_main, ["doctor", "--json"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["buffers"]["use_extra_bufts"] is buffers.plan().use_extra_bufts
    assert [e["verdict"] for e in report["probe"]] == ["ok", "ok"]
    assert all("AMX" not in e["buffers"] for e in report["probe"]) or os.environ.get(AMX_ENV) == "1"
    r = CliRunner().invoke(cli_main, ["doctor"])
    assert "SmolLM2-135M-Instruct.Q4_0.gguf: ok (cached)" in r.stdout


def test_a_cache_entry_that_is_no_verdict_is_probed_again_never_read_blindly(fresh_probe, pair_paths):
    """Was: wrong value types crashed `doctor` (exit 1), a FIFO blocked the
    open and a link to /dev/zero the read (run hung; one signal did not end
    it). Such an entry is ignored without blocking, probed again, replaced."""
    chosen = buffers.plan()
    good = probe.verdict(pair_paths[1], chosen)  # a real entry to spoil
    entry = fresh_probe / f"{good.key}.json"
    data = json.loads(entry.read_text())
    for spoiled in (
        {**data, "seconds": "abc"},
        {**data, "buffers": [1, 2]},
        {**data, "buffers": {"CPU": "x"}},
        {**data, "ok": "yes"},
        {**data, "seconds": True},
        {**data, "key": "another"},
        [data],
    ):
        entry.write_text(json.dumps(spoiled))
        assert probe._read_cached(good.key) is None, spoiled
    entry.write_text(json.dumps(data))
    assert probe._read_cached(good.key).ok is True  # the real one still reads
    entry.unlink()
    os.mkfifo(entry)  # no writer: a blocking open would wait forever
    assert probe._read_cached(good.key) is None
    entry.unlink()
    entry.symlink_to("/dev/zero")
    assert probe._read_cached(good.key) is None


def test_doctor_and_run_probe_again_past_spoiled_cache_entries(fresh_probe, pair_paths, tmp_path):
    chosen = buffers.plan()
    keys = [probe.probe_key(probe._tensor_types(p), chosen) for p in pair_paths]
    fresh_probe.mkdir(parents=True)
    (fresh_probe / f"{keys[0]}.json").symlink_to("/dev/zero")
    (fresh_probe / f"{keys[1]}.json").write_text(json.dumps({"key": keys[1], "ok": True, "seconds": "abc"}))
    env = {**os.environ, "PYTHONPATH": str(EXAMPLES.parent), "LOCALSIDECAR_THREADS": "1"}
    cmd = [sys.executable, "-m", "localsidecar.cli"]
    doctor = subprocess.run([*cmd, "doctor", "--json"], capture_output=True, text=True, env=env, timeout=600)
    assert doctor.returncode == 0, doctor.stderr
    assert [e["verdict"] for e in json.loads(doctor.stdout)["probe"]] == ["ok", "ok"]
    for key in keys:  # both replaced by a fresh verdict
        entry = fresh_probe / f"{key}.json"
        assert not entry.is_symlink() and json.loads(entry.read_text())["seconds"] > 0
    (fresh_probe / f"{keys[0]}.json").unlink()
    os.mkfifo(fresh_probe / f"{keys[0]}.json")
    run = subprocess.run(
        [*cmd, "run", str(EXAMPLES / "notes.txt"), "--max-tokens", "2", "--mode", "target-only", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,  # a safety net only: without the fix it never ends
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["summary_tokens"] == 2


@pytest.mark.parametrize(
    "offered, flags, env, loaded_with_extra, refused",
    [
        (("AMX", "CPU_REPACK"), AMX_FLAGS, {}, True, True),  # Llama(...) on an AMX build: refused
        (("AMX", "CPU_REPACK"), AMX_FLAGS, {}, False, False),  # load_llama there: extra types off
        (("AMX", "CPU_REPACK"), AMX_FLAGS, {AMX_ENV: "1"}, True, False),  # AMX allowed on purpose
        (None, AMX_FLAGS, {}, True, True),  # the list unknown: the CPU's flags decide
        (("CPU_REPACK",), AMX_FLAGS, {}, True, False),  # AMX CPU, build without AMX
        (("CPU_REPACK",), PLAIN_FLAGS, {}, True, False),  # this kind of host
        (("CPU_REPACK",), PLAIN_FLAGS, {EXTRA_BUFTS_ENV: "0"}, True, False),  # off by choice, no AMX
        (("AMX",), AMX_FLAGS, {EXTRA_BUFTS_ENV: "0"}, True, True),
    ],
)
def test_what_a_target_loaded_by_another_library_gets(offered, flags, env, loaded_with_extra, refused):
    """GGUFDraft's check of the target Llama it drafts for (decision: docs/DESIGN.md,
    Buffer types and AMX): refused only where llama.cpp offers AMX, the
    decision keeps it off, and the target was loaded with llama.cpp's defaults."""
    problem = buffers.loaded_model_problem(loaded_with_extra, decide(offered, flags, env))
    assert (problem is not None) is refused
    if refused:
        assert "\n" not in problem and "localsidecar.load_llama(...) instead of Llama(...)" in problem
