"""The skeleton of every command that writes `--out`: `run_resumable`.

    with run_resumable(err, out=out, config=config, overwrite=overwrite) as run:
        todo = run.pending(docs)                       # resume: skip ids already in --out
        run.drive(todo, start_executor, on_result)     # jobs anywhere, results written here
        ...aggregate and print...

Invariants:
- The driver (this process) is the only writer: `on_result` runs here, in
  completion order, and appends complete records (`run.save`); jobs run in an
  Executor (this process, worker processes, Ray actors: localsidecar.scale).
- Models are loaded only if something is left to do (`start_executor` is
  called with the number of pending jobs, never with 0).
- First Ctrl-C/SIGTERM: nothing more is dispatched, the documents in flight
  finish and are written, then Interrupted (exit 130/143) after the line
  "interrupted: N of M documents completed". A second one stops at once:
  workers are killed, only complete records are in --out.
- A worker that dies (SIGKILL, OOM, a lost Ray node) costs only the job it was
  running: that job is sent again; after MAX_ATTEMPTS deaths on the same
  document it is reported failed (one line: id and last error), the run goes
  on, and the command exits FailedDocuments.exit_code at the end. When no
  worker can come back (WorkersLost: a dead Ray cluster), every document
  not done yet is reported failed the same way and the run ends there. A job that
  raises (a document too long for a fixed --ctx, ...) ends the command as in a
  serial run, after the documents in flight on other workers are finished and
  written (nothing more is dispatched). A job whose value is Skipped (a document
  past the models' training context under --ctx auto) is one line, "skipped: ...",
  and the run goes on; the end counts them, and a run that skipped every document
  and did nothing else ends with an error.

The writer, the progress reporter and the interrupt guard are parameters
(defaults: ResultWriter, cli.progress.Progress, graceful_interrupts).
"""

from __future__ import annotations

import importlib.util
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import click
from rich.console import Console

from localsidecar.cli.errors import UserError
from localsidecar.cli.progress import Progress
from localsidecar.io.formatting import shown
from localsidecar.scale.executors import (
    Done,
    Executor,
    InProcessExecutor,
    Job,
    ProcessExecutor,
    Raised,
    WorkersLost,
    WorkerSpec,
    threads_per_worker,
)

MAX_ATTEMPTS = 3  # deaths of a worker on the same document before it is reported failed
WAIT_S = 0.25  # how often the driver looks at the interrupt guard while jobs run
SHOWN_IDS = 10


@dataclass(frozen=True)
class Skipped:
    """A job's value for a document it cannot run: one longer than the models'
    training context under --ctx auto (context_fit.DocumentTooLong, caught by
    jobs.EngineWorker). The driver prints `reason`, counts it and goes on."""

    reason: str


class FailedDocuments(click.ClickException):
    """Some documents failed MAX_ATTEMPTS times; everything else was written."""

    exit_code = 3

    def __init__(self, failed: list[tuple[str, str]], what: str = "documents") -> None:
        ids = ", ".join(i for i, _ in failed[:SHOWN_IDS]) + (", …" if len(failed) > SHOWN_IDS else "")
        super().__init__(
            f"{len(failed)} of the {what} failed ({ids}); the others are saved: "
            "run the same command again to retry the failed ones"
        )


# --- where jobs run ------------------------------------------------------------------------


@dataclass(frozen=True)
class Scale:
    """Where a command's jobs run: --workers, --ray, and what a worker needs to know."""

    workers: int | None = None
    ray: str | None = None
    threads: int | None = None
    gpu_layers: int = 0

    @classmethod
    def from_options(
        cls, workers: int | None, ray: str | None, threads: int | None, gpu_layers: int = 0
    ) -> Scale:
        """Checked before any document or model is loaded."""
        if ray is not None:
            ray = ray.strip()
            if not ray:
                raise UserError("--ray needs an address: auto, local, or a cluster address")
            if importlib.util.find_spec("ray") is None:
                from localsidecar.scale.ray_pool import MISSING

                raise UserError(MISSING)
        return cls(workers, ray, threads, gpu_layers)

    def executor(self, spec: WorkerSpec, jobs: int) -> Executor:
        """The executor for `jobs` pending jobs (never more local workers than jobs)."""
        if self.ray:
            from localsidecar.scale.ray_pool import RayExecutor

            return RayExecutor(
                spec,
                self.ray,
                min(self.workers, jobs) if self.workers else None,
                self.threads,
                gpus=self.gpu_layers != 0,
            )
        n = min(self.workers or 1, jobs)
        if n <= 1:
            return InProcessExecutor(spec)
        return ProcessExecutor(spec, n, threads_per_worker(self.threads, n))


SERIAL = Scale()


def _free_name(out: str | None) -> str:
    from localsidecar.io.results import free_name

    return free_name(out) if out else "another.jsonl"


# --- the driver ----------------------------------------------------------------------------


def check_same_texts(items: Sequence, done_ids, hashes: dict[str, str], out: str | None, key) -> None:
    """One line (UserError) if a document's id is done in --out under another
    text: skipping it would leave a record of the wrong text, redoing it a
    second record for one id. Records without "text_sha256" (older versions)
    are trusted by id."""
    from localsidecar.io.documents import text_sha256

    for item in items:
        doc_id, text = key(item), getattr(item, "text", None)
        if text is None or doc_id not in done_ids or doc_id not in hashes:
            continue
        if hashes[doc_id] != text_sha256(text):
            source = getattr(item, "source", doc_id)
            raise UserError(
                f"{source}: id {doc_id!r} has a record in {out} of another text (its text_sha256 "
                "differs): the document changed or ids shifted; give the documents explicit ids, "
                f"use another --out (e.g. {_free_name(out)}), or --overwrite to start over"
            )


class ResumableRun:
    """State of one command run inside `run_resumable` (see the module docstring)."""

    def __init__(
        self,
        err: Console,
        writer,
        *,
        out: str | None,
        what: str,
        progress_factory: Callable[[Console, int], Any],
        describe: Callable[[Any], dict],
    ) -> None:
        self.err = err
        self.writer = writer
        self.out = out
        self.what = what
        self.progress_factory = progress_factory
        self.describe = describe  # a job's value -> Progress.done's tokens/alpha/seconds/detail
        self.guard = None  # set by run_resumable
        self.total = 0  # jobs this run set out to do
        self.completed = 0  # of them, finished (and saved)
        self.failed: list[tuple[str, str]] = []  # (id, last error)
        self.skipped: list[tuple[str, str]] = []  # (id, why): Skipped values

    # resume

    def records(self) -> list[dict]:
        """This configuration's records already in --out (none without --out)."""
        return self.writer.records() if self.writer else []

    def pending(
        self, items: Sequence, *, done_ids=None, key=lambda item: item.id, verb: str = "skipped"
    ) -> list:
        """`items` not yet in --out (`done_ids`: default, the ids of its records), with one line saying so.
        A document whose id has a record of another text (its "text_sha256") is refused: see
        check_same_texts."""
        if done_ids is None:
            done_ids = self.writer.done_ids if self.writer else ()
        if self.writer:
            check_same_texts(items, done_ids, self.writer.text_hashes, self.out, key)
        todo = [item for item in items if key(item) not in done_ids]
        self.total = len(todo)
        if self.writer and len(todo) < len(items):
            skipped = len(items) - len(todo)
            what = self.what if skipped != 1 else self.what.removesuffix("s")
            self.err.print(f"{verb} {skipped} {what} already in {self.out}; running {len(todo)}")
        return todo

    # results

    def save(self, record: dict) -> None:
        """Append one complete record to --out (nothing without --out)."""
        if self.writer:
            self.writer.write(record)

    def mark_completed(self) -> None:
        """For a command that runs its own loop instead of `drive`."""
        self.completed += 1

    # jobs

    def drive(
        self,
        todo: Sequence,
        start: Callable[[int], Executor],
        on_result: Callable[[Any, Any], None],
        *,
        key=lambda item: item.id,
        payload=lambda item: item,
    ) -> None:
        """Run a job per item of `todo` on `start(len(todo))` and call
        on_result(item, value) here as each finishes."""
        self.total = len(todo)
        if not todo:
            return
        executor = start(len(todo))
        executor.checkpoint = self.guard.check if self.guard is not None else None
        clean = False
        try:
            for note in executor.start():
                self.err.print(f"note: {note}")
            if executor.size > 1:
                self.err.print(f"running on {executor.describe()}")
            self._loop(
                {key(item): item for item in todo},
                [Job(key(i), payload(i)) for i in todo],
                executor,
                on_result,
            )
            clean = True
        finally:
            executor.close(now=not clean)

    def _loop(self, items: dict, jobs: list[Job], executor: Executor, on_result) -> None:
        queue = deque(jobs)
        attempts: Counter[str] = Counter()
        progress = self.progress_factory(self.err, len(jobs))
        # a worker in this process: tokens as written, and the stages of a document
        executor.set_token_hook(
            progress.hook() if hasattr(progress, "hook") else getattr(progress, "tokens", None)
        )
        started: dict[str, float] = {}  # job id -> when it was sent (several run at once: timed here)
        stopping = False
        error: BaseException | None = None  # the first job that raised: raised once the others finished
        try:
            while queue or executor.busy():
                if self.guard is not None and self.guard.requested and not stopping:
                    stopping = True
                    queue.clear()
                    self._say_stopping(executor.busy())
                for note in executor.take_notes():
                    self.err.print(f"note: {note}")
                while queue and executor.idle():
                    job = queue.popleft()
                    executor.submit(job)
                    started[job.id] = time.perf_counter()
                    if hasattr(progress, "start"):
                        progress.start(job.id)
                try:
                    outcomes = executor.wait(WAIT_S)
                except WorkersLost as exc:
                    self._lost(queue, str(exc), progress)
                    break
                for outcome in outcomes:
                    seconds = time.perf_counter() - started[outcome.job.id]
                    if isinstance(outcome, Raised):
                        if error is None:
                            error, stopping = outcome.error, True
                            queue.clear()
                            self._say_failing(outcome.job.id, executor.busy())
                        continue
                    if isinstance(outcome, Done) and isinstance(outcome.value, Skipped):
                        self.skipped.append((outcome.job.id, outcome.value.reason))
                        self.err.print(f"skipped: {outcome.value.reason}")
                        progress.done(outcome.job.id, seconds=seconds, detail="skipped")
                    elif isinstance(outcome, Done):
                        on_result(items[outcome.job.id], outcome.value)
                        self.completed += 1
                        progress.done(outcome.job.id, **{"seconds": seconds, **self.describe(outcome.value)})
                    elif self._crashed(outcome, attempts, queue, stopping):
                        progress.done(outcome.job.id, seconds=seconds, detail="failed")
            if error is not None:
                raise error
            if self.guard is not None:
                self.guard.check()
        finally:
            progress.stop()

    def _crashed(self, outcome, attempts: Counter, queue: deque, stopping: bool) -> bool:
        """Handle a worker's death on a job; True when the job is settled (failed)."""
        job = outcome.job
        attempts[job.id] += 1
        if stopping:
            self.err.print(f"note: {outcome.reason} on {shown(job.id)}; not sent again (stopping)")
            return False
        if attempts[job.id] < MAX_ATTEMPTS:
            self.err.print(
                f"note: {outcome.reason} on {shown(job.id)}; sending it to another worker "
                f"(attempt {attempts[job.id] + 1} of {MAX_ATTEMPTS})"
            )
            queue.appendleft(job)
            return False
        self.failed.append((job.id, outcome.reason))
        self.err.print(f"failed: {shown(job.id)}: {outcome.reason} ({MAX_ATTEMPTS} attempts)")
        return True

    def _lost(self, queue: deque, reason: str, progress) -> None:
        """No worker can run the jobs left (nothing is in flight): each is failed, with one line."""
        while queue:
            job = queue.popleft()
            self.failed.append((job.id, reason))
            self.err.print(f"failed: {shown(job.id)}: {reason}")
            progress.done(job.id, seconds=0.0, detail="failed")

    def _say_failing(self, job_id: str, busy: int) -> None:
        if busy:
            what = self.what if busy > 1 else self.what.rstrip("s")
            self.err.print(f"stopping: {shown(job_id)} failed; finishing the {busy} {what} in progress first")

    def _say_stopping(self, busy: int) -> None:
        if busy > 1:
            self.err.print(
                f"stopping: waiting for the {busy} {self.what} in progress (interrupt again to stop at once)"
            )
        elif busy == 1:
            self.err.print(f"stopping after the current {self.what.rstrip('s')} (interrupt received)")
        else:
            self.err.print("stopping (interrupt received)")


@contextmanager
def run_resumable(
    err: Console,
    *,
    out: str | None = None,
    config: Any = None,
    overwrite: bool = False,
    what: str = "documents",
    writer_factory=None,
    progress_factory=None,
    quiet: bool = False,
    describe: Callable[[Any], dict] | None = None,
    interrupts=None,
) -> Iterator[ResumableRun]:
    """Open --out (resuming), guard against interrupts, yield the run; on an
    interrupt print how much was completed; at the end raise FailedDocuments
    if some documents failed. See the module docstring."""
    from localsidecar.cli.signals import Interrupted, completed_line, graceful_interrupts
    from localsidecar.io.results import ResultWriter

    writer = (writer_factory or ResultWriter)(out, config, overwrite=overwrite) if out else None

    def default_progress(console: Console, total: int) -> Progress:
        return Progress(console, total, quiet=quiet, what=what).__enter__()

    run = ResumableRun(
        err,
        writer,
        out=out,
        what=what,
        progress_factory=progress_factory or default_progress,
        describe=describe or (lambda value: {}),
    )

    def stopped_line() -> str:
        # With --out, the writer's own count: it grows in the same signal-free
        # section as the line, so "N completed" always equals the records saved.
        return completed_line(writer.written if writer else run.completed, run.total, out, what)

    try:
        for note in writer.notes if writer else []:
            err.print(f"note: {note}")
        with (interrupts or graceful_interrupts)() as guard:
            run.guard = guard
            guard.last_line = stopped_line
            yield run
    except Interrupted:
        err.print(stopped_line())
        raise
    finally:
        if writer:
            writer.close()
    if run.skipped:
        _report_skipped(err, run, what)
    if run.failed:
        raise FailedDocuments(run.failed, what)


def skipped_line(n: int, total: int, what: str = "documents") -> str:
    return f"{n} of the {total} {what} skipped: longer than the models' training context"


def _report_skipped(err: Console, run: ResumableRun, what: str) -> None:
    """The count of skipped documents; an error when nothing else was done."""
    line = skipped_line(len(run.skipped), run.total, what)
    if run.completed or run.failed:
        err.print(line)
        return
    raise UserError(f"{line}; nothing was run")
