"""Default thread count: physical cores among the CPUs this process may use."""

from __future__ import annotations

import os

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
    assert physical_cores([0, 4], tmp_path) == 1      # both threads of core 0
    assert physical_cores([0, 1, 5], tmp_path) == 2   # affinity limited to part of the machine


def test_no_smt_and_unreadable_topology(tmp_path):
    _topology(tmp_path, {0: "0", 1: "1"})
    assert physical_cores([0, 1], tmp_path) == 2
    assert physical_cores([0, 1, 2], tmp_path) is None  # cpu2 has no topology: unknown, not a guess


def test_default_threads_on_this_machine():
    cpus = usable_cpus()
    assert cpus == set(os.sched_getaffinity(0))
    assert default_threads() == (physical_cores(cpus) or len(cpus))
    assert 1 <= default_threads() <= len(cpus)
