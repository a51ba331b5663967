"""Default thread count: physical cores among the CPUs this process may use."""

from __future__ import annotations

import os

import numpy as np
import pytest

from localsidecar.backend.hardware import default_threads, physical_cores, usable_cpus


def _topology(root, siblings: dict[int, str]) -> None:
    for cpu, sib in siblings.items():
        d = root / f"cpu{cpu}" / "topology"
        d.mkdir(parents=True)
        (d / "thread_siblings_list").write_text(sib + "\n")


def test_hyperthreads_of_one_core_count_once(tmp_path):
    # 4 cores x 2 threads, Linux numbering: cpu i and i+4 share a core
    _topology(tmp_path, {i: f"{i % 4},{i % 4 + 4}" for i in range(8)})
    assert physical_cores(range(8), tmp_path) == 4
    assert physical_cores([0, 4], tmp_path) == 1  # both threads of core 0
    assert physical_cores([0, 1, 5], tmp_path) == 2  # affinity limited to part of the machine


def test_no_smt_and_unreadable_topology(tmp_path):
    _topology(tmp_path, {0: "0", 1: "1"})
    assert physical_cores([0, 1], tmp_path) == 2
    assert physical_cores([0, 1, 2], tmp_path) is None  # cpu2 has no topology: unknown, not a guess


def test_default_threads_on_this_machine():
    cpus = usable_cpus()
    assert cpus == set(os.sched_getaffinity(0))
    assert default_threads() == (physical_cores(cpus) or len(cpus))
    assert 1 <= default_threads() <= len(cpus)


@pytest.mark.slow
def test_thread_count_changes_between_decodes_and_leaves_logits_unchanged(engine):
    """The tuner changes the thread count between decodes; below 256 cells the
    results do not depend on it (same decode at 1 and 2 threads: identical
    logits). Past 256 cells they do (docs/DESIGN.md, Batch shape changes
    results), so a run is reproducible at a fixed --threads only."""
    from localsidecar.backend import Context
    from localsidecar.backend.hardware import ThreadTuner

    class Alternate(ThreadTuner):
        def record(self, n_tokens, seconds):
            self.current = 3 - self.current
            return self.current

    tokens = engine.target.tokenize("The river clean-up drew forty volunteers on Saturday morning.")
    ctx = Context(engine.target, 256, tuner=Alternate(start=1, max_threads=2))
    try:
        assert ctx.threads == 1
        rows = {}
        for _ in range(2):
            used = ctx.threads
            ctx.clear()
            ctx.decode_tokens(tokens, 0, (0,), "last")
            rows[used] = np.array(ctx.logits(-1))
            assert ctx.threads == 3 - used  # the tuner's answer applies to the next decode
        assert set(rows) == {1, 2} and np.array_equal(rows[1], rows[2])
    finally:
        ctx.close()
