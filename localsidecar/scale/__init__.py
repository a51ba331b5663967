"""Where per-document jobs run: in this process, in local worker processes, or
on Ray actors (`executors`, `ray_pool`).

Generic: a picklable WorkerSpec builds one Worker per worker (for
localsidecar: the model pair and its contexts, loaded once) and the worker
runs every job sent to it. Nothing here knows about models or documents; the
commands' job specs live in `localsidecar.cli.jobs` and the driver loop that
writes results in `localsidecar.cli.resumable`. Imports nothing of the
package but its errors and backend.hardware (the default thread count).
"""

from localsidecar.scale.executors import (
    Crashed,
    Done,
    Executor,
    InProcessExecutor,
    Job,
    ProcessExecutor,
    Raised,
    Worker,
    WorkersLost,
    WorkerSpec,
    threads_per_worker,
)

__all__ = [
    "Crashed",
    "Done",
    "Executor",
    "InProcessExecutor",
    "Job",
    "ProcessExecutor",
    "Raised",
    "Worker",
    "WorkerSpec",
    "WorkersLost",
    "threads_per_worker",
]
