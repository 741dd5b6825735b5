"""Workers under supervision: fair claiming, dead and hung workers, limits, health, clean shutdown.

The pool tests run real worker processes (spawned, as ``ragloom serve`` does) and
kill them with real signals; the shutdown tests run ``ragloom serve`` itself.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from ragloom.context import Principal
from ragloom.db import tasks, workers
from ragloom.db.models import Document, Task
from ragloom.schemas.builds import BuildRequest
from ragloom.schemas.datasets import KBCreate
from ragloom.service import knowledgebases
from ragloom.service.accounts import identity
from ragloom.service.documents import catalog
from ragloom.supervisor import WorkerPool
from ragloom.worker import ORPHAN_GRACE_SECONDS
from tests.ingest.docgen import make_pdf, paragraph
from tests.processes import admin_key, alive, descendants, is_worker_process, served, wait


def second_tenant(ctx) -> Principal:  # type: ignore[no-untyped-def]
    with ctx.db.session() as s:
        tenant, user = identity.create_tenant(s, name="other", owner_email="other@example.com")
        return Principal(tenant.id, user.id, "owner")


def upload(ctx, principal: Principal, files: dict[str, bytes], kb: str = "kb", **kb_options) -> list[str]:  # type: ignore[no-untyped-def]
    with ctx.db.session() as s:
        if not any(k.name == kb for k in knowledgebases.list_visible(s, principal=principal)):
            knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(name=kb, **kb_options))
    with ctx.db.session() as s:
        docs = catalog.add_documents(ctx, s, principal=principal, kb_id=kb,
                                       uploads=[catalog.Upload(filename=n, data=d) for n, d in files.items()])
        return [d.id for d in docs]


def long_text(n_paragraphs: int, seed: int = 3) -> bytes:
    rng = random.Random(seed)
    return "\n\n".join(paragraph(rng, 5) for _ in range(n_paragraphs)).encode()


def claim(ctx, wid: str = "w") -> Task | None:  # type: ignore[no-untyped-def]
    with ctx.db.session() as s:
        return tasks.claim(s, worker_id=wid)


# -- fairness -------------------------------------------------------------------------------------


def test_a_tenant_with_many_tasks_does_not_starve_another(ctx, principal) -> None:
    mine = upload(ctx, principal, {f"a{i}.txt": f"note {i}".encode() for i in range(5)})
    other = second_tenant(ctx)
    (theirs,) = upload(ctx, other, {"b.txt": b"their one-line note"})
    first, second, third = claim(ctx), claim(ctx), claim(ctx)
    assert first.document_id in mine  # nothing runs yet: the longest waiting tenant first
    assert second.document_id == theirs  # the other tenant has nothing running: it goes next
    assert third.document_id in mine and third.document_id != first.document_id


def test_a_huge_document_shares_the_workers_with_small_ones(ctx, principal, tmp_path: Path) -> None:
    make_pdf(tmp_path / "big.pdf", [[f"Page {n} of the big manual."] for n in range(1, 31)])
    (big,) = upload(ctx, principal, {"big.pdf": (tmp_path / "big.pdf").read_bytes()},
                    parser_config={"task_page_size": 10})
    (small,) = upload(ctx, principal, {"small.txt": b"a small note"})
    with ctx.db.session() as s:
        assert len(s.scalars(select(Task).where(Task.document_id == big)).all()) == 3
    first, second, third = claim(ctx), claim(ctx), claim(ctx)
    assert (first.document_id, first.from_page) == (big, 1)
    assert second.document_id == small  # not the big document's next page range
    assert (third.document_id, third.from_page) == (big, 11)


# -- health (the lost workers' tasks: test_queue.py) ------------------------------------------------


def test_health_is_503_without_a_live_worker(ctx, principal, admin) -> None:
    from fastapi.testclient import TestClient

    from ragloom.api.app import create_app

    upload(ctx, principal, {"a.txt": b"waiting"})
    with TestClient(create_app(context=ctx), headers={"Authorization": f"Bearer {admin.new_key.key}"}) as client:
        res = client.get("/api/v1/health")
        assert res.status_code == 503
        body = res.json()
        assert body["status"] == "unavailable" and body["workers"]["alive"] == 0
        assert body["queue"]["queued"] == 1 and body["queue"]["oldest_queued_seconds"] >= 0
        with ctx.db.session() as s:
            workers.register(s, worker_id="h:1:0", host="h", pid=1, supervisor=None)
        res = client.get("/api/v1/health")
        assert res.status_code == 200 and res.json()["workers"]["alive"] == 1


# -- real worker processes ------------------------------------------------------------------------


@contextmanager
def pool_of(ctx, settings, count: int = 1, **changes) -> Iterator[WorkerPool]:  # type: ignore[no-untyped-def]
    pool = WorkerPool(settings.model_copy(update={"worker_heartbeat_seconds": 1.0, **changes}), count,
                      ctx=ctx).start()
    try:
        yield pool
    finally:
        pool.stop(timeout=20)


def running_worker(ctx, doc_id: str, pool: WorkerPool | None = None) -> tuple[str, int] | None:  # type: ignore[no-untyped-def]
    """The running task of ``doc_id`` and its worker's pid; with ``pool``, only once the pool sees it too
    (a worker stopped between its claim and telling the pool is invisible to the pool's watch)."""
    with ctx.db.session() as s:
        task = s.scalar(select(Task).where(Task.document_id == doc_id, Task.status == "running"))
        if task is None or not task.claimed_by:
            return None
        if pool is not None and not any(slot.signals is not None and slot.signals.running_now() == task.id
                                        for slot in pool.slots):
            return None
        return task.id, int(task.claimed_by.split(":")[1])


def doc_state(ctx, doc_id: str) -> Document:  # type: ignore[no-untyped-def]
    with ctx.db.session() as s:
        return s.get(Document, doc_id)


pytestmark_slow = pytest.mark.slow


@pytestmark_slow
def test_a_killed_worker_is_replaced_and_its_task_finished(ctx, principal, settings) -> None:
    (doc_id,) = upload(ctx, principal, {"long.txt": long_text(60)}, parser_config={"chunk_token_num": 64})
    with pool_of(ctx, settings) as pool:
        task_id, pid = wait(lambda: running_worker(ctx, doc_id), 60, "the task to start")  # type: ignore[misc]
        os.kill(pid, signal.SIGKILL)
        wait(lambda: pool.pids() and pool.pids()[0] != pid, 30, "a new worker")
        assert pool.status().restarts == 1 and "SIGKILL" in pool.status().last_exits[0]
        wait(lambda: doc_state(ctx, doc_id).status not in ("queued", "running"), 300, "the document")
    doc = doc_state(ctx, doc_id)
    assert doc.status == "done", doc.message
    with ctx.db.session() as s:
        task = s.get(Task, task_id)
        assert task.attempts == 2 and task.claimed_by.split(":")[1] != str(pid)


@pytestmark_slow
def test_cancel_stops_a_running_task_between_batches(ctx, principal, settings) -> None:
    (doc_id,) = upload(ctx, principal, {"long.txt": long_text(300)}, parser_config={"chunk_token_num": 64})
    with pool_of(ctx, settings) as pool:
        wait(lambda: "embedded" in doc_state(ctx, doc_id).message, 120, "embedding to start")
        with ctx.db.session() as s:
            catalog.cancel(s, principal=principal, kb_id="kb", doc_id=doc_id)
        with ctx.db.session() as s:
            (task_id,) = s.scalars(select(Task.id).where(Task.document_id == doc_id))
        wait(lambda: claim_state(ctx, task_id) == "cancelled", 30, "the worker to stop the task")
        (note,) = upload(ctx, principal, {"note.txt": b"The next document is not kept waiting."})
        wait(lambda: doc_state(ctx, note).status == "done", 60, "the next document")
        assert pool.status().restarts == 0  # stopped by the worker itself, not killed
    doc = doc_state(ctx, doc_id)
    assert doc.status == "cancelled" and doc.active_version_id is None


def claim_state(ctx, task_id: str) -> str:  # type: ignore[no-untyped-def]
    with ctx.db.session() as s:
        return s.get(Task, task_id).status


@pytestmark_slow
def test_a_file_that_kills_its_worker_fails_after_max_retries(ctx, principal, settings) -> None:
    (doc_id,) = upload(ctx, principal, {"long.txt": long_text(60)}, parser_config={"chunk_token_num": 64})
    killed: list[int] = []
    with pool_of(ctx, settings, task_max_retries=2) as pool:
        while len(killed) < 2:
            _, pid = wait(lambda: running_worker(ctx, doc_id), 60, "the task to run")  # type: ignore[misc]
            if pid not in killed:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        wait(lambda: doc_state(ctx, doc_id).status == "failed", 30, "the task to fail")
        wait(lambda: len(pool.pids()) == 1 and pool.pids()[0] not in killed, 30, "a fresh worker")
    doc = doc_state(ctx, doc_id)
    assert "killed by SIGKILL" in doc.message and "tried 2 times" in doc.message


def stop_outside_a_write(ctx, pid: int) -> None:  # type: ignore[no-untyped-def]
    """SIGSTOP a worker the way a task stuck in a long computation is stuck: not in the middle of a
    database write (a SQLite write lock held by a stopped process stalls every other writer; on a loaded
    machine the stop may land inside a progress report or a heartbeat). Stopped, then resumed for a moment
    and stopped again while its write lock is held."""
    import sqlite3

    path = ctx.db.engine.url.database
    for _ in range(200):
        os.kill(pid, signal.SIGSTOP)
        if not path:  # not SQLite: its writes do not lock the database
            return
        con = sqlite3.connect(path, timeout=0.5)
        try:
            con.execute("BEGIN IMMEDIATE")
            con.rollback()
            return
        except sqlite3.OperationalError:
            os.kill(pid, signal.SIGCONT)
            time.sleep(0.02)
        finally:
            con.close()
    raise AssertionError(f"worker {pid} kept the database's write lock")


@pytestmark_slow
def test_a_hung_worker_is_killed_at_the_time_limit(ctx, principal, settings, monkeypatch) -> None:
    import ragloom.supervisor

    monkeypatch.setattr(ragloom.supervisor, "time_limit_grace", lambda limit: 1.0)
    (doc_id,) = upload(ctx, principal, {"long.txt": long_text(60)}, parser_config={"chunk_token_num": 64})
    with pool_of(ctx, settings, task_time_limit_seconds=2.0) as pool:
        _, pid = wait(lambda: running_worker(ctx, doc_id, pool), 60, "the task to start", poll=0.02)  # type: ignore[misc]
        stop_outside_a_write(ctx, pid)  # stuck: no checkpoint, no heartbeat
        wait(lambda: doc_state(ctx, doc_id).status == "failed", 30, "the hung task to fail")
        wait(lambda: pool.pids() and pool.pids()[0] != pid, 30, "a new worker")
    message = doc_state(ctx, doc_id).message
    assert "RAGLOOM_TASK_TIME_LIMIT_SECONDS" in message and "its worker was stopped" in message


@pytestmark_slow
def test_a_cancelled_task_stuck_in_one_call_frees_its_worker_within_seconds(ctx, principal, settings) -> None:
    (doc_id,) = upload(ctx, principal, {"long.txt": long_text(60)}, parser_config={"chunk_token_num": 64})
    with pool_of(ctx, settings, cancel_grace_seconds=1.0) as pool:
        _, pid = wait(lambda: running_worker(ctx, doc_id, pool), 60, "the task to start", poll=0.02)  # type: ignore[misc]
        stop_outside_a_write(ctx, pid)  # stuck inside one call: no checkpoint reads the cancel
        cancelled = time.monotonic()
        with ctx.db.session() as s:
            catalog.cancel(s, principal=principal, kb_id="kb", doc_id=doc_id)
        wait(lambda: pool.pids() and pool.pids()[0] != pid, 30, "the stuck worker to be replaced")
        assert time.monotonic() - cancelled < 10  # grace 1 s, checked twice a second
        assert "cancelled task" in pool.status().last_exits[0] and "RAGLOOM_CANCEL_GRACE_SECONDS" in \
            pool.status().last_exits[0]
        (note,) = upload(ctx, principal, {"note.txt": b"The next document is not kept waiting."})
        wait(lambda: doc_state(ctx, note).status == "done", 60, "the next document")
    assert not alive(pid)
    doc = doc_state(ctx, doc_id)
    assert doc.status == "cancelled" and doc.active_version_id is None
    from ragloom.docstore.base import Filters

    # what it indexed is gone
    assert ctx.docstore.count(principal.tenant_id, Filters(kb_ids=[doc.kb_id], doc_ids=[doc_id])) == 0


@pytestmark_slow
def test_one_workspace_stuck_on_every_worker_gives_one_back_to_a_waiting_workspace(ctx, principal, settings) -> None:
    mine = upload(ctx, principal, {f"long{i}.txt": long_text(60, seed=i) for i in range(2)},
                  parser_config={"chunk_token_num": 64})
    with pool_of(ctx, settings, count=2, workspace_fair_wait_seconds=1.0, task_max_retries=5) as pool:
        pids = set()
        for doc_id in mine:
            _, pid = wait(lambda d=doc_id: running_worker(ctx, d, pool), 60, "both tasks to start", poll=0.02)  # type: ignore[misc]
            pids.add(pid)
        for pid in pids:
            stop_outside_a_write(ctx, pid)  # both stuck: without fairness the other workspace waits 30 min
        other = second_tenant(ctx)
        (theirs,) = upload(ctx, other, {"note.txt": b"Another workspace's note is not kept waiting."})
        wait(lambda: doc_state(ctx, theirs).status == "done", 90, "the other workspace's note")
        assert pool.status().restarts == 1  # one stuck worker was replaced, the other still holds its task
        assert "another workspace's task waited" in pool.status().last_exits[0]
        assert len(pids - set(pool.pids())) == 1
        for pid in pids & set(pool.pids()):
            os.kill(pid, signal.SIGCONT)
        wait(lambda: all(doc_state(ctx, d).status == "done" for d in mine), 180, "the stuck workspace's documents")


@pytestmark_slow
def test_a_task_over_the_memory_limit_fails_with_the_limit_named(ctx, principal, settings) -> None:
    (doc_id,) = upload(ctx, principal, {"a.txt": long_text(5)})
    with pool_of(ctx, settings, task_memory_limit_mb=64) as pool:  # below any worker's footprint
        wait(lambda: doc_state(ctx, doc_id).status == "failed", 60, "the task to fail")
        wait(lambda: len(pool.pids()) == 1, 30, "a worker")
    assert "RAGLOOM_TASK_MEMORY_LIMIT_MB" in doc_state(ctx, doc_id).message


@pytestmark_slow
def test_a_knowledge_build_is_counted_in_health_and_held_to_the_memory_limit(ctx, principal, settings,
                                                                              admin) -> None:
    from fastapi.testclient import TestClient

    from ragloom.api.app import create_app
    from ragloom.db.models import KnowledgeBuild
    from ragloom.service.builds import lifecycle
    from ragloom.worker import run_one

    upload(ctx, principal, {"a.txt": long_text(8)}, parser_config={"chunk_token_num": 64})
    while run_one(ctx, "test"):
        pass
    (build,) = lifecycle.start(ctx, principal=principal, kb_id="kb", request=BuildRequest(kind="graph")).builds
    with TestClient(create_app(context=ctx), headers={"Authorization": f"Bearer {admin.new_key.key}"}) as client:
        queue = client.get("/api/v1/health").json()["queue"]
    assert queue["builds_queued"] == 1 and queue["builds_running"] == 0 and queue["queued"] == 0

    def row() -> KnowledgeBuild:
        with ctx.db.session() as s:
            found = s.get(KnowledgeBuild, build.id)
            assert found is not None
            return found

    with pool_of(ctx, settings, task_memory_limit_mb=64) as pool:  # below any worker's footprint
        wait(lambda: row().status == "failed", 60, "the build to fail")
        wait(lambda: len(pool.pids()) == 1, 30, "a worker")
    # Either the worker's own guard stops the build between two steps, or the supervisor sees the worker
    # over the limit first and stops it ("its worker was stopped"): the limit is named either way.
    assert "RAGLOOM_TASK_MEMORY_LIMIT_MB" in row().message


# -- ragloom serve: signals -----------------------------------------------------------------------


@pytestmark_slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_serve_stops_every_worker_on(sig: signal.Signals, tmp_path: Path) -> None:
    with served(tmp_path / "home") as (proc, _):
        children = descendants(proc.pid)
        assert len(children) >= 2
        proc.send_signal(sig)
        assert proc.wait(60) == 0
        wait(lambda: not any(alive(p) for p in children), 15, "every child to exit")


@pytestmark_slow
def test_kill_9_of_serve_leaves_no_worker_and_a_restart_finishes_the_work(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with served(home) as (proc, url):
        key = admin_key(home, url)
        api = httpx.Client(base_url=url + "/api/v1", headers={"Authorization": f"Bearer {key}"}, timeout=60)
        assert api.post("/datasets", json={"name": "kb", "parser_config": {"chunk_token_num": 64}}).status_code == 201
        res = api.post("/datasets/kb/documents", files=[("file", ("long.txt", long_text(60), "text/plain"))])
        assert res.status_code == 201, res.text
        doc_id = res.json()["documents"][0]["id"]
        wait(lambda: api.get(f"/datasets/kb/documents/{doc_id}").json()["status"] == "running", 60, "work")
        children = descendants(proc.pid)
        proc.kill()
        proc.wait(10)
        wait(lambda: not any(alive(p) for p in children), 15, "the orphaned workers to exit")
    with served(home) as (proc, url):
        assert len([p for p in descendants(proc.pid) if is_worker_process(p)]) == 2
        api = httpx.Client(base_url=url + "/api/v1", headers={"Authorization": f"Bearer {key}"}, timeout=60)
        wait(lambda: api.get(f"/datasets/kb/documents/{doc_id}").json()["status"] == "done", 300, "the document")
        assert api.get("/health").json()["workers"]["alive"] == 2  # no extra worker



ORPHAN_IN_A_LONG_CALL = """
import os, sys, threading, time
from ragloom.config import Settings
from ragloom.context import Context
from ragloom.worker import _Beat

ctx = Context(Settings(home=sys.argv[1], worker_heartbeat_seconds=0.2, _env_file=None))
stop = threading.Event()
beat = _Beat(ctx, "w:orphan", stop, parent_pid=os.getppid() + 1)  # not its parent: orphaned already
beat.start()
time.sleep(120)  # a model call that never reaches a checkpoint
"""


@pytestmark_slow
def test_an_orphaned_worker_stuck_in_a_long_call_exits_after_the_grace(ctx) -> None:
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", ORPHAN_IN_A_LONG_CALL, str(ctx.settings.home)],
                          capture_output=True, text=True, timeout=60)
    took = time.monotonic() - started
    assert proc.returncode == 1, proc.stderr
    assert ORPHAN_GRACE_SECONDS <= took < 60
    assert "exiting now" in proc.stderr
