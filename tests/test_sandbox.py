"""The sandbox that reads untrusted files for the API server: each job in a child process, killed over
its CPU or memory budget with the setting named, one job per key at a time, the server untouched."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from ragloom.errors import LimitExceededError, NotFoundError, ParseError, RateLimitedError
from ragloom.ingest.sandbox import JobLimits, Sandbox

LIMITS = JobLimits(cpu_seconds=1.0, memory_mb=300)


def spin(seconds: float) -> int:
    """Burn CPU for ``seconds`` (a parser stuck in a loop)."""
    end, n = time.process_time() + seconds, 0
    while time.process_time() < end:
        n += 1
    return n


def hog(megabytes: int) -> int:
    """Hold ``megabytes`` of touched memory for a moment (a decompression bomb)."""
    block = bytearray(megabytes * 1024 * 1024)
    for i in range(0, len(block), 4096):
        block[i] = 1
    time.sleep(2)
    return len(block)


def add(a: int, b: int) -> int:
    return a + b


def not_found(what: str) -> None:
    raise NotFoundError(f"{what} is missing")


def broken(_: object) -> None:
    raise KeyError("a parser bug")


def crash() -> None:
    os.kill(os.getpid(), signal.SIGSEGV)


def pid() -> int:
    return os.getpid()


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    box = Sandbox(processes=2, per_key=1, wait_seconds=30)
    yield box
    box.close()


def test_a_job_runs_in_a_child_and_its_child_is_reused(sandbox: Sandbox) -> None:
    assert sandbox.run(add, 2, 3, limits=LIMITS) == 5
    first = sandbox.run(pid, limits=LIMITS)
    assert first != os.getpid()
    assert sandbox.run(pid, limits=LIMITS) == first  # warm: no new process per job


def test_a_job_over_its_cpu_budget_is_killed_and_names_the_setting(sandbox: Sandbox) -> None:
    before = sandbox.kills
    # 60 CPU-seconds of work under a budget of 1: the error (not the count spin returns) shows it was
    # stopped; how long that took in wall time depends on the machine's load (the child is niced)
    with pytest.raises(LimitExceededError, match="RAGLOOM_SANDBOX_CPU_SECONDS"):
        sandbox.run(spin, 60.0, limits=LIMITS)
    assert sandbox.kills == before + 1
    assert sandbox.run(add, 1, 1, limits=LIMITS) == 2  # a fresh child takes the next job


def test_a_job_over_its_memory_budget_is_killed_and_names_the_setting(sandbox: Sandbox) -> None:
    with pytest.raises(LimitExceededError, match="RAGLOOM_SANDBOX_MEMORY_MB"):
        sandbox.run(hog, 1200, limits=JobLimits(cpu_seconds=10, memory_mb=200))
    assert sandbox.run(add, 2, 2, limits=LIMITS) == 4


def test_errors_come_back_as_errors_and_a_crash_as_a_parse_error(sandbox: Sandbox) -> None:
    with pytest.raises(NotFoundError, match="page 9 is missing"):
        sandbox.run(not_found, "page 9", limits=LIMITS)
    with pytest.raises(ParseError, match="KeyError"):
        sandbox.run(broken, None, limits=LIMITS)
    with pytest.raises(ParseError, match="died"):
        sandbox.run(crash, limits=LIMITS)
    assert sandbox.run(add, 3, 4, limits=LIMITS) == 7


def test_one_key_runs_one_job_at_a_time_one_more_waits_and_others_are_not_held_up(sandbox: Sandbox) -> None:
    slow = JobLimits(cpu_seconds=5, memory_mb=300)
    running = threading.Thread(target=lambda: sandbox.run(spin, 1.5, limits=slow, key="attacker"))
    running.start()
    time.sleep(0.3)
    waited: list[int] = []
    second = threading.Thread(target=lambda: waited.append(sandbox.run(add, 1, 2, limits=LIMITS, key="attacker")))
    second.start()  # waits for its turn (a form previewing again)
    time.sleep(0.3)
    with pytest.raises(RateLimitedError, match="already running or waiting"):
        sandbox.run(add, 1, 2, limits=LIMITS, key="attacker")  # a third is refused at once
    assert sandbox.run(add, 1, 2, limits=LIMITS, key="neighbour") == 3
    running.join(30)
    second.join(30)
    assert waited == [3]
    assert sandbox.run(add, 1, 2, limits=LIMITS, key="attacker") == 3  # free again once done


def test_every_child_busy_is_a_refusal_after_the_wait() -> None:
    box = Sandbox(processes=1, per_key=4, wait_seconds=0.5)
    try:
        slow = JobLimits(cpu_seconds=5, memory_mb=300)
        running = threading.Thread(target=lambda: box.run(spin, 2.0, limits=slow, key="a"))
        running.start()
        time.sleep(0.3)
        with pytest.raises(RateLimitedError, match="RAGLOOM_SANDBOX_PROCESSES"):
            box.run(add, 1, 2, limits=LIMITS, key="b")
        running.join(30)
    finally:
        box.close()
