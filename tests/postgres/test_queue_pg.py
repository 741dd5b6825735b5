"""The job queue on PostgreSQL: concurrent workers, each with its own engine, take every task exactly once
(``FOR UPDATE SKIP LOCKED``: they take different rows, nobody waits for another's candidate), a knowledge
base runs one build of a kind even when two workers claim at once, a lease whose heartbeat stopped goes to
another worker (a task's and a build's alike), and times are UTC whatever the server's time zone. (The
whole lifecycle runs on PostgreSQL too: ``test_sqlite_suite_on_pg.py`` imports ``tests/test_queue.py``.)"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from sqlalchemy import func, make_url, select, text, update

from ragloom.db import builds, queue, tasks, workers
from ragloom.db.models import (
    Document,
    DocumentVersion,
    KnowledgeBase,
    KnowledgeBuild,
    Task,
    Tenant,
    Worker,
    utcnow,
)
from ragloom.db.queue import JobKind
from ragloom.db.session import Database, upgrade
from ragloom.states import TaskStatus
from tests.pg import PgServer
from tests.test_queue import add_document, seed


@pytest.fixture
def db(pg_url: str, pg: PgServer) -> Iterator[Database]:
    # a server in another time zone than UTC: the engine's sessions still read and write UTC
    name = make_url(pg_url).database
    with psycopg.connect(pg.dsn(), autocommit=True) as conn:
        conn.execute(f"ALTER DATABASE \"{name}\" SET timezone TO 'Asia/Kathmandu'")
    upgrade(pg_url)
    database = Database(pg_url)
    yield database
    database.dispose()


def _queue(db: Database, layout: dict[str, list[int]]) -> list[str]:
    """Tasks in the DB, no files: ``{tenant: [page-range tasks of each of its documents]}``."""
    ids: list[str] = []
    with db.session() as s:
        for tenant_name, docs in layout.items():
            tenant = Tenant(name=tenant_name)
            s.add(tenant)
            s.flush()
            kb = KnowledgeBase(tenant_id=tenant.id, name="kb", embedding_model="m", embedding_dim=8)
            s.add(kb)
            s.flush()
            for d, ranges in enumerate(docs):
                ids += add_document(s, kb, f"doc{d}.pdf", ranges=ranges)
    return ids


def test_eight_workers_with_their_own_engines_claim_each_of_300_tasks_exactly_once(pg_url: str, db: Database) -> None:
    # a big document, a tenant of many small ones, one-task documents
    ids = _queue(db, {"big": [150], "many": [5] * 20, "small": [1] * 50})
    assert len(ids) == 300
    claimed: list[tuple[str, str]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    start = threading.Barrier(8)

    def worker(i: int) -> None:
        own = Database(pg_url)
        try:
            start.wait()
            while True:
                with own.session() as s:
                    task = tasks.claim(s, worker_id=f"w{i}")
                    task_id = task.id if task is not None else None
                if task_id is None:
                    return
                with lock:
                    claimed.append((task_id, f"w{i}"))
                with own.session() as s:
                    tasks.finish(s, task_id)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            own.dispose()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    counts = Counter(task_id for task_id, _ in claimed)
    assert sorted(counts) == sorted(ids) and set(counts.values()) == {1}  # each once, none lost
    assert len({w for _, w in claimed}) > 1
    with db.session() as s:
        rows = s.execute(select(Task.status, Task.attempts)).all()
        assert {(st, a) for st, a in rows} == {(TaskStatus.DONE, 1)}  # no claim was taken back or counted twice
        assert set(s.scalars(select(Document.status))) == {TaskStatus.DONE}


def test_a_worker_skips_the_rows_another_is_claiming_instead_of_waiting(db: Database) -> None:
    _queue(db, {"a": [1, 1, 1]})
    with db.session() as first:
        mine = tasks.claim(first, worker_id="one")  # not committed: its row stays locked
        assert mine is not None
        with db.session() as second:
            second.execute(text("SET LOCAL lock_timeout = '2s'"))  # waiting for the first would fail here
            started = time.monotonic()
            theirs = tasks.claim(second, worker_id="two")
            assert theirs is not None and theirs.id != mine.id
            assert time.monotonic() - started < 1.5
    with db.session() as s:
        names = dict(s.execute(select(Document.id, Document.name)).all())
        assert s.scalar(select(func.count()).where(Task.status == TaskStatus.RUNNING)) == 2
    # the fair order stays: the oldest document first, the next one for the second worker
    assert (names[mine.document_id], names[theirs.document_id]) == ("doc0.pdf", "doc1.pdf")


def test_workers_claiming_page_ranges_of_one_document_take_them_in_page_order(pg_url: str, db: Database) -> None:
    _queue(db, {"a": [6]})
    other = Database(pg_url)
    got: list[int] = []
    try:
        with db.session() as first:
            mine = tasks.claim(first, worker_id="one")
            assert mine is not None

            def second_worker() -> None:  # waits for the document row the first one is updating, no longer
                with other.session() as s:
                    task = tasks.claim(s, worker_id="two")
                    got.append(task.from_page if task is not None else -1)

            thread = threading.Thread(target=second_worker)
            thread.start()
            time.sleep(0.3)
        thread.join(30)
    finally:
        other.dispose()
    assert (mine.from_page, got) == (1, [13])


def test_fairness_first_the_tenant_with_fewest_running_tasks(db: Database) -> None:
    _queue(db, {"busy": [10], "quiet": [1]})
    with db.session() as s:
        first = tasks.claim(s, worker_id="w1")
        second = tasks.claim(s, worker_id="w2")
        assert first is not None and second is not None
        tenants = dict(s.execute(select(Tenant.id, Tenant.name)).all())
        assert {tenants[first.tenant_id], tenants[second.tenant_id]} == {"busy", "quiet"}


@pytest.mark.parametrize("kind", [tasks.TASKS, builds.BUILDS], ids=["task", "build"])
def test_a_lease_whose_heartbeat_stopped_goes_to_another_worker(db: Database, kind: JobKind[Any]) -> None:
    (fresh, stale) = seed(db, kind, 2)
    with db.session() as s:
        a = queue.claim(kind, s, worker_id="alive")
        b = queue.claim(kind, s, worker_id="dead")
        assert a is not None and b is not None
        assert {a.id, b.id} == {fresh, stale}
        fresh, stale = a.id, b.id
    t: Any = kind.model
    with db.session() as s:  # heartbeats written by the server's clock, in its own (non-UTC) zone
        s.execute(update(t).where(t.id == fresh).values(heartbeat_at=text("now() - interval '4 minutes'")))
        s.execute(update(t).where(t.id == stale).values(heartbeat_at=text("now() - interval '6 minutes'")))
    with db.session() as s:
        beat = s.scalar(select(t.heartbeat_at).where(t.id == stale))
        assert beat is not None and beat.utcoffset() == timedelta(0)  # read back in UTC
        assert timedelta(minutes=5) < utcnow() - beat < timedelta(minutes=7)
        assert queue.requeue_stale(kind, s, stale_after=timedelta(minutes=5)) == []  # re-queued, not failed
    with db.session() as s:
        assert s.get(kind.model, fresh).status == TaskStatus.RUNNING
        retaken = queue.claim(kind, s, worker_id="other")
        assert retaken is not None and retaken.id == stale
        assert (retaken.claimed_by, retaken.attempts) == ("other", 2)
    with db.session() as s:  # the dead worker's last attempt: failed for good
        s.execute(update(t).where(t.id == stale).values(heartbeat_at=utcnow() - timedelta(hours=1), attempts=3))
    with db.session() as s:
        assert queue.requeue_stale(kind, s, stale_after=timedelta(minutes=5), max_attempts=3) == [stale]
        assert s.get(kind.model, stale).status == TaskStatus.FAILED


def test_two_workers_taking_back_stale_leases_at_once_take_each_back_once(pg_url: str, db: Database) -> None:
    ids = _queue(db, {"a": [20]})
    with db.session() as s:
        for _ in ids:
            assert tasks.claim(s, worker_id="dead") is not None
        s.execute(update(Task).values(heartbeat_at=utcnow() - timedelta(hours=1)))
    other = Database(pg_url)
    try:
        with db.session() as s1, other.session() as s2:
            tasks.requeue_stale(s1, stale_after=timedelta(minutes=5))
            tasks.requeue_stale(s2, stale_after=timedelta(minutes=5))  # skips the rows s1 holds
        with db.session() as s:
            rows = s.execute(select(Task.status, Task.attempts, Task.message)).all()
    finally:
        other.dispose()
    assert {(st, n) for st, n, _ in rows} == {(TaskStatus.QUEUED, 1)}
    assert all(m.endswith("re-queued (attempt 1 of 3)") for _, _, m in rows)


def test_a_knowledge_base_runs_one_build_of_a_kind_even_when_two_workers_claim_at_once(pg_url: str,
                                                                                     db: Database) -> None:
    _queue(db, {"a": [1], "b": [1]})
    with db.session() as s:
        kbs = dict(s.execute(select(Tenant.name, KnowledgeBase.id).join(KnowledgeBase,
                                                                        KnowledgeBase.tenant_id == Tenant.id)).all())
        tenant_of = dict(s.execute(select(KnowledgeBase.id, KnowledgeBase.tenant_id)).all())
        for kb in (kbs["a"], kbs["a"], kbs["b"]):
            s.add(KnowledgeBuild(tenant_id=tenant_of[kb], kb_id=kb, kind="raptor"))
            s.flush()
    other = Database(pg_url)
    got: dict[str, str | None] = {}

    def second_worker() -> None:
        with other.session() as s:
            build = builds.claim(s, worker_id="two")
            got["two"] = build.kb_id if build is not None else None

    try:
        with db.session() as s:
            first = builds.claim(s, worker_id="one")  # holds its knowledge base until it commits
            assert first is not None and first.kb_id == kbs["a"]
            thread = threading.Thread(target=second_worker)
            thread.start()
            time.sleep(0.5)
        thread.join(30)
    finally:
        other.dispose()
    assert got == {"two": kbs["b"]}  # not the other build of the busy knowledge base
    with db.session() as s:
        running = Counter(s.scalars(select(KnowledgeBuild.kb_id).where(KnowledgeBuild.status == TaskStatus.RUNNING)))
    assert running == Counter({kbs["a"]: 1, kbs["b"]: 1})


def test_long_worker_ids_and_provider_model_names_fit(db: Database) -> None:
    """Values SQLite kept and PostgreSQL would refuse: beyond a column's declared length (a worker id of a
    container's 63-character host name, a workspace provider's embedding model name), beyond 32 bits (a
    file's size), a NUL character in text (dropped on PostgreSQL)."""
    (task_id,) = _queue(db, {"a": [1]})
    worker_id = f"{'h' * 63}:4194304:12"
    with db.session() as s:
        workers.register(s, worker_id=worker_id, host="h" * 63, pid=4194304, supervisor=f"{'h' * 63}:4194304")
        task = tasks.claim(s, worker_id=worker_id)
        assert task is not None and task.claimed_by == worker_id
        kb = s.scalars(select(KnowledgeBase)).one()
        kb.embedding_model = f"provider:{kb.tenant_id}:{'m' * 100}"
        version = s.scalars(select(DocumentVersion)).one()
        version.size = 3 * 1024**3  # a 3 GiB file (RAGLOOM_MAX_UPLOAD_MB may allow it)
        kb.description, kb.synonyms = "a NUL\x00 in text", [["nul\x00in json", "b"]]  # PostgreSQL's text holds none
    with db.session() as s:
        assert s.scalar(select(Worker.id)) == worker_id
        assert s.scalar(select(DocumentVersion.size)) == 3 * 1024**3
        assert s.execute(select(KnowledgeBase.description, KnowledgeBase.synonyms)).one() == (
            "a NUL in text", [["nul\x00in json", "b"]])
        assert s.scalar(select(KnowledgeBase.id).where(KnowledgeBase.description == "a NUL\x00 in text")) is not None
        assert tasks.requeue_worker(s, worker_id, reason="gone") == []
        assert s.get(Task, task_id).status == TaskStatus.QUEUED  # type: ignore[union-attr]
