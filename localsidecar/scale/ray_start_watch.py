"""The watch over a private Ray cluster while `--ray local` starts it (from
ray.init until the actors have loaded the models), in two parts that share
these functions:

- a thread of the program, which sees a vital process (gcs_server, raylet)
  die within WATCH_S and ends the program: one line on the real stderr, the
  cluster's processes killed, exit 2;
- a helper process (this file run as a script, standard library only), for
  the moments the thread cannot run: Ray's C++ client holds the interpreter
  lock while it registers the driver (measured: the lock held for 61 s after
  the GCS died, then exit 1 and no line). When the program has not ended
  GRACE_S after the death, the helper writes the line and kills the
  cluster's processes; that ends Ray's wait at once, and Ray ends the
  program itself (its own exit status, 1: the one exit code the program
  cannot choose).

One byte in a pipe both share is the right to write the line: whoever reads
it writes it, so the line is written once. No document has run during the
start, so nothing of --out is lost by either ending.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

WATCH_S = 0.2  # how often the cluster's vital processes are looked at
GRACE_S = 1.0  # the thread's time to act before the helper does
EXIT_WAIT_S = 5.0  # after the helper's kill, the program's time to end before it is killed too


def children_named(parent: int, names: tuple[str, ...]) -> dict[int, tuple[str, bool]]:
    """{pid: (name, whether it has exited: a zombie)} of `parent`'s children
    called one of `names`, read from /proc ({} without it)."""
    found: dict[int, tuple[str, bool]] = {}
    for pid, ppid, name, state in _processes():
        if ppid == parent and name in names:
            found[pid] = (name, state == "Z")
    return found


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, ppid, _, _ in _processes():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _processes() -> list[tuple[int, int, str, str]]:
    """(pid, ppid, name, state) of every process in /proc."""
    out = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode("utf-8", "replace")
        except OSError:
            continue
        name, rest = stat[stat.find("(") + 1 : stat.rfind(")")], stat[stat.rfind(")") + 2 :].split()
        if len(rest) > 1 and rest[1].isdigit():
            out.append((int(entry), int(rest[1]), name, rest[0]))
    return out


class Deaths:
    """The vital children of `parent` seen so far, and which have died."""

    def __init__(self, parent: int, vital: tuple[str, ...]) -> None:
        self.parent, self.vital = parent, vital
        self.seen: dict[int, str] = {}

    def dead(self) -> list[str]:
        children = children_named(self.parent, self.vital)
        gone = {pid for pid, (_, exited) in children.items() if exited} | (self.seen.keys() - children.keys())
        self.seen.update((pid, name) for pid, (name, _) in children.items())
        return sorted({self.seen[pid] for pid in gone})


def line(dead: list[str]) -> bytes:
    return f"Error: --ray local: the local Ray cluster did not start (its {', '.join(dead)} died)\n".encode()


def claim(token: int) -> bool:
    """Take the one byte (the right to write the line); False if taken."""
    try:
        return os.read(token, 1) == b"x"
    except BlockingIOError:
        return False


def kill_cluster(driver: int, spare: int | None = None) -> None:
    """SIGKILL every process below the driver (the cluster's), but `spare`."""
    for pid in descendants(driver):
        if pid != spare:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def kill_running(pids: list[int]) -> None:
    """SIGKILL those of `pids` still running (not zombies)."""
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    continue
            os.kill(pid, signal.SIGKILL)
        except (OSError, IndexError):
            pass


def _driver_alive(driver: int) -> bool:
    return os.getppid() == driver


def main(argv: list[str]) -> int:
    """argv: driver pid, the real stderr's fd, the token's fd, the vital names
    (comma-separated). Ends when its stdin ends (the start is over, or the
    driver is gone)."""
    driver, stderr_fd, token = int(argv[0]), int(argv[1]), int(argv[2])
    deaths = Deaths(driver, tuple(argv[3].split(",")))
    dead: list[str] = []
    since = 0.0
    while _driver_alive(driver):
        ready, _, _ = select.select([0], [], [], WATCH_S)
        if ready and not os.read(0, 64):
            return 0
        if not dead:
            dead = deaths.dead()
            since = time.monotonic()
        elif time.monotonic() - since >= GRACE_S:
            if claim(token):
                os.write(stderr_fd, line(dead))
            kill_cluster(driver, spare=os.getpid())
            deadline = time.monotonic() + EXIT_WAIT_S
            while _driver_alive(driver) and time.monotonic() < deadline:
                time.sleep(0.05)
            if _driver_alive(driver):
                os.kill(driver, signal.SIGKILL)
            return 0
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is the program's to handle
    sys.exit(main(sys.argv[1:]))
