"""The default thread count: one llama.cpp thread per physical core the
process may run on. Hyperthreads of one core share its execution units, so
counting them (os.cpu_count()) oversubscribes llama.cpp's matrix kernels, and
CPUs outside the process's affinity (containers, taskset) are not usable."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Iterable

SYSFS_CPU = Path("/sys/devices/system/cpu")


def usable_cpus() -> set[int] | None:
    """CPU ids this process may run on (Linux), None where unknown."""
    if hasattr(os, "sched_getaffinity"):
        return set(os.sched_getaffinity(0))
    return None


def physical_cores(cpus: Iterable[int], sysfs: Path = SYSFS_CPU) -> int | None:
    """Distinct cores among `cpus` (a core's hyperthreads count once), read
    from Linux sysfs topology; None when the topology cannot be read."""
    cores = set()
    for cpu in cpus:
        try:
            cores.add((sysfs / f"cpu{cpu}" / "topology" / "thread_siblings_list").read_text().strip())
        except OSError:
            return None
    return len(cores) or None


def _macos_physical_cores() -> int | None:
    for key in ("hw.perflevel0.physicalcpu", "hw.physicalcpu"):  # performance cores first
        try:
            out = subprocess.run(["sysctl", "-n", key], capture_output=True, text=True, timeout=5)
            n = int(out.stdout.strip())
        except (OSError, ValueError, subprocess.SubprocessError):
            continue
        if n > 0:
            return n
    return None


def default_threads() -> int:
    cpus = usable_cpus()
    if cpus:
        return physical_cores(cpus) or len(cpus)
    if sys.platform == "darwin":
        return _macos_physical_cores() or os.cpu_count() or 1
    return os.cpu_count() or 1
