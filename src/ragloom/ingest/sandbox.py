"""Work on untrusted files that a server process does itself, in child processes under hard limits.

The API server never parses an uploaded file in its own process: a parser with a super-linear path,
a library that recurses or crashes on a crafted file, or a decompression bomb would otherwise take
the server's cores and memory from every other user. What the server must read itself (a chunking
preview, a PDF's page count at upload) runs through a :class:`Sandbox`:

- a few warm child processes (started with ``spawn`` on first use, niced so that the server's own
  requests win the cores), each running one job at a time;
- each job has a CPU-time and a memory budget (:class:`JobLimits`). The child holds itself to them
  with ``RLIMIT_CPU`` and ``RLIMIT_AS``; the parent watches the child's CPU time, resident memory and
  wall time every :data:`WATCH_SECONDS` and kills it (SIGKILL) when it goes over — a job stuck inside
  one C call is stopped all the same. A killed child is replaced; the caller gets
  :class:`~ragloom.errors.LimitExceededError` naming the setting that raises the limit;
- at most ``per_key`` jobs of one key (a workspace, a user) run at once and one more waits its turn
  (up to ``wait_seconds``); any other is refused at once with
  :class:`~ragloom.errors.RateLimitedError`, so one caller cannot take every child nor the server's
  threads; a job that finds every child busy waits up to ``wait_seconds``, then is refused the same
  way.

Jobs are plain functions importable by name (``module.function``) whose arguments and result pickle.
A :class:`~ragloom.errors.RagloomError` raised in the child reaches the caller as the same class and
message; any other exception becomes a :class:`~ragloom.errors.ParseError` naming it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, TypeVar, cast

from ragloom import errors
from ragloom.errors import LimitExceededError, ParseError, RagloomError, RateLimitedError

log = logging.getLogger(__name__)

T = TypeVar("T")

WATCH_SECONDS = 0.05  # how often the parent looks at a busy child
NICE = 10  # children yield the cores to the server's own threads
_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass(frozen=True, slots=True)
class JobLimits:
    """The budget of one job, and the settings that raise each part (named in the error)."""

    cpu_seconds: float
    memory_mb: int
    cpu_setting: str = "sandbox_cpu_seconds"
    memory_setting: str = "sandbox_memory_mb"

    @property
    def wall_seconds(self) -> float:
        """Wall time a job may take: its CPU budget, plus room for a busy machine."""
        return max(2.0 * self.cpu_seconds, self.cpu_seconds + 30.0)


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (Linux ``/proc``); None when unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _CLK_TCK  # utime, stime (fields 14, 15)
    except (OSError, ValueError, IndexError):
        return None


def _rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE / (1024 * 1024)
    except (OSError, ValueError, IndexError):
        return None


def _limit_error(what: str, setting: str, limit: float | int, found: float | int | None = None) -> LimitExceededError:
    from ragloom.ingest.guard import exceeded

    return exceeded(setting, what, limit, found)


# -- the child --------------------------------------------------------------------------------------

def _child_main(conn: Connection, parent_pid: int) -> None:
    """A child's loop: receive ``(target, args, limits)``, run it, send back the outcome."""
    # No PR_SET_PDEATHSIG: it fires when the *thread* that started the child ends (a server's pool
    # thread may); the child ends when its pipe closes with the parent instead.
    if os.getppid() != parent_pid:
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the server's terminal is the server's
    with contextlib.suppress(OSError):
        os.nice(NICE)
    import resource

    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # SIGXCPU leaves no core file
    while True:
        try:
            target, args, limits = conn.recv()
        except (EOFError, OSError):
            return
        _hold_to(limits)
        try:
            outcome: tuple[str, Any] = ("ok", _resolve(target)(*args))
        except MemoryError:
            outcome = ("limit", "memory")
        except RagloomError as exc:
            outcome = ("error", (type(exc).__name__, exc.message))
        except Exception as exc:  # a bug or a library's own error on a hostile file
            outcome = ("error", ("ParseError", f"the file could not be read: {type(exc).__name__}: {exc}"))
        try:
            conn.send(outcome)
        except Exception as exc:  # an unpicklable result: a bug, said as such
            conn.send(("error", ("ParseError", f"internal error: the result could not be sent back ({exc})")))


def _hold_to(limits: JobLimits) -> None:
    """Soft ``RLIMIT_CPU`` at this job's budget (SIGXCPU ends the child past it) and soft
    ``RLIMIT_AS`` at the current size plus the memory budget, so a sudden huge allocation fails in the
    child instead of being seen a moment later. Only soft limits: the next job may raise them again."""
    import resource

    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = int(used.ru_utime + used.ru_stime + limits.cpu_seconds) + 1
    with contextlib.suppress(ValueError, OSError):
        hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
        resource.setrlimit(resource.RLIMIT_CPU, (cpu if hard == resource.RLIM_INFINITY else min(cpu, hard), hard))
    try:
        with open("/proc/self/statm", "rb") as f:
            size = int(f.read().split()[0]) * _PAGE
    except (OSError, ValueError, IndexError):
        return
    with contextlib.suppress(ValueError, OSError):
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        soft = size + 2 * limits.memory_mb * 1024 * 1024  # virtual size runs ahead of resident memory
        resource.setrlimit(resource.RLIMIT_AS, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))


def _resolve(target: str) -> Callable[..., Any]:
    import importlib

    module, _, name = target.rpartition(".")
    return cast(Callable[..., Any], getattr(importlib.import_module(module), name))


def _name_of(fn: Callable[..., Any]) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


def _rebuild(kind: str, message: str) -> RagloomError:
    cls = getattr(errors, kind, None)
    if isinstance(cls, type) and issubclass(cls, RagloomError) and cls is not RateLimitedError:
        try:
            return cls(message)
        except TypeError:
            pass
    return ParseError(message)


# -- the parent -------------------------------------------------------------------------------------

@dataclass(slots=True)
class _Child:
    process: subprocess.Popen[bytes]
    conn: Connection

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.process.kill()

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()
        self.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)


class Sandbox:
    """Up to ``processes`` warm children running jobs under :class:`JobLimits` (module docstring)."""

    def __init__(self, *, processes: int = 2, per_key: int = 1, wait_seconds: float = 10.0) -> None:
        self.processes = max(1, processes)
        self.per_key = max(1, per_key)
        self.wait_seconds = wait_seconds
        self._slots = threading.BoundedSemaphore(self.processes)
        self._lock = threading.Lock()
        self._idle: list[_Child] = []
        self._busy: set[int] = set()  # pids of children running a job
        self._keys: Counter[str] = Counter()  # jobs of a key running or waiting
        self._running: Counter[str] = Counter()  # jobs of a key running
        self._turns = threading.Condition(self._lock)
        self._closed = False
        self.kills = 0  # children killed over a limit (for /health and the tests)

    def run(self, fn: Callable[..., T], *args: Any, limits: JobLimits, key: str = "") -> T:
        """``fn(*args)`` in a child under ``limits``; at most ``per_key`` at once for ``key``, and one more
        of the key waits for its turn (a form that previews again while the last preview runs)."""
        with self._turns:
            if self._closed:
                raise RuntimeError("the sandbox is closed")
            if key and self._keys[key] > self.per_key:
                raise RateLimitedError(f"{self._keys[key]} file jobs of yours are already running or waiting (at "
                                       f"most {self.per_key} at once); retry when they are done", retry_after=2.0)
            self._keys[key] += 1
            waiting = key and not self._turns.wait_for(lambda: self._running[key] < self.per_key, self.wait_seconds)
            if not waiting:
                self._running[key] += 1
        try:
            if waiting:
                raise RateLimitedError(f"your last file job is still running (at most {self.per_key} at once); "
                                       "retry when it is done", retry_after=2.0)
            if not self._slots.acquire(timeout=self.wait_seconds):
                raise RateLimitedError(f"every file-reading process of the server is busy ({self.processes}, "
                                       "RAGLOOM_SANDBOX_PROCESSES); retry in a few seconds", retry_after=5.0)
            try:
                return cast(T, self._run(_name_of(fn), args, limits))
            finally:
                self._slots.release()
        finally:
            with self._turns:
                self._keys[key] -= 1
                if self._keys[key] <= 0:
                    del self._keys[key]
                if not waiting:
                    self._running[key] -= 1
                    if self._running[key] <= 0:
                        del self._running[key]
                self._turns.notify_all()

    def _run(self, target: str, args: tuple[Any, ...], limits: JobLimits) -> Any:
        child = self._take()
        start_cpu = _cpu_seconds(child.pid) or 0.0
        started = time.monotonic()
        try:
            child.conn.send((target, args, limits))
        except (OSError, ValueError) as exc:
            child.stop()
            raise ParseError(f"the file could not be handed to a reading process: {exc}") from exc
        with self._lock:
            self._busy.add(child.pid)
        try:
            outcome = self._await(child, limits, start_cpu, started)
        finally:
            with self._lock:
                self._busy.discard(child.pid)
        kind, value = outcome
        if kind == "ok":
            self._give_back(child)
            return value
        if kind == "error":
            self._give_back(child)
            raise _rebuild(*value)
        child.stop()  # over a limit, or dead: never reused
        self.kills += 1
        raise value

    def _await(self, child: _Child, limits: JobLimits, start_cpu: float,
               started: float) -> tuple[str, Any]:
        pid = child.pid
        while True:
            try:
                if child.conn.poll(WATCH_SECONDS):
                    kind, value = child.conn.recv()
                    if kind == "limit":
                        return "killed", _limit_error("MiB of memory", limits.memory_setting, limits.memory_mb)
                    return kind, value
            except (EOFError, OSError):
                return "killed", self._death(child, limits)
            cpu = (_cpu_seconds(pid) or start_cpu) - start_cpu
            rss = _rss_mb(pid)
            reason: LimitExceededError | None = None
            if cpu > limits.cpu_seconds:
                reason = _limit_error("CPU-seconds", limits.cpu_setting, limits.cpu_seconds, round(cpu, 1))
            elif rss is not None and rss > limits.memory_mb:
                reason = _limit_error("MiB of memory", limits.memory_setting, limits.memory_mb, int(rss))
            elif time.monotonic() - started > limits.wall_seconds:
                reason = _limit_error("seconds (wall time)", limits.cpu_setting, limits.wall_seconds,
                                      round(time.monotonic() - started))
            elif not child.alive():
                return "killed", self._death(child, limits)
            if reason is not None:
                log.warning("sandbox: child %s stopped: %s", pid, reason.message)
                child.kill()
                return "killed", reason

    def _death(self, child: _Child, limits: JobLimits) -> LimitExceededError | ParseError:
        try:
            code: int | None = child.process.wait(5)
        except subprocess.TimeoutExpired:
            code = None
        if code == -signal.SIGXCPU:
            return _limit_error("CPU-seconds", limits.cpu_setting, limits.cpu_seconds)
        if code == -signal.SIGKILL:  # the kernel's OOM killer, most likely
            return _limit_error("MiB of memory", limits.memory_setting, limits.memory_mb)
        return ParseError(f"the process reading the file died (exit code {code}); the file is likely damaged")

    def _take(self) -> _Child:
        with self._lock:
            while self._idle:
                child = self._idle.pop()
                if child.alive():
                    return child
                child.stop()
        return self._start()

    def _start(self) -> _Child:
        """A fresh child: ``python -m ragloom.ingest.sandbox FD PARENT`` (a new interpreter, not a fork of
        this multi-threaded one, and not ``multiprocessing``'s spawn, which would import the caller's
        ``__main__`` again), talking over a socket pair."""
        ours, theirs = socket.socketpair()
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "ragloom.ingest.sandbox", str(theirs.fileno()), str(os.getpid())],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, close_fds=True)
        finally:
            theirs.close()
        return _Child(process, Connection(ours.detach()))

    def _give_back(self, child: _Child) -> None:
        with self._lock:
            if self._closed:
                child.stop()
            else:
                self._idle.append(child)

    def busy(self) -> int:
        """Children running a job now."""
        with self._lock:
            return len(self._busy)

    def pids(self) -> list[int]:
        with self._lock:
            return [c.pid for c in self._idle] + sorted(self._busy)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for child in idle:
            child.stop()


if __name__ == "__main__":
    _child_main(Connection(int(sys.argv[1])), int(sys.argv[2]))
