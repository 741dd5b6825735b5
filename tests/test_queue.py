"""The job queue's lifecycle (``ragloom.db.queue``), tested once for every kind of job — document tasks and
knowledge builds —, on SQLite here and on PostgreSQL too (``tests/postgres/test_sqlite_suite_on_pg.py``):
a job is claimed once by concurrent workers, progress only moves forward, a failure keeps its reason, a
transient one is retried until its attempts run out, a cancel is seen at the next report, a worker that
stopped beating loses its job to another (failed after its retries), and a worker stopped on purpose hands
its job back uncounted. A task's document mirrors it all (:func:`state`). What one kind alone does —
fairness between workspaces, batches of small documents, one build of a kind per knowledge base — is
tested with it (``test_supervision``, ``test_batching``, ``test_builds``)."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy.orm import Session

from ragloom.context import Context
from ragloom.db import builds, queue, tasks
from ragloom.db.models import Document, DocumentVersion, KnowledgeBase, KnowledgeBuild, Task, Tenant, utcnow
from ragloom.db.queue import JobKind
from ragloom.db.session import Database

KINDS: dict[str, JobKind[Any]] = {"task": tasks.TASKS, "build": builds.BUILDS}


@pytest.fixture(params=list(KINDS))
def kind(request: pytest.FixtureRequest) -> JobKind[Any]:
    return KINDS[request.param]


def seed(db: Database, kind: JobKind[Any], n: int) -> list[str]:
    """``n`` queued jobs of ``kind`` in one workspace, none waiting for another: tasks of ``n`` one-range
    documents, builds of ``n`` knowledge bases. Rows only, no files."""
    ids: list[str] = []
    with db.session() as s:
        tenant = Tenant(name="a")
        s.add(tenant)
        s.flush()
        for i in range(n):
            kb = KnowledgeBase(tenant_id=tenant.id, name=f"kb{i}", embedding_model="m", embedding_dim=8)
            s.add(kb)
            s.flush()
            if kind is builds.BUILDS:
                build = KnowledgeBuild(tenant_id=tenant.id, kb_id=kb.id, kind="raptor")
                s.add(build)
                s.flush()
                ids.append(build.id)
            else:
                ids += add_document(s, kb, f"doc{i}.pdf", ranges=1)
    return ids


def add_document(s: Session, kb: KnowledgeBase, name: str, *, ranges: int) -> list[str]:
    """A document of ``kb`` whose latest version waits for ``ranges`` page-range tasks (of 12 pages);
    returns their ids."""
    doc = Document(kb_id=kb.id, tenant_id=kb.tenant_id, name=name)
    s.add(doc)
    s.flush()
    version = DocumentVersion(document_id=doc.id, number=1, content_hash="0" * 64, size=10)
    s.add(version)
    s.flush()
    doc.latest_version_id = version.id
    ids: list[str] = []
    for r in range(ranges):
        task = Task(tenant_id=kb.tenant_id, kb_id=kb.id, document_id=doc.id, version_id=version.id,
                    from_page=12 * r + 1, to_page=12 * r + 12)
        s.add(task)
        s.flush()
        ids.append(task.id)
    return ids


def state(db: Database, kind: JobKind[Any], job_id: str) -> Any:
    """The job's row, after checking that a task's document shows the same status and message."""
    with db.session() as s:
        job = s.get(kind.model, job_id)
        assert job is not None
        if isinstance(job, Task):
            doc = s.get(Document, job.document_id)
            assert doc is not None and (doc.status, doc.message) == (job.status, job.message)
        s.expunge(job)
        return job


def claim(db: Database, kind: JobKind[Any], worker_id: str = "w") -> str | None:
    with db.session() as s:
        job = queue.claim(kind, s, worker_id=worker_id)
        return job.id if job is not None else None


def test_each_job_is_claimed_once_by_concurrent_workers(ctx: Context, kind: JobKind[Any]) -> None:
    ids = seed(ctx.db, kind, 20)
    claimed: list[str] = []
    lock = threading.Lock()

    def worker(i: int) -> None:
        while (job_id := claim(ctx.db, kind, f"w{i}")) is not None:
            with lock:
                claimed.append(job_id)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(claimed) == 20 and sorted(set(claimed)) == sorted(ids)
    assert {state(ctx.db, kind, i).attempts for i in ids} == {1}


def test_progress_never_goes_back_and_a_failure_keeps_its_reason(ctx: Context, kind: JobKind[Any]) -> None:
    (job_id,) = seed(ctx.db, kind, 1)
    assert claim(ctx.db, kind) == job_id
    with ctx.db.session() as s:
        assert queue.report(kind, s, job_id, progress=0.5, message="half")
        assert queue.report(kind, s, job_id, progress=0.2, message="late")
    job = state(ctx.db, kind, job_id)
    assert (job.status, job.progress, job.message) == ("running", 0.5, "late")
    with ctx.db.session() as s:
        assert queue.report(kind, s, job_id, progress=1.5)
    assert state(ctx.db, kind, job_id).progress == 0.99  # 1 only when finished
    with ctx.db.session() as s:
        assert queue.fail(kind, s, job_id, reason="the file is empty") is False
    job = state(ctx.db, kind, job_id)
    assert (job.status, job.message) == ("failed", "the file is empty") and job.finished_at is not None


def test_a_finished_job_is_done_with_its_message(ctx: Context, kind: JobKind[Any]) -> None:
    (job_id,) = seed(ctx.db, kind, 1)
    assert claim(ctx.db, kind) == job_id
    with ctx.db.session() as s:
        if kind.staged:  # a build says its stage and its running counts
            assert queue.report(kind, s, job_id, progress=0.3, stage="summarising", stats={"llm": 2})
            row = s.get(KnowledgeBuild, job_id)
            assert row is not None and (row.stage, row.stats) == ("summarising", {"llm": 2})
        queue.finish(kind, s, job_id, message="12 chunks indexed")
    job = state(ctx.db, kind, job_id)
    assert (job.status, job.progress, job.message) == ("done", 1.0, "12 chunks indexed")
    assert job.finished_at is not None and (not kind.staged or job.stage == "done")
    with ctx.db.session() as s:
        assert queue.report(kind, s, job_id, progress=0.5) is False  # no longer running


def test_a_transient_failure_is_retried_later_until_the_attempts_run_out(ctx: Context, kind: JobKind[Any]) -> None:
    (job_id,) = seed(ctx.db, kind, 1)
    assert claim(ctx.db, kind) == job_id
    with ctx.db.session() as s:
        assert queue.fail(kind, s, job_id, reason="the model timed out", retry_in=timedelta(hours=1), max_attempts=2)
    job = state(ctx.db, kind, job_id)
    said = "retrying in 3600 s after:" if kind.retry_says_when else "retrying after:"
    assert (job.status, job.claimed_by, job.message) == ("queued", None, f"{said} the model timed out")
    assert claim(ctx.db, kind) is None  # not before its pause
    with ctx.db.session() as s:
        row = s.get(kind.model, job_id)
        row.not_before = utcnow() - timedelta(seconds=1)
    assert claim(ctx.db, kind) == job_id
    with ctx.db.session() as s:  # the second attempt was the last
        assert not queue.fail(kind, s, job_id, reason="the model timed out", retry_in=timedelta(hours=1),
                              max_attempts=2)
    job = state(ctx.db, kind, job_id)
    assert (job.status, job.attempts, job.message) == ("failed", 2, "the model timed out")


def test_a_cancel_is_seen_at_the_next_report(ctx: Context, kind: JobKind[Any]) -> None:
    running, waiting, failing = seed(ctx.db, kind, 3)
    assert claim(ctx.db, kind) == running
    with ctx.db.session() as s:
        assert not queue.cancel_requested(kind, s, running) and queue.cancel_requested(kind, s, "gone")
        queue.request_cancel(kind, s, s.get(kind.model, running))
        queue.request_cancel(kind, s, s.get(kind.model, waiting))  # a queued job: at once
    assert (state(ctx.db, kind, waiting).status, state(ctx.db, kind, waiting).message) == ("cancelled",
                                                                                           "cancelled by user")
    assert state(ctx.db, kind, running).message == "cancelling"
    with ctx.db.session() as s:  # what the running job's guard reads
        assert queue.cancel_requested(kind, s, running) and queue.cancel_requested(kind, s, waiting)
    with ctx.db.session() as s:
        assert queue.report(kind, s, running, progress=0.6) is False
    assert state(ctx.db, kind, running).progress == 0.0
    with ctx.db.session() as s:
        queue.mark_cancelled(kind, s, running)
    job = state(ctx.db, kind, running)
    assert (job.status, job.message) == ("cancelled", "cancelled by user") and job.finished_at is not None
    with ctx.db.session() as s:  # a task is marked cancelled again when asked; a build stays as it was
        queue.mark_cancelled(kind, s, running, message="cancelled again")
    assert state(ctx.db, kind, running).message == ("cancelled again" if kind.cancel_again else "cancelled by user")
    # a transient fault of a job being cancelled: a build fails, a task is retried (its next run sees the cancel)
    assert claim(ctx.db, kind) == failing
    with ctx.db.session() as s:
        s.get(kind.model, failing).cancel_requested = True
    with ctx.db.session() as s:
        retried = queue.fail(kind, s, failing, reason="the store is busy", retry_in=timedelta(seconds=5))
    assert retried is not kind.cancel_stops_retry
    assert state(ctx.db, kind, failing).status == ("failed" if kind.cancel_stops_retry else "queued")


def test_a_job_whose_worker_keeps_vanishing_fails_after_its_retries(ctx: Context, kind: JobKind[Any]) -> None:
    (job_id,) = seed(ctx.db, kind, 1)
    for attempt in (1, 2, 3):
        assert claim(ctx.db, kind, f"gone:{attempt}") == job_id
        assert state(ctx.db, kind, job_id).attempts == attempt
        with ctx.db.session() as s:
            s.get(kind.model, job_id).heartbeat_at = utcnow() - timedelta(minutes=10)
        with ctx.db.session() as s:
            failed = queue.requeue_stale(kind, s, stale_after=timedelta(minutes=1), max_attempts=3)
        assert failed == ([] if attempt < 3 else [job_id])
        if attempt == 1:
            resumes = ", resumes from what is stored" if kind.resumes else ""
            job = state(ctx.db, kind, job_id)
            assert (job.status, job.claimed_by) == ("queued", None)
            assert job.message == f"its worker stopped sending heartbeats; re-queued (attempt 1 of 3){resumes}"
    job = state(ctx.db, kind, job_id)
    assert job.status == "failed" and f"the {kind.noun} was tried 3 times" in job.message
    assert "RAGLOOM_TASK_MAX_RETRIES" in job.message
    assert claim(ctx.db, kind) is None  # never re-queued again


def test_a_job_handed_back_on_shutdown_keeps_its_attempts(ctx: Context, kind: JobKind[Any]) -> None:
    first, second = seed(ctx.db, kind, 2)
    assert claim(ctx.db, kind, "stopping") == first
    with ctx.db.session() as s:
        assert queue.requeue_worker(kind, s, "stopping", reason="its worker was stopped", count_attempt=False) == []
    job = state(ctx.db, kind, first)
    assert (job.status, job.attempts) == ("queued", 0)
    assert job.message == "its worker was stopped; waiting for another worker"
    assert claim(ctx.db, kind) == first and state(ctx.db, kind, first).attempts == 1
    assert claim(ctx.db, kind, "dying") == second
    with ctx.db.session() as s:  # a worker that died: the attempt counts
        assert queue.requeue_worker(kind, s, "dying", reason="its worker was killed", max_attempts=1) == [second]
    assert state(ctx.db, kind, second).status == "failed"
    with ctx.db.session() as s:  # handed back by its worker, counted when asked
        queue.hand_back(kind, s, first, count_attempt=True)
    job = state(ctx.db, kind, first)
    assert (job.status, job.attempts, job.message) == ("queued", 1, "the worker stopped; waiting for another")


def test_a_claim_takes_a_document_no_worker_is_on_beyond_the_groups_it_reads(ctx: Context) -> None:
    """Tasks: each claim reads the first MAX_GROUPS + (documents with a running task) documents by age, not
    every waiting one — so with MAX_GROUPS documents already being worked on, the next claim still finds the
    one no worker is on, though it is the youngest."""
    with ctx.db.session() as s:
        tenant = Tenant(name="a")
        s.add(tenant)
        s.flush()
        kb = KnowledgeBase(tenant_id=tenant.id, name="kb", embedding_model="m", embedding_dim=8)
        s.add(kb)
        s.flush()
        docs = {}
        for i in range(queue.MAX_GROUPS + 1):
            for task_id in add_document(s, kb, f"doc{i}.pdf", ranges=2):
                docs[task_id] = i
    claimed = [claim(ctx.db, tasks.TASKS, f"w{n}") for n in range(queue.MAX_GROUPS + 1)]
    assert sorted(docs[t] for t in claimed if t is not None) == list(range(queue.MAX_GROUPS + 1))
