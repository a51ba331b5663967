"""The workers as Ray actors (`--ray auto|local|ADDRESS`).

Each actor checks its node first (model files: `WorkerSpec.check_node`), is
told its thread count (--threads, or its node's physical cores shared among
the actors placed there), then builds its worker once and runs one job at a
time, like a worker process. An actor lost with its process or its node
(RayActorError) is a crash of the one job it was running: the driver may send
it again; a new actor takes the lost one's place.

`local` starts a private single-node cluster for this command, bound to the
loopback address, without dashboard or usage reporting, its logs kept out of
the terminal, and stops it at the end.

Ray's behaviour this module works around (Ray 2.60, measured):
- ray.init(address=...) retries an unreachable or silent address for minutes
  inside C++ (no Python signal handler runs), printing warnings on fd 2 that
  RAY_BACKEND_LOG_LEVEL does not silence: a TCP probe comes first, and ray.init
  runs in a thread waited for in slices, with fd 2 held in a file.
- The cluster's error messages ("(raylet) ...") are printed on the driver's
  stdout, among the results.
- After its raylet dies, an actor may run on for ~10 s and still return
  results; then it is lost, and a new actor stays pending forever. With the
  GCS gone, ray.nodes() and ray.kill wait 60 s, then Ray ends the process
  (a private cluster waits a week: LOCAL_GCS_RECONNECT_S).
- ray.init of a private cluster installs a SIGTERM handler (sys.exit(15)) and
  ties the cluster's processes to the thread that started them.
The helpers for these live in ray_workarounds.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from localsidecar.errors import LocalsidecarError
from localsidecar.io.interrupts import Interruption
from localsidecar.scale import ray_start_watch
from localsidecar.scale.executors import (
    Crashed,
    Done,
    Executor,
    Job,
    Outcome,
    Raised,
    WorkersLost,
    WorkerSpec,
    describe_exit,
    portable,
    threads_per_worker,
)
from localsidecar.scale.ray_workarounds import (
    START_ONE,
    bootstrap_address,
    cause,
    handler_exceptions,
    last_ray_line,
    main_thread,
    one_line,
    probe,
    route_cluster_messages,
    signals_kept,
    start_watched,
    stderr_captured,
    unreachable,
)

LOCAL = "local"
AUTO = "auto"
MISSING = "--ray needs Ray, which is not installed: pip install 'localsidecar[ray]'"
LOCAL_OBJECT_STORE_BYTES = 100 * 1024 * 1024  # results are small JSON-like records
# How long the private cluster's driver, raylet and actors wait for a GCS that
# died before Ray ends them (Ray: 60 s): the running actors finish their jobs
# without it; _check_alive reports it lost when an actor must be replaced. An
# environment variable because the raylet reads it there, not in _system_config.
LOCAL_GCS_RECONNECT_S = 7 * 24 * 3600
POLL_S = 0.1  # ray.wait slices: Python signal handlers run between them (two signals
# within one slice reach the handler once)
CONNECT_TIMEOUT_S = 20.0  # ray.init against an address that accepted the TCP connection
VITAL = ("raylet", "gcs_server")  # processes of a one-node cluster without which no actor runs
LIVENESS_S = 1.0  # how often the cluster is looked at while only replacement actors are pending
AUTH_REFUSED = "InvalidAuthToken"  # in Ray's C++ log line when the cluster uses token authentication
AUTH_HINT = (
    "set RAY_AUTH_MODE=token (and RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH when the token is not in "
    "~/.ray/auth_token)"
)


def import_ray(address: str):
    """The ray module; for `local`, set up before its first import so that every
    process of the private cluster binds to the loopback address."""
    if address == LOCAL:
        os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # node address: loopback, not the host's
        os.environ["RAY_gcs_rpc_server_reconnect_timeout_s"] = str(LOCAL_GCS_RECONNECT_S)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
    except ImportError:
        raise LocalsidecarError(MISSING) from None
    return ray


class ActorBody:
    """The worker inside a Ray actor (made remote by RayExecutor)."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.spec = spec
        self.worker = None
        self.checked = False

    def node(self) -> dict[str, Any]:
        """Where the actor runs and whether that node can build the worker."""
        import ray

        from localsidecar.backend.hardware import default_threads

        problem = None
        try:
            self.spec.check_node()
            self.checked = True
        except LocalsidecarError as exc:
            problem = str(exc)
        return {
            "host": socket.gethostname(),
            "node_id": ray.get_runtime_context().get_node_id(),
            "cores": default_threads(),
            "problem": problem,
        }

    def load(self, threads: int) -> list[str]:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if not self.checked:  # a replacement actor: its node was not checked by node()
            self.spec.check_node()
            self.checked = True
        self.worker = self.spec.build(threads)
        return list(self.worker.notes)

    def run(self, payload: Any) -> Any:
        try:
            return self.worker.run(payload)
        except Exception as exc:
            raise portable(exc) from None


@dataclass
class _Actor:
    handle: Any
    host: str = "?"
    threads: int = 1
    loading: Any = None  # ObjectRef of load() while it runs
    job: Job | None = None
    ref: Any = None  # ObjectRef of the running job
    notes: list[str] = field(default_factory=list)


class RayExecutor(Executor):
    def __init__(
        self, spec: WorkerSpec, address: str, workers: int | None, threads: int | None, gpus: bool = False
    ) -> None:
        self.spec = spec
        self.address = address
        self.requested = workers
        self.threads = threads
        self.gpus = gpus
        self.size = workers or 1
        self.ray = None
        self._remote = None
        self._actors: list[_Actor] = []
        self._started_local = False
        self._connected = False
        self._connecting: threading.Thread | None = None  # ray.init still running (abandoned)
        self._next_liveness = 0.0
        self._gcs: str | None = None  # host:port of the cluster's GCS (an address given)
        self._lost = False  # WorkersLost was raised: no actor is left to kill
        self._captured: Callable[[], str] = lambda: ""  # fd 2 held while a private cluster starts
        # Ray's C++ log lines only with --verbose (the job spec's own flag)
        self.verbose = bool(getattr(spec, "verbose", False))

    def describe(self) -> str:
        hosts = sorted({a.host for a in self._actors})
        threads = sorted({a.threads for a in self._actors})
        each = (
            f", {'/'.join(map(str, threads))} thread{'s' if threads != [1] else ''} each" if threads else ""
        )
        where = (
            "a local Ray cluster"
            if self.address == LOCAL
            else f"Ray ({len(hosts)} node{'s' * (len(hosts) != 1)})"
        )
        return f"{self.size} actors on {where}{each}"

    # lifecycle

    def start(self) -> list[str]:
        self.ray = import_ray(self.address)
        if self.address != LOCAL:
            self._connect()
            return self._start_actors()
        # a private cluster: watched until the actors have loaded, Ray's C++
        # lines on fd 2 held back meanwhile (unless verbose)
        with start_watched(VITAL), stderr_captured(not self.verbose) as captured:
            self._captured = captured
            self._connect()
            return self._start_actors()

    def _start_actors(self) -> list[str]:
        if self.checkpoint is not None:
            self.checkpoint()  # a signal held back while the cluster started
        cpus, gpus, nodes = self._cluster()
        self.gpus = self.gpus and gpus > 0
        self.size = self.requested or (int(gpus) if self.gpus and gpus else len(nodes))
        if self.size > cpus:
            raise LocalsidecarError(f"--workers {self.size} is more than the Ray cluster's {int(cpus)} CPUs")
        actors = [self._new_actor(nodes[i] if not self.requested else None) for i in range(self.size)]
        infos = self._get([a.handle.node.remote() for a in actors])
        for actor, info in zip(actors, infos):
            if info["problem"]:
                raise LocalsidecarError(f"node {info['host']}: {info['problem']}")
            actor.host = info["host"]
        per_node: dict[str, int] = {}
        for info in infos:
            per_node[info["node_id"]] = per_node.get(info["node_id"], 0) + 1
        for actor, info in zip(actors, infos):
            actor.threads = threads_per_worker(self.threads, per_node[info["node_id"]], info["cores"])
        notes_lists = self._get([a.handle.load.remote(a.threads) for a in actors])
        self._actors = actors
        return list(dict.fromkeys(n for notes in notes_lists for n in notes))

    def close(self, now: bool = False) -> None:
        ray, self.ray = self.ray, None
        if ray is None or not self._connected:
            return  # nothing to stop; an abandoned ray.init must not be raced by ray.shutdown
        for a in (
            self._actors if not self._lost else []
        ):  # after WorkersLost, ray.kill waits a minute for the GCS
            try:
                ray.kill(a.handle)
            except Exception:
                pass  # already gone
        self._actors = []
        cluster = ray_start_watch.descendants(os.getpid()) if self._started_local else []
        ray.shutdown()
        # what outlived the shutdown: with its GCS killed mid-run, the private
        # cluster's agents ran on after the command had ended
        ray_start_watch.kill_running(cluster)

    # jobs

    def idle(self) -> int:
        return sum(a.loading is None and a.job is None for a in self._actors)

    def busy(self) -> int:
        return sum(a.job is not None for a in self._actors)

    def submit(self, job: Job) -> None:
        actor = next(a for a in self._actors if a.loading is None and a.job is None)
        actor.job, actor.ref = job, actor.handle.run.remote(job.payload)

    def wait(self, timeout: float) -> list[Outcome]:
        refs = {a.ref: a for a in self._actors if a.ref is not None}
        refs.update({a.loading: a for a in self._actors if a.loading is not None})
        if not refs:
            return []
        if not self.busy():
            try:
                self._check_alive()  # only replacements pending: can they ever start?
            except WorkersLost:
                self._lost = True
                raise
        with handler_exceptions():
            ready, _ = self.ray.wait(list(refs), num_returns=1, timeout=min(timeout, POLL_S))
        outcomes: list[Outcome] = []
        for ref in ready:
            actor = refs[ref]
            if ref is actor.loading:
                self._loaded(actor)
            else:
                outcomes.extend(self._finished(actor))
        return outcomes

    # internals

    def _connect(self) -> None:
        ray = self.ray
        quiet = {"log_to_driver": False, "logging_level": "ERROR", "configure_logging": True}
        previous = signal.getsignal(signal.SIGTERM) if main_thread() else None
        try:
            if self.address == LOCAL:
                self._start_local(quiet)
            else:
                self._gcs = bootstrap_address(self.address)
                probe(self.address, self._gcs)
                self._join(lambda: ray.init(address=self.address, **quiet))
        except ConnectionError as exc:
            raise LocalsidecarError(
                f"--ray {self.address}: no running Ray cluster found ({one_line(exc)}); {START_ONE}"
            ) from None
        except (ValueError, RuntimeError) as exc:
            raise LocalsidecarError(f"--ray {self.address}: {one_line(exc)}") from None
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)  # ray.init installs its own SIGTERM handler
        self._connected = True
        route_cluster_messages(self.verbose)

    def _start_local(self, quiet: dict[str, Any]) -> None:
        """ray.init of a private cluster, in this thread: the cluster's
        processes are started from it (Ray ties their lives to the thread that
        started them). Signals meanwhile: _signals_kept. Runs inside start()'s
        watch; a cluster that does not start is one line with Ray's last one
        (held back on fd 2), or the watch's when ray.init would not return."""
        ray = self.ray
        try:
            with signals_kept(ray):
                ray.init(
                    num_cpus=self.requested or 1,
                    include_dashboard=False,
                    object_store_memory=LOCAL_OBJECT_STORE_BYTES,
                    **quiet,
                )
        except Interruption:
            raise
        except Exception as exc:  # noqa: BLE001 - Ray raises bare Exception ("node timed out") too
            said = last_ray_line(self._captured())
            raise LocalsidecarError(
                f"--ray local: the local Ray cluster did not start ({one_line(exc)[:300]})"
                + (f" (Ray: {said})" if said else "")
            ) from None
        self._started_local = True

    def _join(self, connect: Callable[[], Any]) -> None:
        """`connect()` (ray.init against an address) in a thread, waited for in
        slices: signal handlers and `checkpoint` run between them, and it is
        abandoned after CONNECT_TIMEOUT_S (its C++ client retries for minutes).
        Ray's C++ warnings on fd 2 are held back meanwhile, unless verbose: the
        last one explains a timeout; a refused token ends the wait at once."""
        box: dict[str, BaseException] = {}

        def target() -> None:
            try:
                connect()
            except BaseException as exc:  # noqa: BLE001 - re-raised in the driver's thread
                box["exc"] = exc

        thread = threading.Thread(target=target, name="ray-connect", daemon=True)
        self._connecting = thread
        deadline = time.monotonic() + CONNECT_TIMEOUT_S
        with stderr_captured(not self.verbose) as captured:
            thread.start()
            while thread.is_alive() and time.monotonic() < deadline:
                with handler_exceptions():
                    thread.join(POLL_S)
                if self.checkpoint is not None:
                    self.checkpoint()
                if AUTH_REFUSED in captured():
                    raise LocalsidecarError(
                        f"--ray {self.address}: the Ray cluster refused this client's "
                        f"authentication token; {AUTH_HINT}"
                    )
            said = last_ray_line(captured())
        if thread.is_alive():
            raise LocalsidecarError(
                f"no Ray cluster answered at {self.address} within {CONNECT_TIMEOUT_S:.0f} s"
                + (f" (Ray: {said})" if said else "")
                + f"; {START_ONE}"
            )
        self._connecting = None
        if "exc" in box:
            raise box["exc"]

    def _check_alive(self) -> None:
        """WorkersLost when no actor can be placed again: a process of the
        private cluster died (its raylet: the node is gone), or no node of the
        cluster is alive. Ray itself would keep the new actors pending forever."""
        now = time.monotonic()
        if now < self._next_liveness:
            return
        self._next_liveness = now + LIVENESS_S
        if self._started_local:
            try:
                from ray._private import worker as ray_worker

                dead = ray_worker._global_node.dead_processes()
            except (ImportError, AttributeError):  # another Ray: the node check below still holds
                dead = []
            dead = [(kind, proc) for kind, proc in dead if kind in VITAL]
            if dead:
                what = ", ".join(f"{kind} ({describe_exit(proc.returncode)})" for kind, proc in dead)
                raise WorkersLost(f"the local Ray cluster lost its {what}; no actor can start again")
        problem = unreachable(self._gcs) if self._gcs else None
        if problem:  # ray.nodes() would wait a minute, then Ray ends the process
            raise WorkersLost(
                f"the Ray cluster at {self.address} is gone ({problem}); no actor can start again"
            )
        try:
            with handler_exceptions():
                alive = [n for n in self.ray.nodes() if n.get("Alive")]
        except Exception as exc:  # the GCS is gone too
            raise WorkersLost(f"the Ray cluster does not answer ({one_line(exc)[:200]})") from None
        if not alive:
            raise WorkersLost("no node of the Ray cluster is alive; no actor can start again")

    def _cluster(self) -> tuple[float, float, list[str]]:
        nodes = [n for n in self.ray.nodes() if n.get("Alive")]
        res = self.ray.cluster_resources()
        return res.get("CPU", 0.0), res.get("GPU", 0.0), [n["NodeID"] for n in nodes]

    def _new_actor(self, node_id: str | None) -> _Actor:
        if self._remote is None:
            self._remote = self.ray.remote(max_restarts=0, max_task_retries=0)(ActorBody)
        options: dict[str, Any] = {"num_cpus": 1, "num_gpus": 1 if self.gpus else 0}
        if node_id is not None:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node_id, soft=True)
        else:
            options["scheduling_strategy"] = "SPREAD"
        return _Actor(self._remote.options(**options).remote(self.spec))

    def _loaded(self, actor: _Actor) -> None:
        ref, actor.loading = actor.loading, None
        try:
            with handler_exceptions():
                self.ray.get(ref)
        except self.ray.exceptions.RayActorError as exc:
            raise LocalsidecarError(
                f"a Ray actor on {actor.host} died while loading the models ({one_line(exc)})"
            ) from None
        except self.ray.exceptions.RayTaskError as exc:
            raise cause(exc) from None

    def _finished(self, actor: _Actor) -> list[Outcome]:
        job, ref = actor.job, actor.ref
        actor.job = actor.ref = None
        try:
            with handler_exceptions():
                return [Done(job, self.ray.get(ref))]
        except self.ray.exceptions.RayActorError as exc:
            reason = f"Ray actor on {actor.host} lost ({one_line(exc)[:200]})"
            self._replace(actor)
            return [Crashed(job, reason)]
        except self.ray.exceptions.RayTaskError as exc:
            return [Raised(job, cause(exc))]

    def _replace(self, lost: _Actor) -> None:
        """A new actor wherever Ray places it; it joins once loaded (the check of
        its node and its load run in the actor, without blocking the driver)."""
        fresh = self._new_actor(None)
        fresh.threads = self.threads or lost.threads
        fresh.host = lost.host
        fresh.loading = fresh.handle.load.remote(fresh.threads)
        self._actors[self._actors.index(lost)] = fresh

    def _get(self, refs: list) -> list:
        """ray.get of all refs in slices, so Ctrl-C is seen while actors load."""
        pending = list(refs)
        while pending:
            with handler_exceptions():
                _, pending = self.ray.wait(pending, num_returns=len(pending), timeout=POLL_S)
            if self.checkpoint is not None:
                self.checkpoint()
        try:
            with handler_exceptions():
                return self.ray.get(refs)
        except self.ray.exceptions.RayTaskError as exc:
            raise cause(exc) from None
        except self.ray.exceptions.RayActorError as exc:
            raise LocalsidecarError(f"a Ray actor died while starting ({one_line(exc)[:200]})") from None
