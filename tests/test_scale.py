"""Many documents on many workers. Real `localsidecar` processes on the
embedded pair with --threads 1: --workers 2 and --ray local give the serial
run's records; a worker killed with SIGKILL costs nothing but time; an
interrupted --workers run resumes; --ray auto without a cluster is one line.
The driver's fault handling is also checked with real worker processes whose
job kills itself (no model needed)."""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from localsidecar.errors import LocalsidecarError
from localsidecar.scale.executors import ProcessExecutor
from localsidecar.scale.ray_start_watch import descendants  # the watch's own walk of /proc
from tests.helpers import wait_for_lines

REPO = Path(__file__).resolve().parents[1]
TOPICS = [
    "bakery opens a second shop",
    "river flooded the fields",
    "school roof gets solar panels",
    "library extends its hours",
]
# a fixed --draft-max: `auto` chooses draft lengths from timings measured in the run
RUN = ["run", "--mode", "rebased", "--max-tokens", "8", "--draft-max", "2", "--json"]
ACCEPTANCE = [
    "acceptance",
    "--max-tokens",
    "6",
    "--conditions",
    "baseline,masked,rebased",
    "--resamples",
    "1000",
    "--json",
]
# what must not depend on where a document ran (timings may)
RUN_KEYS = (
    "id",
    "config",
    "mode",
    "summary",
    "summary_ids",
    "prompt_ids",
    "hashtags",
    "hashtags_raw",
    "alpha",
    "acceptance_rate",
    "drafted",
    "accepted",
    "rounds",
    "target",
    "draft",
)
TIMEOUT = 600
needs_ray = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None, reason="Ray is not installed (test extra)"
)
PLACES = {"workers": ["--workers", "2"], "ray": ["--ray", "local", "--workers", "2"]}


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    docs = tmp_path_factory.mktemp("scale-docs")
    for i, topic in enumerate(TOPICS, start=1):
        (docs / f"d{i}.txt").write_text(
            f"News {i}: the {topic}. Residents say the change was overdue "
            f"and the council will review it next month.\n"
        )
    return docs


def cli(args, env, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "localsidecar", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=kw.pop("timeout", TIMEOUT),
        **kw,
    )


def start(args, env) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "localsidecar", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def records(out: Path) -> dict[str, dict]:
    """Every line complete and one JSON object; each id exactly once."""
    data = out.read_bytes()
    assert data.endswith(b"\n"), data[-200:]
    recs = [json.loads(line) for line in data.decode("utf-8").splitlines()]
    ids = [r["id"] for r in recs]
    assert len(ids) == len(set(ids)), ids
    return {r["id"]: r for r in recs}


def without_settings(recs: dict[str, dict]) -> dict[str, dict]:
    """Records without the configuration the first line of each run carries
    (which line that is depends on which document finished first)."""
    from localsidecar.io.results import SETTINGS_KEY

    return {i: {k: v for k, v in r.items() if k != SETTINGS_KEY} for i, r in recs.items()}


def run_view(recs: dict[str, dict]) -> dict[str, dict]:
    return {i: {k: r[k] for k in RUN_KEYS if k in r} for i, r in recs.items()}


def worker_pids(driver: int) -> list[int]:
    """The driver's multiprocessing workers (not its resource tracker)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == driver and b"spawn_main" in cmd:
            pids.append(int(entry))
    return pids


def alive(pid: int) -> bool:
    """Running (a zombie waiting for a parent that never reaps it does not count)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture(scope="module")
def serial(folder, env, tmp_path_factory) -> dict[str, tuple[dict, dict]]:
    """The serial reference: (records by id, --json output) for run and acceptance."""
    tmp = tmp_path_factory.mktemp("serial")
    out = {}
    for name, args in (("run", RUN), ("acceptance", ACCEPTANCE)):
        extra = ["--summaries", tmp / f"{name}-sums.jsonl"] if name == "acceptance" else []
        r = cli([args[0], folder, *args[1:], *extra, "--out", tmp / f"{name}.jsonl"], env)
        assert r.returncode == 0, r.stderr
        assert "running on" not in r.stderr  # --workers 1: the driver's own process
        lines = [json.loads(line) for line in r.stdout.splitlines()]
        out[name] = (records(tmp / f"{name}.jsonl"), lines if name == "run" else lines[0])
    return out


def test_ray_auto_without_a_cluster_is_one_line_exit_2(folder, env, tmp_path):
    # RAY_TMPDIR: no record of a cluster started by `ray start` elsewhere on this machine
    r = cli(["run", folder / "d1.txt", "--ray", "auto"], {**env, "RAY_TMPDIR": str(tmp_path)})
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: --ray auto: no running Ray cluster found"), (
        r.stderr
    )
    assert "ray start --head" in lines[0] and r.stdout == ""


def test_missing_ray_names_the_extra_before_loading_anything(folder, env, tmp_path):
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "ray.py").write_text("raise ImportError('No module named ray')\n")
    r = cli(["acceptance", folder, "--ray", "local"], {**env, "PYTHONPATH": f"{shim}{os.pathsep}{REPO}"})
    assert r.returncode == 2
    assert (
        r.stderr.strip() == "Error: --ray needs Ray, which is not installed: pip install 'localsidecar[ray]'"
    )


@pytest.mark.parametrize("place", [pytest.param("workers"), pytest.param("ray", marks=needs_ray)])
def test_run_records_equal_the_serial_run(place, folder, env, serial, tmp_path):
    out = tmp_path / "run.jsonl"
    r = cli([RUN[0], folder, *RUN[1:], *PLACES[place], "--out", out], env)
    assert r.returncode == 0, r.stderr
    assert "running on 2 " in r.stderr and ", 1 thread each" in r.stderr
    want, want_lines = serial["run"]
    got = records(out)
    assert run_view(got) == run_view(want)
    # stdout: the same records (without the file's "config"), in completion order
    printed = {x["id"]: x for x in map(json.loads, r.stdout.splitlines())}
    assert printed.keys() == want.keys()
    assert run_view(printed) == run_view(
        {i: {k: v for k, v in x.items() if k != "config"} for i, x in want.items()}
    )


@pytest.mark.parametrize("place", [pytest.param("workers"), pytest.param("ray", marks=needs_ray)])
def test_acceptance_rows_and_aggregate_equal_the_serial_run(place, folder, env, serial, tmp_path):
    out, sums, tokens = tmp_path / "acc.jsonl", tmp_path / "sums.jsonl", tmp_path / "tokens.jsonl"
    r = cli(
        [
            ACCEPTANCE[0],
            folder,
            *ACCEPTANCE[1:],
            *PLACES[place],
            "--summaries",
            sums,
            "--out",
            out,
            "--save-tokens",
            tokens,
        ],
        env,
    )
    assert r.returncode == 0, r.stderr
    want, want_json = serial["acceptance"]
    assert without_settings(records(out)) == without_settings(want)  # α_t of every condition, bit for bit
    assert json.loads(r.stdout) == want_json  # token-weighted α, bootstrap CIs, summaries generated
    # the driver alone wrote the side files: one complete line per document
    assert sorted(json.loads(x)["id"] for x in sums.read_text().splitlines()) == sorted(want)
    assert sorted(json.loads(x)["id"] for x in tokens.read_text().splitlines()) == sorted(want)


def test_a_worker_killed_while_loading_or_mid_run_costs_only_time(folder, env, serial, tmp_path):
    """One worker killed while it loads (was: exit 2, 0 records, the other
    stopped too), then both while they run documents."""
    out = tmp_path / "run.jsonl"
    p = start([RUN[0], folder, *RUN[1:], "--workers", "2", "--out", out], env)
    while not (loading := worker_pids(p.pid)) and p.poll() is None:  # the event: a worker exists
        time.sleep(0.02)
    os.kill(loading[0], signal.SIGKILL)  # it has not even imported llama.cpp yet
    wait_for_lines(out, 1, p, TIMEOUT, 0.02)
    victims = worker_pids(p.pid)
    assert len(victims) == 2
    for pid in victims:  # both: at least one is in the middle of a document
        os.kill(pid, signal.SIGKILL)
    _, err = p.communicate(timeout=TIMEOUT)
    assert p.returncode == 0, err
    assert (
        f"note: worker process {loading[0]} killed by SIGKILL while loading the models; starting another"
        in err
    )
    assert "killed by SIGKILL on d" in err and "sending it to another worker (attempt 2 of 3)" in err
    assert "failed" not in err and "Traceback" not in err
    assert run_view(records(out)) == run_view(serial["run"][0])  # every document exactly once, as serial


def test_interrupted_workers_run_resumes_with_workers(folder, env, serial, tmp_path):
    # the four reference documents and eight more: the interrupt lands with some left to run
    docs = tmp_path / "docs"
    docs.mkdir()
    for f in folder.iterdir():
        (docs / f.name).write_bytes(f.read_bytes())
    for i in range(len(TOPICS) + 1, len(TOPICS) + 9):
        (docs / f"d{i}.txt").write_text(f"News {i}: the market moved to the square. Traders welcomed it.\n")
    n = len(TOPICS) + 8
    out = tmp_path / "run.jsonl"
    args = [RUN[0], docs, *RUN[1:], "--workers", "2", "--out", out]
    p = start(args, env)
    while len(workers := worker_pids(p.pid)) < 2 and p.poll() is None:
        time.sleep(0.02)
    wait_for_lines(out, 1, p, TIMEOUT, 0.02)
    p.send_signal(signal.SIGINT)  # finish the documents in flight, write them, stop
    _, err = p.communicate(timeout=TIMEOUT)
    assert p.returncode == 130, err
    first = records(out)  # valid JSONL, complete records only
    k = len(first)
    assert 1 <= k < n
    assert f"interrupted: {k} of {n} documents completed, saved in {out}" in err
    assert "Traceback" not in err
    assert workers and not any(alive(pid) for pid in workers)  # no orphan worker

    r = cli(args, env)
    assert r.returncode == 0, r.stderr
    assert f"skipped {k} documents already in {out}; running {n - k}" in r.stderr
    final = records(out)
    assert {i: final[i] for i in first} == first  # the first run's lines untouched
    assert sorted(final) == sorted(f"d{i}" for i in range(1, n + 1))
    reference = serial["run"][0]
    assert run_view({i: final[i] for i in reference}) == run_view(reference)


def test_a_document_too_long_for_the_context_keeps_the_one_in_flight(env, tmp_path):
    """Was: with --workers 2 the other worker's document was discarded with
    the run (a serial run saves it). Now it is finished and saved first."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a1.txt").write_text("News: the bakery opens a second shop. Residents welcomed it.\n")
    (docs / "b2.txt").write_text("The council met again. " * 120)
    (docs / "c3.txt").write_text("News: the river flooded the fields. Farmers counted the losses.\n")
    out = tmp_path / "run.jsonl"
    p = cli([RUN[0], docs, *RUN[1:], "--ctx", "256", "--out", out, "--workers", "2"], env)
    assert p.returncode == 2, p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: document 'b2': prompt of ") and "tokens" in last, p.stderr
    saved = list(records(out))  # as a serial run: a1 saved, then the error at b2 (c3 only if sent before)
    assert saved[0] == "a1" and "b2" not in saved


# --- the driver's fault handling, with real worker processes and no model --------------


class SelfKillingSpec:
    """Worker spec whose job SIGKILLs its own process on "boom"; "raise"
    raises a LocalsidecarError; anything else comes back upper-cased."""

    def check_node(self) -> None:
        pass

    def build(self, threads):
        return SelfKillingWorker()


class SelfKillingWorker:
    notes = ("loaded",)

    def run(self, payload):
        if payload == "boom":
            os.kill(os.getpid(), signal.SIGKILL)
        if payload == "raise":
            raise LocalsidecarError("document 'raise' is too long")
        time.sleep(0.2)  # long enough for the other worker to be busy
        return payload.upper()

    def close(self) -> None:
        pass


class _NoProgress:
    def done(self, item=None, **details) -> None:
        pass

    def stop(self) -> None:
        pass


def drive(ids: list[str], tmp_path: Path, got: list) -> str:
    """Drive `ids` on 2 worker processes; on_result appends (id, value) to `got`; returns stderr."""
    from localsidecar.cli.resumable import run_resumable

    with open(tmp_path / "err.txt", "w") as f:
        err = Console(file=f, width=300)
        try:
            with run_resumable(err, progress_factory=lambda console, total: _NoProgress()) as run:
                run.drive(
                    ids,
                    lambda n: ProcessExecutor(SelfKillingSpec(), 2, 1),
                    lambda i, v: got.append((i, v)),
                    key=str,
                    payload=str,
                )
        finally:
            f.flush()
    return (tmp_path / "err.txt").read_text()


def test_a_document_that_kills_its_worker_three_times_fails_alone(tmp_path):
    from localsidecar.cli.resumable import FailedDocuments

    got: list = []
    with pytest.raises(FailedDocuments) as exc:
        drive(["a", "boom", "b", "c", "d"], tmp_path, got)
    assert exc.value.exit_code == 3 and "1 of the documents failed (boom)" in exc.value.format_message()
    assert sorted(got) == [(x, x.upper()) for x in "abcd"]  # every other document delivered exactly once
    err = (tmp_path / "err.txt").read_text()
    assert err.count("killed by SIGKILL on boom; sending it to another worker") == 2
    assert err.count("failed: boom: worker process") == 1 and "(3 attempts)" in err
    for innocent in "abcd":  # documents in flight on the other worker are never blamed
        assert f" on {innocent};" not in err and f"failed: {innocent}:" not in err


def test_a_job_error_ends_the_run_as_in_a_serial_run(tmp_path):
    """The document in flight on the other worker is finished and delivered
    first (was: killed with the run, its work lost); nothing more is sent."""
    got: list = []
    with pytest.raises(LocalsidecarError, match="document 'raise' is too long"):
        drive(["a", "raise", "b"], tmp_path, got)
    # "a" ran beside "raise" and is never lost; whether "b" was sent before the
    # error came back depends on which worker the scheduler ran first
    assert got[0] == ("a", "A") and ("raise", "RAISE") not in got


class DiesOnceWhileLoading(SelfKillingSpec):
    """The first worker to load SIGKILLs itself (a marker file tells the
    workers apart); the others, and its replacement, load."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def build(self, threads):
        try:
            fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return SelfKillingWorker()
        os.close(fd)
        os.kill(os.getpid(), signal.SIGKILL)


def test_a_worker_killed_while_loading_is_started_again(tmp_path):
    """Was: exit 2 and 0 records, the other worker stopped too."""
    from localsidecar.cli.resumable import run_resumable

    got: list = []
    with open(tmp_path / "err.txt", "w") as f:
        err = Console(file=f, width=300)
        with run_resumable(err, progress_factory=lambda console, total: _NoProgress()) as run:
            run.drive(
                list("abcd"),
                lambda n: ProcessExecutor(DiesOnceWhileLoading(tmp_path / "marker"), 2, 1),
                lambda i, v: got.append((i, v)),
                key=str,
                payload=str,
            )
    assert sorted(got) == [(x, x.upper()) for x in "abcd"]
    err = (tmp_path / "err.txt").read_text()
    assert "killed by SIGKILL while loading the models; starting another (attempt 2 of 3)" in err, err


def test_threads_are_per_worker_and_share_the_cores_by_default():
    from localsidecar.scale.executors import threads_per_worker

    assert threads_per_worker(None, 2, cores=8) == 4
    assert threads_per_worker(None, 3, cores=8) == 2
    assert threads_per_worker(None, 4, cores=2) == 1  # at least one each
    assert threads_per_worker(3, 4, cores=2) == 3  # --threads is per worker, as given


# --- issue 18: an unreachable cluster, a dead Ray node ------------------------------------


@needs_ray
def test_ray_unreachable_address_is_one_line_within_seconds(folder, env):
    t0 = time.monotonic()
    r = cli(["run", folder / "d1.txt", "--max-tokens", "16", "--ray", "127.0.0.1:1"], env, timeout=60)
    elapsed = time.monotonic() - t0
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "Error: no Ray cluster at 127.0.0.1:1 (connection refused"
    ), r.stderr
    assert r.stdout == "" and elapsed < 20, elapsed  # ray.init alone retries this address for minutes


@needs_ray
def test_ctrl_c_while_connecting_to_a_silent_address_ends_the_command(folder, env):
    # a TCP port that accepts and never speaks: ray.init would wait on it for minutes
    with socket.create_server(("0.0.0.0", 0)) as silent:
        p = start(
            ["run", folder / "d1.txt", "--max-tokens", "16", "--ray", f"127.0.0.1:{silent.getsockname()[1]}"],
            env,
        )
        silent.settimeout(TIMEOUT)
        held = [silent.accept()[0] for _ in range(2)]  # the probe's connection, then ray.init's: it waits
        assert p.poll() is None, p.stderr.read()
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=TIMEOUT)
        for conn in held:
            conn.close()
    # the interrupt ended it, not the connection's own limit (exit 2, "no Ray cluster answered ...")
    assert p.returncode == 130, err
    assert err.splitlines() == ["interrupted: 0 of 1 documents completed", "Error: interrupted by SIGINT"], (
        err
    )


def raylet_of(driver: int) -> int:
    """The raylet of the private cluster `--ray local` started (a descendant of the command)."""
    for pid in descendants(driver):
        try:
            exe = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        if os.path.basename(exe) == b"raylet":
            return pid
    raise AssertionError(f"no raylet under {driver}")


def actors_of(driver: int) -> list[int]:
    """The actor processes of the private cluster `--ray local` started."""
    found = []
    for pid in descendants(driver):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if cmd.startswith(b"ray::ActorBody"):
            found.append(pid)
    return found


@needs_ray
def test_ray_local_whose_raylet_dies_reports_the_rest_failed_exit_3(env, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    n = 12
    for i in range(1, n + 1):
        (docs / f"d{i:02}.txt").write_text(
            f"News {i}: the council voted to extend the library's hours on weekends. "
            "Residents said the change was overdue.\n"
        )
    out = tmp_path / "s.jsonl"
    p = start(
        ["run", docs, "--max-tokens", "16", "--json", "--ray", "local", "--workers", "2", "--out", out], env
    )
    wait_for_lines(out, 1, p, TIMEOUT, 0.02)
    actors = actors_of(p.pid)
    assert len(actors) == 2, actors
    os.kill(raylet_of(p.pid), signal.SIGKILL)
    # Without its raylet an actor may still finish every document (for ~10 s);
    # killing the actors too makes the driver need replacements, which can never start.
    for pid in actors:
        os.kill(pid, signal.SIGKILL)
    stdout, err = p.communicate(timeout=TIMEOUT)  # before the fix: no end
    assert p.returncode == 3, err
    done = records(out)  # complete, valid lines, each id once
    assert all(r["summary_tokens"] > 0 and r["summary"] for r in done.values())
    failed = [line.split(": ", 2)[1] for line in err.splitlines() if line.startswith("failed: ")]
    assert sorted(failed) == sorted(set(f"d{i:02}" for i in range(1, n + 1)) - set(done)) and failed, err
    assert err.count("the local Ray cluster lost its raylet (killed by SIGKILL)") == len(failed)
    assert f"Error: {len(failed)} of the documents failed (" in err and "Traceback" not in err
    # stdout holds the records only: the cluster's "(raylet) ..." messages are not printed there
    assert [json.loads(line)["id"] for line in stdout.splitlines()] == list(done)
    assert "(raylet)" not in err and not any(
        line.startswith("[20") for line in err.splitlines()
    )  # nor on stderr


def process_named(root: int, name: bytes) -> int | None:
    """A descendant of `root` whose executable is called `name` (raylet, gcs_server)."""
    for pid in descendants(root):
        try:
            exe = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        if os.path.basename(exe) == name:
            return pid
    return None


def start_ray_local_until(name: bytes, folder: Path, env, tmp_path) -> tuple[subprocess.Popen, int]:
    """`run --ray local` started and watched until the private cluster's `name`
    process exists: the cluster is starting (ray.init runs)."""
    p = start(
        [
            "run",
            folder,
            "--max-tokens",
            "16",
            "--ray",
            "local",
            "--workers",
            "2",
            "--out",
            tmp_path / "o.jsonl",
        ],
        env,
    )
    while (pid := process_named(p.pid, name)) is None:
        assert p.poll() is None, p.stderr.read()
        time.sleep(0.01)
    return p, pid


@needs_ray
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_the_local_ray_cluster_starts_stops_the_command(sig, folder, env, tmp_path):
    """Was: SIGINT ignored there (exit 0 after every document, no line);
    SIGTERM exit 15 with nothing on stderr (Ray's own handler)."""
    p, _ = start_ray_local_until(b"gcs_server", folder, env, tmp_path)
    p.send_signal(sig)
    stdout, err = p.communicate(timeout=TIMEOUT)
    assert p.returncode == 128 + sig, err
    assert err.splitlines() == [
        f"interrupted: 0 of {len(TOPICS)} documents completed, saved in {tmp_path / 'o.jsonl'}",
        f"Error: interrupted by {signal.Signals(sig).name}",
    ], err
    assert (tmp_path / "o.jsonl").read_bytes() == b"" and stdout == ""


def gcs_port_written(p: subprocess.Popen) -> bool:
    """The private cluster's GCS has written its port file (ray.init goes on
    to start the raylet). Ray's default temporary folder; the session's name
    ends with the driver's pid."""
    return bool(glob.glob(f"/tmp/ray/session_*_{p.pid}/gcs_server_port_*"))


def driver_registering(p: subprocess.Popen) -> bool:
    """The driver's C++ core worker has started (its log exists): it is
    registering with the raylet, holding the interpreter lock."""
    return bool(glob.glob(f"/tmp/ray/session_*_{p.pid}/logs/python-core-driver-*"))


def actors_loading(p: subprocess.Popen) -> bool:
    """ray.init has returned and an actor runs load() (Ray names the process by its method)."""
    for pid in descendants(p.pid):
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"ray::ActorBody.load"):
                return True
        except OSError:
            continue
    return False


GCS_DEATHS = {
    "gcs port file": gcs_port_written,
    "raylet": None,  # the raylet process exists
    "driver registering": driver_registering,
    "actors loading": actors_loading,
}


@needs_ray
@pytest.mark.parametrize("seen", list(GCS_DEATHS))
def test_a_local_ray_cluster_whose_gcs_dies_while_starting_is_one_line(seen, folder, env, tmp_path):
    """Was: after the wait, Ray's own log lines on stderr before the Error
    line (or an internal error, exit 1, when its raylet died); killed once
    its port file was written: exit 1 after 70 s and no line (Ray's C++
    client ended the process while ray.init waited); killed while the driver
    registered or the actors loaded: exit 1 after 61 s, Ray's raw line before
    or instead of one, the cluster's agents and actors left running."""
    p, _ = start_ray_local_until(b"gcs_server" if seen != "raylet" else b"raylet", folder, env, tmp_path)
    ready = GCS_DEATHS[seen]
    while ready is not None and not ready(p):
        assert p.poll() is None, p.stderr.read()
        time.sleep(0.005)
    cluster = descendants(p.pid)
    os.kill(process_named(p.pid, b"gcs_server"), signal.SIGKILL)
    killed = time.monotonic()
    stdout, err = p.communicate(timeout=TIMEOUT)
    took = time.monotonic() - killed
    # Ray holds the interpreter lock while the driver registers: the helper
    # process writes the line and Ray ends the program (its exit status, 1)
    # (or exit 2, when the registration was over before the kill landed)
    assert p.returncode in ({1, 2} if seen == "driver registering" else {2}), err
    (line,) = err.splitlines()
    assert line.startswith("Error: --ray local: the local Ray cluster did not start ("), err
    if seen != "raylet":  # the start's watch (Ray's own message, if any, comes 30-60 s later)
        assert line == "Error: --ray local: the local Ray cluster did not start (its gcs_server died)"
        assert took < 20, took  # was 61-81 s
    assert stdout == "" and (tmp_path / "o.jsonl").read_bytes() == b""
    deadline = time.monotonic() + 10
    while (left := [pid for pid in cluster if alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, left  # no agent or actor of the cluster outlives the command


@needs_ray
def test_a_local_ray_cluster_whose_gcs_dies_mid_run_leaves_no_process_behind(folder, env, tmp_path):
    """The actors run on without their GCS and finish; was: the cluster's
    DashboardAgent and RuntimeEnvAgent left running after the command ended;
    and, when the jobs left took longer than Ray's GCS reconnect timeout (60 s;
    2 s here, so that they do), Ray ended the command with exit 1 (once in CI)."""
    out = tmp_path / "o.jsonl"
    env = {**env, "RAY_gcs_rpc_server_reconnect_timeout_s": "2"}
    p = start([RUN[0], folder, *RUN[1:], "--ray", "local", "--workers", "2", "--out", out], env)
    wait_for_lines(out, 1, p, TIMEOUT, 0.02)
    cluster = descendants(p.pid)
    os.kill(process_named(p.pid, b"gcs_server"), signal.SIGKILL)
    _, err = p.communicate(timeout=TIMEOUT)
    assert p.returncode == 0, err
    assert sorted(records(out)) == [f"d{i}" for i in range(1, len(TOPICS) + 1)]
    deadline = time.monotonic() + 10
    while (left := [pid for pid in cluster if alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, [Path(f"/proc/{pid}/cmdline").read_bytes()[:40] for pid in left]
