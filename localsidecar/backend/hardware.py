"""Thread counts. The default maximum: one llama.cpp thread per physical core
the process may run on. Hyperthreads of one core share its execution units, so
counting them (os.cpu_count()) oversubscribes llama.cpp's matrix kernels, and
CPUs outside the process's affinity (containers, taskset) are not usable.
Under load the count follows the cores actually free (LoadProbe at start,
ThreadTuner from decode timings afterwards). Pure Python: no llama_cpp here."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import deque
from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path

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


# --- threads under load ------------------------------------------------------
#
# llama.cpp's worker threads meet at a barrier after every operation of the
# graph: one thread the OS deschedules (because another process wants its
# core) stalls all the others. So the thread count should follow the cores
# that are actually free, not the cores that exist.

PROC_STAT = Path("/proc/stat")


def busy_cpu_seconds(cpus: Iterable[int] | None = None, stat: Path = PROC_STAT) -> float | None:
    """CPU seconds spent busy (not idle, not waiting for I/O) since boot, summed
    over `cpus` (all when None), from Linux /proc/stat; None where unreadable."""
    try:
        lines = stat.read_text().splitlines()
    except OSError:
        return None
    wanted = None if cpus is None else {f"cpu{c}" for c in cpus}
    ticks = 0
    found = False
    for line in lines:
        name, *fields = line.split()
        if not name.startswith("cpu") or name == "cpu" or (wanted is not None and name not in wanted):
            continue
        values = [int(v) for v in fields[:8]]  # user nice system idle iowait irq softirq steal
        ticks += sum(values) - values[3] - values[4]
        found = True
    return ticks / os.sysconf("SC_CLK_TCK") if found else None


def own_cpu_seconds() -> float:
    """CPU seconds this process has used, all its threads included."""
    t = os.times()
    return t.user + t.system


class LoadProbe:
    """How many CPUs other processes keep busy, measured from its creation on:
    busy CPU time of the usable CPUs minus this process's own, over wall time."""

    def __init__(self, cpus: Iterable[int] | None = None, stat: Path = PROC_STAT):
        self.cpus = sorted(cpus) if cpus is not None else sorted(usable_cpus() or []) or None
        self.stat = stat
        self._t0 = time.monotonic()
        self._busy0 = busy_cpu_seconds(self.cpus, stat)
        self._own0 = own_cpu_seconds()

    def others_busy(self, min_window: float = 0.15) -> float | None:
        """CPUs busy with other processes (0.0 .. number of CPUs), waiting
        until `min_window` seconds have passed since the probe started (the
        counters tick at 100 Hz); None where /proc/stat cannot be read."""
        if self._busy0 is None:
            return None
        wait = min_window - (time.monotonic() - self._t0)
        if wait > 0:
            time.sleep(wait)
        busy = busy_cpu_seconds(self.cpus, self.stat)
        if busy is None:
            return None
        wall = time.monotonic() - self._t0
        others = (busy - self._busy0) - (own_cpu_seconds() - self._own0)
        n_cpus = len(self.cpus) if self.cpus else (os.cpu_count() or 1)
        return min(float(n_cpus), max(0.0, others / wall))


def threads_for_free_cores(max_threads: int, others_busy: float | None, n_cpus: int) -> int:
    """Threads for the cores other processes leave free: `max_threads` (one per
    physical core) scaled by the share of the `n_cpus` logical CPUs not busy,
    rounded to the nearest count, at least 1."""
    if others_busy is None or n_cpus <= 0:
        return max_threads
    free = max_threads * (1.0 - min(others_busy, n_cpus) / n_cpus)
    return max(1, min(max_threads, int(free + 0.5)))


class ThreadTuner:
    """Adapts the thread count of one llama.cpp context from its own decode
    timings (pure Python: the Context applies what it says).

    Between trials it keeps the last `window` decode times of each batch size
    at the current count. Every `interval` decodes it tries a neighbouring
    count (alternately one fewer and one more, within 1..max_threads) for
    `trial` decodes and moves there when those ran, batch size for batch
    size, at least `margin` faster (median against median). A trial that
    loses doubles the interval up to `max_interval`, so a stable machine pays
    for few trials; a move resets it. A clear loss ends the trial early:
    after two decodes when they ran `clear_loss` times slower, after one when
    it ran twice as slow (two threads on a machine whose cores other programs
    hold, where OpenMP's spinning threads can make a decode ten times slower).
    The interval still only doubles, so the count comes back within a few
    hundred decodes when the load ends."""

    def __init__(
        self,
        start: int,
        max_threads: int,
        *,
        trial: int = 4,
        interval: int = 32,
        max_interval: int = 1024,
        window: int = 8,
        margin: float = 0.05,
        clear_loss: float = 1.3,
    ):
        self.max_threads = max(1, int(max_threads))
        self.current = max(1, min(int(start), self.max_threads))
        self.candidate: int | None = None
        self.trial, self.base_interval, self.max_interval = trial, interval, max_interval
        self.interval = interval
        self.window, self.margin, self.clear_loss = window, margin, clear_loss
        self.moves: list[tuple[int, int]] = []  # (from, to), for reports
        self._recent: dict[int, deque] = {}
        self._trial: dict[int, list[float]] = {}
        self._since = 0
        self._trial_n = 0
        self._up = False
        self.held = False  # hold(): no trials, the count stays

    @contextmanager
    def hold(self):
        """No trials inside: timed comparisons (run --compare) whose two sides
        must run at one count. A trial of 2-4 decodes at a slower count, due
        every `interval` decodes, would otherwise land at the same place in
        every pair when a pair lasts about `interval` decodes."""
        held, self.held = self.held, True
        if self.candidate is not None:  # a trial under way is dropped, not judged
            self.candidate, self._since = None, 0
        try:
            yield self
        finally:
            self.held = held

    @property
    def threads(self) -> int:
        """The count the next decode should use."""
        return self.candidate if self.candidate is not None else self.current

    def record(self, n_tokens: int, seconds: float) -> int:
        """Take one decode's batch size and wall time; returns the count for the next decode."""
        if self.candidate is None:
            self._recent.setdefault(n_tokens, deque(maxlen=self.window)).append(seconds)
            self._since += 1
            if self._since >= self.interval and self.max_threads > 1 and not self.held:
                self._start_trial()
        else:
            self._trial.setdefault(n_tokens, []).append(seconds)
            self._trial_n += 1
            ratio = self._ratio()
            clear = ratio is not None and (ratio >= 2.0 or (self._trial_n >= 2 and ratio >= self.clear_loss))
            if self._trial_n >= self.trial or clear:
                self._judge_trial(ratio)
        return self.threads

    def _start_trial(self) -> None:
        self._up = not self._up
        up = self._up if 1 < self.current < self.max_threads else self.current == 1
        self.candidate = self.current + 1 if up else self.current - 1
        self._trial, self._trial_n = {}, 0

    def _ratio(self) -> float | None:
        """Trial median ÷ current median, weighted by trial decodes over the
        batch sizes both measured; None when no batch size compares yet."""
        pairs = [
            (len(ts), _median(ts) / _median(self._recent[n]))
            for n, ts in self._trial.items()
            if self._recent.get(n)
        ]
        return sum(w * r for w, r in pairs) / sum(w for w, _ in pairs) if pairs else None

    def _judge_trial(self, ratio: float | None) -> None:
        if ratio is None:
            if self._trial_n < 3 * self.trial:
                return  # no batch size to compare yet: keep trying a little longer
            ratio = 1.0
        if ratio < 1.0 - self.margin:
            self.moves.append((self.current, self.candidate))
            self.current = self.candidate
            self._recent = {n: deque(ts, maxlen=self.window) for n, ts in self._trial.items()}
            self.interval = self.base_interval
        else:
            self.interval = min(2 * self.interval, self.max_interval)
        self.candidate = None
        self._since = 0


def _median(xs) -> float:
    s = sorted(xs)
    m = len(s) // 2
    return s[m] if len(s) % 2 else 0.5 * (s[m - 1] + s[m])
