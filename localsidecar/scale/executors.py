"""Executors: run jobs on workers, one job per worker at a time.

Contract shared by every executor (the driver in cli/resumable.py relies on it):
- `start()` builds the workers (loads the models) and returns their notes;
  `idle()` workers accept `submit(job)`; `wait(timeout)` returns the outcomes
  that arrived: Done(job, value), Raised(job, exc) when the job raised, or
  Crashed(job, reason) when the worker died while running that job (only
  that job: a worker runs one at a time, so no other document is blamed).
  The executor has then already started a replacement; the driver decides
  whether to send the job again. When no replacement can ever start (a dead
  cluster), `wait()` raises WorkersLost instead, and only while nothing is in
  flight (no finished job is dropped).
- A worker that dies while loading the models (killed, out of memory) is
  started again, up to MAX_LOAD_ATTEMPTS times per worker; after that it is
  given up, and only when no worker is left does loading fail (one line).
  `take_notes()` hands the driver one line per such event.
- An exception raised by `Worker.run` comes back as Raised, with the same
  exception where it pickles: the driver lets the jobs in flight finish and
  are saved, then raises it, so a bad document ends the command as it does
  in a serial run, and no other document is lost with it. The in-process
  executor raises it from `wait()` directly (nothing else is in flight).
- `close(now)` ends every worker: politely after a finished run, at once
  (SIGKILL) when `now` (a second Ctrl-C, an error).

Worker processes ignore SIGINT: Ctrl-C in a terminal reaches the whole process
group, and only the driver decides what an interrupt means (finish the
documents in flight, or stop at once).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import pickle
import resource
import signal
import threading
import traceback
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from localsidecar.errors import ConfigError, LocalsidecarError

CLOSE_TIMEOUT_S = 10.0
MAX_LOAD_ATTEMPTS = 3  # deaths of one worker while loading before it is given up
START_SLICE_S = 0.25  # start() looks at `checkpoint` (the driver's interrupt check) this often


@dataclass(frozen=True)
class Job:
    id: str
    payload: Any


@dataclass(frozen=True)
class Done:
    job: Job
    value: Any


@dataclass(frozen=True)
class Crashed:
    job: Job
    reason: str  # one line: how the worker died


@dataclass(frozen=True)
class Raised:
    job: Job
    error: BaseException  # what Worker.run raised (or a WorkerError naming it)


Outcome = Done | Crashed | Raised


class Worker(Protocol):
    notes: Sequence[str]  # one line each, shown once to the user

    def run(self, payload: Any) -> Any: ...

    def close(self) -> None: ...


class WorkerSpec(Protocol):
    """Picklable recipe of a worker; `build` runs where the worker lives."""

    def check_node(self) -> None:
        """Raise LocalsidecarError if this machine cannot build the worker (model files)."""

    def build(self, threads: int | None) -> Worker: ...


class WorkersLost(Exception):
    """Raised by `wait()` when no worker is left and none can come back (the
    Ray cluster lost its nodes), while no job is in flight: the jobs not done
    yet cannot run in this command. One line: why."""


class WorkerError(Exception):
    """An unexpected exception in a worker that could not travel back as itself."""


def threads_per_worker(threads: int | None, workers: int, cores: int | None = None) -> int:
    """--threads is per worker; by default the physical cores are shared out (at least 1 each)."""
    if threads:
        return threads
    if cores is None:
        from localsidecar.backend.hardware import default_threads

        cores = default_threads()
    return max(1, cores // max(1, workers))


def describe_exit(exitcode: int | None) -> str:
    if exitcode is None:
        return "still running"
    if exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exited with status {exitcode}"


def portable(exc: BaseException) -> BaseException:
    """`exc` if it survives pickling, else a WorkerError naming it and where it was raised."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        frames = traceback.extract_tb(exc.__traceback__)
        where = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
        return WorkerError(f"{type(exc).__name__}{where}: {exc}")


class Executor(ABC):
    """See the module docstring."""

    size: int = 1
    threads: int | None = None
    # Called between slices of start()'s long waits; may raise to end it (the
    # driver's interrupt check: nothing is in flight yet, so nothing is lost).
    checkpoint: Callable[[], None] | None = None

    @abstractmethod
    def start(self) -> list[str]: ...

    @abstractmethod
    def idle(self) -> int: ...

    @abstractmethod
    def busy(self) -> int: ...

    @abstractmethod
    def submit(self, job: Job) -> None: ...

    @abstractmethod
    def wait(self, timeout: float) -> list[Outcome]: ...

    @abstractmethod
    def close(self, now: bool = False) -> None: ...

    def describe(self) -> str:
        return "this process"

    def take_notes(self) -> list[str]:
        """One line per event the user should hear of since the last call (a
        worker that died while loading and was started again)."""
        return []

    def set_token_hook(self, hook: Callable[[int], None] | None) -> None:
        """Where a worker in this process reports the current document's
        tokens as they are written (progress); workers elsewhere do not."""


class InProcessExecutor(Executor):
    """One worker in the driver's own process: today's serial run. `wait` runs
    the submitted job; its exceptions (and a second Ctrl-C) propagate as is."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.spec = spec
        self.worker: Worker | None = None
        self._job: Job | None = None

    def start(self) -> list[str]:
        self.worker = self.spec.build(None)
        if self.checkpoint is not None:
            self.checkpoint()  # a signal while the models loaded: stop before the first job
        return list(self.worker.notes)

    def set_token_hook(self, hook: Callable[[int], None] | None) -> None:
        if self.worker is not None and hasattr(self.worker, "on_tokens"):
            self.worker.on_tokens = hook

    def idle(self) -> int:
        return int(self._job is None and self.worker is not None)

    def busy(self) -> int:
        return int(self._job is not None)

    def submit(self, job: Job) -> None:
        self._job = job

    def wait(self, timeout: float) -> list[Outcome]:
        job, self._job = self._job, None
        if job is None:
            return []
        return [Done(job, self.worker.run(job.payload))]

    def close(self, now: bool = False) -> None:
        if self.worker is not None:
            worker, self.worker = self.worker, None
            worker.close()


# --- local worker processes ----------------------------------------------------------


def _worker_main(spec: WorkerSpec, threads: int | None, conn) -> None:
    """A worker process: build once, then answer one job at a time until told
    to stop (None) or the driver goes away (EOF)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        worker = spec.build(threads)
    except BaseException as exc:
        conn.send(("error", portable(exc)))
        return
    try:
        conn.send(("ready", list(worker.notes)))
        while True:
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                return
            if msg is None:
                return
            kind, payload = msg
            if kind == "stats":
                conn.send(
                    (
                        "stats",
                        {
                            "pid": os.getpid(),
                            "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                        },
                    )
                )
                continue
            try:
                value = worker.run(payload)
            except Exception as exc:
                conn.send(("raised", portable(exc)))
                continue
            conn.send(("done", value))
    except (BrokenPipeError, EOFError):
        return  # the driver is gone
    finally:
        worker.close()


@contextmanager
def sigint_ignored() -> Iterator[None]:
    """Children started inside inherit SIGINT ignored from their first instruction
    (an ignored disposition survives exec, and Python keeps it)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


class _Slot:
    def __init__(self, index: int, process, conn) -> None:
        self.index = index
        self.process = process
        self.conn = conn
        self.ready = False
        self.notes: list[str] = []
        self.job: Job | None = None


class ProcessExecutor(Executor):
    """N local worker processes (multiprocessing, spawn), each building its
    worker once. One process per slot, started again when it dies, so a crash
    is charged to the one job that process was running and only that worker
    reloads its models (concurrent.futures' pool would break as a whole and
    fail every job in flight)."""

    def __init__(self, spec: WorkerSpec, workers: int, threads: int | None) -> None:
        if workers < 1:
            raise ConfigError("workers must be at least 1")
        self.spec = spec
        self.size = workers
        self.threads = threads
        self._mp = multiprocessing.get_context("spawn")
        self._slots: list[_Slot] = []
        self.restarts = 0
        self._load_deaths: dict[int, int] = {}  # slot index -> deaths while loading
        self._notes: list[str] = []

    def describe(self) -> str:
        each = f", {self.threads} thread{'s' if self.threads != 1 else ''} each" if self.threads else ""
        return f"{self.size} worker processes{each}"

    def pids(self) -> list[int]:
        return [s.process.pid for s in self._slots]

    def start(self) -> list[str]:
        self._slots = [self._spawn(i) for i in range(self.size)]
        while not all(s.ready for s in self._slots):
            self._service_ready([s for s in self._slots if not s.ready], START_SLICE_S)
            if self.checkpoint is not None:
                self.checkpoint()
        notes = self.take_notes()
        for slot in self._slots:
            notes.extend(n for n in slot.notes if n not in notes)
        return notes

    def take_notes(self) -> list[str]:
        notes, self._notes = self._notes, []
        return notes

    def idle(self) -> int:
        return sum(s.ready and s.job is None for s in self._slots)

    def busy(self) -> int:
        return sum(s.job is not None for s in self._slots)

    def submit(self, job: Job) -> None:
        slot = next(s for s in self._slots if s.ready and s.job is None)
        slot.job = job
        try:
            slot.conn.send(("job", job.payload))
        except (BrokenPipeError, OSError):
            pass  # the process died: wait() sees its sentinel and reports the job

    def wait(self, timeout: float) -> list[Outcome]:
        return self._service_ready(self._slots, timeout)

    def _service_ready(self, slots: list[_Slot], timeout: float) -> list[Outcome]:
        by_handle = {}
        for s in slots:
            by_handle[s.conn] = s
            by_handle[s.process.sentinel] = s
        ready = multiprocessing.connection.wait(list(by_handle), timeout)
        outcomes: list[Outcome] = []
        for slot in dict.fromkeys(by_handle[h] for h in ready):
            outcomes.extend(self._service(slot))
        return outcomes

    def worker_stats(self) -> list[dict]:
        """pid and peak RSS of every idle worker (for benchmarks)."""
        out = []
        for s in self._slots:
            if s.ready and s.job is None:
                s.conn.send(("stats", None))
                kind, stats = s.conn.recv()
                out.append(stats)
        return out

    def close(self, now: bool = False) -> None:
        for s in self._slots:
            if not now and s.process.is_alive():
                try:
                    s.conn.send(None)
                except OSError:
                    pass
            else:
                s.process.kill()
        for s in self._slots:
            s.process.join(CLOSE_TIMEOUT_S)
            if s.process.is_alive():
                s.process.kill()
                s.process.join()
            s.conn.close()
        self._slots = []

    # internals

    def _spawn(self, index: int) -> _Slot:
        parent, child = self._mp.Pipe()
        process = self._mp.Process(
            target=_worker_main,
            args=(self.spec, self.threads, child),
            daemon=True,
            name=f"localsidecar-worker-{index}",
        )
        with sigint_ignored():
            process.start()
        child.close()  # the child's end lives in the child only: its death reads as EOF here
        return _Slot(index, process, parent)

    def _service(self, slot: _Slot) -> list[Outcome]:
        """Read what `slot` sent, or notice that its process died."""
        try:
            if slot.conn.poll():
                return self._message(slot, slot.conn.recv())
        except (EOFError, OSError):
            slot.process.join(CLOSE_TIMEOUT_S)  # the pipe closed: the process is gone or going
        if slot.process.is_alive():
            return []
        slot.process.join()
        return self._died(slot)

    def _message(self, slot: _Slot, msg) -> list[Outcome]:
        kind, value = msg
        if kind == "ready":
            slot.ready, slot.notes = True, value
            return []
        if kind == "done":
            job, slot.job = slot.job, None
            return [Done(job, value)]
        if kind == "raised" and slot.job is not None:
            job, slot.job = slot.job, None
            return [Raised(job, value)]
        slot.job = None
        raise value  # "error": building the worker failed (a bad model file: every worker would)

    def _died(self, slot: _Slot) -> list[Outcome]:
        reason = f"worker process {slot.process.pid} {describe_exit(slot.process.exitcode)}"
        slot.conn.close()
        if not slot.ready:
            return self._died_loading(slot, reason)
        job = slot.job
        self._slots[self._slots.index(slot)] = self._spawn(slot.index)
        self.restarts += 1
        return [Crashed(job, reason)] if job is not None else []

    def _died_loading(self, slot: _Slot, reason: str) -> list[Outcome]:
        """Start the worker again, or give it up after MAX_LOAD_ATTEMPTS deaths;
        loading fails only when no worker is left."""
        deaths = self._load_deaths[slot.index] = self._load_deaths.get(slot.index, 0) + 1
        if deaths < MAX_LOAD_ATTEMPTS:
            self._notes.append(
                f"{reason} while loading the models; starting another (attempt {deaths + 1} of {MAX_LOAD_ATTEMPTS})"
            )
            self._slots[self._slots.index(slot)] = self._spawn(slot.index)
            self.restarts += 1
            return []
        self._slots.remove(slot)
        self.size = len(self._slots)
        if not self._slots:
            raise LocalsidecarError(f"{reason} while loading the models ({MAX_LOAD_ATTEMPTS} attempts)")
        self._notes.append(
            f"{reason} while loading the models ({MAX_LOAD_ATTEMPTS} attempts); going on with "
            f"{self.size} worker{'s' * (self.size != 1)}"
        )
        return []
