"""What the Ray executor (ray_pool) does around Ray's own behaviour (Ray 2.60,
measured; ray_pool's docstring lists it): a TCP probe before ray.init, fd 2
held while Ray's C++ client writes there, the cluster's messages kept off
stdout, signals kept while a private cluster starts, the cluster's processes
watched while it starts, a handler's exception that Ray's C code wrapped,
and one-line messages of Ray's errors."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from localsidecar.errors import LocalsidecarError
from localsidecar.scale import ray_start_watch

PROBE_TIMEOUT_S = 3.0  # TCP connect to the cluster's address before ray.init
START_ONE = "start one with `ray start --head`, or use --ray local"


def bootstrap_address(address: str) -> str:
    """host:port that ray.init will connect to for `address` (auto: the
    cluster `ray start` recorded, or RAY_ADDRESS; loopback: this node's IP)."""
    if "://" in address:
        return address.split("://", 1)[1].rstrip("/")
    from ray._private import services

    return services.canonicalize_bootstrap_address_or_die(address)


def probe(address: str, target: str) -> None:
    """A TCP connection to the cluster's address, or one line within
    PROBE_TIMEOUT_S: ray.init itself retries an unreachable address for minutes."""
    host, sep, port = target.rpartition(":")
    if not sep or not host.strip("[]") or not port.isdigit() or not 0 < int(port) < 65536:
        raise LocalsidecarError(f"--ray {address}: not an address (want auto, local or HOST:PORT)")
    problem = unreachable(target)
    if problem:
        at = "" if target == address else f" at {target}"
        raise LocalsidecarError(f"no Ray cluster at {address} ({problem}{at}); {START_ONE}")


def unreachable(target: str) -> str | None:
    """Why nothing accepts a TCP connection at host:port, or None."""
    host, _, port = target.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_TIMEOUT_S).close()
    except TimeoutError:
        return f"no answer within {PROBE_TIMEOUT_S:.0f} s"
    except socket.gaierror:
        return "unknown host"
    except OSError as exc:
        return (exc.strerror or str(exc)).lower()
    return None


def route_cluster_messages(verbose: bool) -> None:
    """The cluster's error messages ("(raylet) Raylet is terminated ...", tens
    of lines) reach the driver by a thread that prints them on stdout, where
    the results go: dropped, or on stderr with --verbose. The thread looks the
    printer up in its module at each message, so replacing it there is enough."""
    try:
        from ray._private import worker as ray_worker
    except ImportError:
        return
    printer = getattr(ray_worker, "print_to_stdstream", None)
    if printer is None or getattr(printer, "localsidecar", False):
        return

    def print_to_stdstream(data, ignore_prefix: bool) -> None:
        if verbose:
            printer({**data, "is_err": True}, ignore_prefix)

    print_to_stdstream.localsidecar = True
    ray_worker.print_to_stdstream = print_to_stdstream


@contextmanager
def signals_kept(ray) -> Iterator[None]:
    """While a private cluster starts: SIGINT blocked in this thread, which
    the cluster's processes inherit (as Ray's own start-up gives them), so a
    terminal's Ctrl-C to the process group does not kill them; a SIGINT meant
    for this program waits, pending, and is handled when the start returns
    (two merge into one). Ray's own SIGTERM handler (sys.exit(15), no line)
    is not installed over the program's: a SIGTERM is handled as at any
    other moment. Ignoring SIGINT instead lost it (docs/DESIGN.md, Signals
    while a Ray cluster starts)."""
    utils = getattr(getattr(ray, "_private", None), "utils", None)
    setter = getattr(utils, "set_sigterm_handler", None)
    if setter is not None:
        utils.set_sigterm_handler = lambda handler: None
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if main_thread() else None
    try:
        yield
    finally:
        if setter is not None:
            utils.set_sigterm_handler = setter
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


@contextmanager
def start_watched(vital: tuple[str, ...]) -> Iterator[None]:
    """While the block starts a private cluster (from ray.init until the
    actors have loaded): its `vital` processes (children of this one) are
    watched by a thread and by a helper process (ray_start_watch). When one
    dies, Ray would wait for it: ray.init, ray.nodes() and an actor's start
    retry the GCS for 60 s, then Ray ends this process itself, exit 1, its
    lines on fd 2 (measured: gcs_server killed 0.5 or 3 s into the start,
    exit 1 after 70-81 s, stderr empty; killed while the driver registered,
    61 s). So the watch ends the process first: one line on the real stderr,
    the cluster's processes killed, exit 2 (exit 1 when the helper had to act:
    Ray held the interpreter lock). No document has run yet, so nothing of
    --out is lost (its records are written whole, and none is pending)."""
    real_stderr = os.dup(2)
    token, give = os.pipe()
    os.write(give, b"x")
    os.close(give)
    os.set_blocking(token, False)
    me = os.getpid()
    done = threading.Event()
    helper: subprocess.Popen | None = None

    def watch() -> None:
        deaths = ray_start_watch.Deaths(me, vital)
        while not done.wait(ray_start_watch.WATCH_S):
            dead = deaths.dead()
            if dead and not done.is_set():
                if ray_start_watch.claim(token):
                    os.write(real_stderr, ray_start_watch.line(dead))
                ray_start_watch.kill_cluster(me)
                os._exit(2)

    thread = threading.Thread(target=watch, name="ray-start-watch", daemon=True)
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # as signals_kept: never delivered here
    try:
        thread.start()
        helper = subprocess.Popen(
            [
                sys.executable,
                "-I",
                ray_start_watch.__file__,
                str(me),
                str(real_stderr),
                str(token),
                ",".join(vital),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(real_stderr, token),
        )
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
    try:
        yield
    finally:
        done.set()
        thread.join()
        if helper is not None:
            helper.stdin.close()  # the helper's end: it exits at once
            helper.wait()
        os.close(real_stderr)
        os.close(token)


@contextmanager
def stderr_captured(capture: bool) -> Iterator[Callable[[], str]]:
    """fd 2 into a temporary file while the block runs (Ray's C++ client logs
    there, not through Python); yields a reader of what it holds so far."""
    if not capture:
        yield lambda: ""
        return
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield lambda: os.pread(
                held.fileno(), 1 << 16, max(0, os.fstat(held.fileno()).st_size - (1 << 16))
            ).decode("utf-8", "replace")
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def last_ray_line(text: str) -> str:
    """The message of Ray's last C++ log line ("[time W pid tid] file.cc:210: message")."""
    lines = [line for line in text.splitlines() if line.startswith("[")]
    if not lines:
        return ""
    return lines[-1].split("] ", 1)[-1].split(": ", 1)[-1].strip()[:200]


@contextmanager
def handler_exceptions():
    """An exception raised by a Python signal handler (a second Ctrl-C) while
    Ray's C code runs comes out as SystemError("... returned a result with an
    exception set") caused by it: raise the handler's own exception."""
    try:
        yield
    except SystemError as exc:
        if exc.__cause__ is not None and "with an exception set" in str(exc):
            raise exc.__cause__ from None
        raise


def cause(exc) -> BaseException:
    """The worker's own exception inside a RayTaskError."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, Exception) else LocalsidecarError(one_line(exc))


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()
