"""Real ``ragloom serve`` processes for tests: start one on a data directory, find its children."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.live import free_port


def wait(predicate: Callable[[], object], timeout: float, what: str, poll: float = 0.1) -> object:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(poll)


def descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    out: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@contextmanager
def served(home: Path, workers_: int = 2, **env_overrides: str) -> Iterator[tuple[subprocess.Popen, str]]:
    port = free_port()
    env = {**os.environ, "RAGLOOM_HOME": str(home), "RAGLOOM_PORT": str(port), "RAGLOOM_WORKERS": str(workers_),
           "RAGLOOM_WORKER_HEARTBEAT_SECONDS": "1", **env_overrides}
    log = home.parent / f"serve-{port}.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "ragloom.cli", "serve"], env=env, stdout=out,
                                stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        assert proc.poll() is None, log.read_text()
        try:  # the workers are shown to a caller with a key
            body = httpx.get(url + "/api/v1/health", timeout=2, headers=admin_headers(home)).json()
        except httpx.HTTPError:
            return False
        return "workers" in body and body["workers"]["alive"] == workers_

    try:
        wait(healthy, 90, "the server and its workers", poll=0.2)
        yield proc, url
    finally:
        if proc.poll() is None:
            for pid in descendants(proc.pid):
                os.kill(pid, signal.SIGKILL)
            proc.kill()
        proc.wait(10)




def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def is_worker_process(pid: int) -> bool:
    """A worker process of a pool (spawned by multiprocessing)."""
    return "spawn_main" in cmdline(pid)


def admin_key(home: Path, url: str = "") -> str:
    """The admin API key ``serve`` made at its first start: with its output not a terminal, it is in
    the data directory's first-admin.txt (never in the log)."""
    lines = (home / "first-admin.txt").read_text().splitlines()
    return next(ln.split("=", 1)[1] for ln in lines if ln.startswith("api_key="))


def admin_headers(home: Path) -> dict[str, str]:
    """``Authorization`` with the admin key of a server on ``home``, once it made one (and wrote it whole:
    the file may be read between its creation and its key's line — a CI run's 3.13 suite met that once)."""
    path = home / "first-admin.txt"
    if not path.exists() or "api_key=" not in path.read_text():
        return {}
    return {"Authorization": f"Bearer {admin_key(home)}"}
