"""The ingestion use case: run one claimed task — read its job, call the stages, publish.

The stages (:mod:`ragloom.ingest.pipeline`) know nothing of the database or the queue; this module
gives each the stores and models it uses, records progress on the task row, stores what the
stages produced (page previews, extracted metadata, search-store rows) and flips the document's
active version in one transaction when the version's last task is done (:func:`publish`).
A task is idempotent: row ids are a hash of (version id, chunk order), so running it again
rewrites the same rows.
"""

from __future__ import annotations

import logging
import time
import traceback
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ragloom.context import Context
from ragloom.dataflow import BlockKind, Chunk, ChunkRecord, ParsedDocument
from ragloom.db import tasks
from ragloom.db.models import Document, DocumentVersion, KnowledgeBase, Task, VersionPage, utcnow
from ragloom.docstore.base import Filters
from ragloom.errors import ModelError, ParseError, StoreError, TaskCancelledError, TaskInterruptedError
from ragloom.ingest import coverage, pipeline
from ragloom.ingest.guard import checkpoint
from ragloom.ingest.job import Job
from ragloom.service.accounts import workspace_models
from ragloom.service.documents import chunk_edits, enrichment, figures, versions
from ragloom.states import RunOutcome, TaskStatus, VersionStatus

log = logging.getLogger(__name__)


class TaskProgress:
    """Reports progress to the task row; raises TaskCancelledError once cancel is asked, and
    whatever the task's guard raises (:func:`ragloom.ingest.guard.checkpoint`)."""

    def __init__(self, ctx: Context, task_id: str, *, quiet: bool = False) -> None:
        self.ctx = ctx
        self.task_id = task_id
        self._last = time.monotonic() if quiet else 0.0  # quiet: the first write waits like the next ones

    def __call__(self, progress: float, message: str, *, force: bool = False) -> None:
        checkpoint()
        now = time.monotonic()
        if not force and now - self._last < 0.5:  # a small document's steps are not written one by one
            return
        self._last = now
        with self.ctx.db.session() as s:
            alive = tasks.report(s, self.task_id, progress=progress, message=message)
        if not alive:
            raise TaskCancelledError("cancelled by user")


class BatchProgress:
    """The shared steps of a batch of tasks (embedding, indexing: "embedded 120/400 chunks") reported on
    every task of it, so that each document's progress moves; at most once a second, in one transaction. A
    task cancelled meanwhile does not stop the others: it is told at publishing."""

    def __init__(self, ctx: Context, task_ids: list[str]) -> None:
        self.ctx = ctx
        self.task_ids = task_ids
        self._last = 0.0

    def __call__(self, progress: float, message: str, *, force: bool = False) -> None:
        checkpoint()
        now = time.monotonic()
        if not force and now - self._last < 1.0:
            return
        self._last = now
        text = f"{message}, in a batch of {len(self.task_ids)} parts"
        with self.ctx.db.session() as s:
            for task_id in self.task_ids:
                tasks.report(s, task_id, progress=progress, message=text)


def load_job(ctx: Context, task_id: str) -> Job:
    """The task's inputs, read from the DB once at its start."""
    with ctx.db.session() as s:
        task = s.get(Task, task_id)
        assert task is not None
        version = s.get(DocumentVersion, task.version_id)
        doc = s.get(Document, task.document_id)
        kb = s.get(KnowledgeBase, task.kb_id)
        assert version is not None and doc is not None and kb is not None
        return Job(
            task_id=task.id, tenant_id=task.tenant_id, kb_id=kb.id, doc_id=doc.id, version_id=version.id,
            filename=doc.name, content_hash=version.content_hash, file_key=version.file_key,
            chunk_method=version.chunk_method,
            parser_config=dict(version.parser_config or {}), embedding_model=kb.embedding_model,
            language=kb.language, from_page=task.from_page, to_page=task.to_page,
            tag_kb_ids=tuple(kb.tag_kb_ids or ()), topn_tags=kb.topn_tags,
        )


def run_task(ctx: Context, task_id: str) -> RunOutcome:
    """Run one claimed task to its end; returns the final task status."""
    return run_tasks(ctx, [task_id])[task_id]


@dataclass(slots=True)
class _Prepared:
    """A task's document parsed and chunked, waiting for the shared embedding and indexing."""

    job: Job
    progress: TaskProgress
    parsed: ParsedDocument
    chunks: list[Chunk]
    kept: coverage.Coverage
    records: list[ChunkRecord] = field(default_factory=list)
    note: str = ""


def run_tasks(ctx: Context, task_ids: list[str]) -> dict[str, RunOutcome]:
    """Run claimed tasks of one knowledge base together; returns each task's final status.

    Each document is parsed and chunked on its own; then the chunks of all of them are embedded in
    shared model batches and written to the search store in one write (one commit for many small
    documents, where a commit each costs more than their embedding), and each document is
    published on its own. A file that fails (unreadable, cancelled, over a limit) fails its own
    task only; a failure of the shared steps (the model or the store) is every task's.
    """
    outcomes: dict[str, RunOutcome] = {}
    ready: list[_Prepared] = []
    for task_id in task_ids:
        job = load_job(ctx, task_id)
        try:
            ready.append(_prepare(ctx, job, batched=len(task_ids) > 1))
        except Exception as exc:  # settled as this task's failure
            outcomes[task_id] = _settle(ctx, job, exc)
    if not ready:
        return outcomes
    # one task reports the shared steps; of several, each is told at publishing (and may be cancelled then)
    shared = ready[0].progress if len(ready) == 1 else BatchProgress(ctx, [p.job.task_id for p in ready])
    try:
        embedder = workspace_models.embedder(ctx, ready[0].job.embedding_model)
        vectors = pipeline.embed_many([(p.job, p.chunks) for p in ready], embedder, shared)
        for p, vecs in zip(ready, vectors, strict=True):
            titles = [(max(1, b.level), b.text) for b in p.parsed.blocks if b.kind == BlockKind.TITLE]
            p.records = pipeline.to_records(ctx.analyzers, p.job, p.chunks, vecs, titles)
            chat = workspace_models.chat_model(ctx, p.job.tenant_id)
            p.note = pipeline.llm_toc(chat, ctx.settings.chat_max_context_tokens, p.job, p.chunks, p.records,
                                      embedder.count_tokens, p.progress)
            chunk_edits.apply_overrides(ctx, p.job, p.records, embedder)  # manual edits survive a re-parse
            add_tags(ctx, p.job, p.records)
        shared(0.86, "indexing")
        pipeline.index(ctx.docstore, ready[0].job, [r for p in ready for r in p.records], shared)
    except Exception as exc:  # every task of the batch shares the failure
        for p in ready:
            outcomes[p.job.task_id] = _settle(ctx, p.job, exc)
        return outcomes
    for p in ready:
        try:
            p.progress(0.97, "publishing", force=True)
            publish(ctx, p.job, chunk_count=sum(1 for r in p.records if r.available),
                    page_count=p.parsed.page_count, note=p.note, kept=p.kept)
            outcomes[p.job.task_id] = RunOutcome.DONE
        except Exception as exc:
            outcomes[p.job.task_id] = _settle(ctx, p.job, exc)
    return outcomes


def _prepare(ctx: Context, job: Job, *, batched: bool = False) -> _Prepared:
    """Parse and chunk; a document of a batch takes a second or less, so its steps are not written
    one by one (its claim said it runs; publishing says it is done, or finds it cancelled)."""
    progress = TaskProgress(ctx, job.task_id, quiet=batched)
    progress(0.05, "parsing", force=not batched)
    data = ctx.objects.get(job.file_key)
    parsed = pipeline.parse(data, job)
    embedder = workspace_models.embedder(ctx, job.embedding_model)
    progress(0.2, f"parsed {len(parsed.blocks)} blocks; rendering page previews")
    store_pages(ctx, job, data, parsed)
    store_metadata(ctx, job, parsed)
    progress(0.25, f"parsed {len(parsed.blocks)} blocks; chunking")
    chunks = pipeline.chunk(job, parsed, embedder)
    kept = coverage.measure(parsed.blocks, chunks, parsed.removed, method=job.chunk_method)
    if kept.kept < kept.words:
        log.warning("task %s: the chunks keep %d of %d words of the parsed text (missing: %s)", job.task_id,
                    kept.kept, kept.words, ", ".join(kept.missing))
    pictured = figures.add_figures(ctx, job, data, parsed, chunks, lambda message: progress(0.26, message))
    enriched = enrichment.enrich(ctx, job, parsed, chunks, lambda message: progress(0.27, message))
    said = "; ".join(n for n in (pictured.note, enriched.note) if n)
    note = f" ({said})" if said else ""
    progress(0.3, f"{len(chunks)} chunks; embedding{note}", force=bool(note))
    return _Prepared(job, progress, parsed, chunks, kept)


def _settle(ctx: Context, job: Job, exc: Exception) -> RunOutcome:
    """What a task becomes after ``exc``: handed back, cancelled, failed, or retried later."""
    task_id = job.task_id
    if isinstance(exc, TaskInterruptedError):
        log.info("task %s: handed back to the queue (%s)", task_id, exc.message)
        with ctx.db.session() as s:
            tasks.hand_back(s, task_id, message=exc.message)
        return RunOutcome.INTERRUPTED
    if isinstance(exc, TaskCancelledError):
        _discard(ctx, job)
        with ctx.db.session() as s:
            tasks.mark_cancelled(s, task_id)
            _set_version(s, job.version_id, VersionStatus.CANCELLED, "cancelled by user")
        return RunOutcome.CANCELLED
    if isinstance(exc, ParseError):
        fail_version(ctx, job, exc.message)
        return RunOutcome.FAILED
    if isinstance(exc, StoreError | ModelError):
        log.warning("task %s: transient failure: %s", task_id, exc.message)
        with ctx.db.session() as s:
            tasks.fail(s, task_id, reason=exc.message, retry_in=timedelta(seconds=5),
                       max_attempts=ctx.settings.task_max_retries)
            task = s.get(Task, task_id)
            gave_up = task is not None and task.status == TaskStatus.FAILED
        if gave_up:
            fail_version(ctx, job, exc.message)
            return RunOutcome.FAILED
        return RunOutcome.RETRY
    # a bug, not a document problem: fail the task with the error, keep the worker alive
    log.error("task %s crashed:\n%s", task_id,
              "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    with ctx.db.session() as s:
        tasks.fail(s, task_id, reason=f"internal error: {type(exc).__name__}: {exc}")
    return RunOutcome.FAILED


def fail_version(ctx: Context, job: Job, reason: str) -> None:
    """A task failed for good: the whole version fails with its reason; sibling tasks stop."""
    with ctx.db.session() as s:
        tasks.fail(s, job.task_id, reason=reason)
        _set_version(s, job.version_id, VersionStatus.FAILED, reason)
        for sibling in s.scalars(select(Task).where(Task.version_id == job.version_id, Task.id != job.task_id)):
            if sibling.status == TaskStatus.QUEUED:
                sibling.status, sibling.finished_at = TaskStatus.CANCELLED, utcnow()
                sibling.message = "another page range failed"
            elif sibling.status == TaskStatus.RUNNING:
                sibling.cancel_requested = True
    _discard(ctx, job)


def _discard(ctx: Context, job: Job) -> None:
    """Drop what a version that will never be published indexed (it cannot be rolled back to)."""
    with ctx.db.session() as s:
        version = s.get(DocumentVersion, job.version_id)
        if version is not None:
            version.indexed = False
    ctx.docstore.delete(job.tenant_id, Filters(kb_ids=[job.kb_id], version_ids=[job.version_id]))


def settle_cancelled(ctx: Context, task_id: str) -> None:
    """A cancelled task whose worker was killed before it stopped by itself: marked cancelled, its
    version too, and what it indexed dropped (as the worker does when it sees the cancel itself).
    Nothing when the task is gone or no longer running."""
    with ctx.db.session() as s:
        task = s.get(Task, task_id)
        if task is None or task.status != TaskStatus.RUNNING:
            return
        tasks.mark_cancelled(s, task_id)
        _set_version(s, task.version_id, VersionStatus.CANCELLED, "cancelled by user")
        whole = s.get(Document, task.document_id) is not None and s.get(KnowledgeBase, task.kb_id) is not None
    if whole:
        _discard(ctx, load_job(ctx, task_id))


def _set_version(session: Session, version_id: str, status: VersionStatus, error: str) -> None:
    version = session.get(DocumentVersion, version_id)
    if version is not None and version.status == VersionStatus.BUILDING:
        version.status, version.error = status, error


def publish(ctx: Context, job: Job, *, chunk_count: int, page_count: int | None, note: str = "",
            kept: coverage.Coverage | None = None) -> bool:
    """Finish this task; when it is the version's last, flip the document's active version.

    One transaction: the document row is written first (it serialises the tasks
    of one version on SQLite and PostgreSQL alike), then this task is marked
    done, then, if no sibling task is left, the version becomes active and the
    old version's chunks are parked afterwards (:func:`ragloom.service.documents.versions.retire`).
    When the document was deleted or a newer version was uploaded meanwhile, this version is discarded
    instead. Returns True when the version was published. ``note`` (e.g. why no TOC was
    built) is appended to the task's and the document's message. ``kept`` is the task's coverage;
    the published version (and its document) gets the sum of its tasks'.
    """
    suffix = f"; {note}" if note else ""
    old_version: str | None = None
    outcome = "wait"
    with ctx.db.session() as s:
        doc = s.get(Document, job.doc_id, with_for_update=True)
        version = s.get(DocumentVersion, job.version_id)
        task = s.get(Task, job.task_id)
        if task is not None:
            task.chunk_count = chunk_count
            task.coverage = kept.as_dict() if kept is not None else None
        if doc is None or version is None or doc.latest_version_id != job.version_id:
            outcome = "discard"
            if version is not None:
                version.status, version.indexed = VersionStatus.SUPERSEDED, False
            tasks.finish(s, job.task_id, message="superseded by a newer version; not published")
        else:
            doc.updated_at = utcnow()
            s.flush()  # take the write lock before reading the siblings
            tasks.finish(s, job.task_id, message=f"{chunk_count} chunks indexed{suffix}")
            siblings = list(s.scalars(select(Task).where(Task.version_id == job.version_id)))
            if all(t.status == TaskStatus.DONE for t in siblings) and version.staged:
                # built; waits for a reviewer (ragloom.service.documents.versions.activate / discard)
                outcome = "staged"
                version.status, version.chunk_count = VersionStatus.READY, sum(t.chunk_count for t in siblings)
                version.page_count, version.coverage = page_count, _summed_coverage(siblings)
                doc.message = (f"version {version.number} is built ({version.chunk_count} chunks) and waits for "
                               "review: publish or discard it")
            elif all(t.status == TaskStatus.DONE for t in siblings):
                outcome = "published"
                total = sum(t.chunk_count for t in siblings)
                old_version = doc.active_version_id
                if old_version and old_version != version.id:
                    old = s.get(DocumentVersion, old_version)
                    if old is not None:
                        old.status = VersionStatus.SUPERSEDED
                version.status, version.chunk_count, version.published_at = VersionStatus.READY, total, utcnow()
                version.page_count = page_count
                version.coverage = _summed_coverage(siblings)
                doc.active_version_id = version.id
                doc.chunk_count, doc.coverage = total, version.coverage
                doc.message = f"published {total} chunks{suffix}"
    if outcome == "discard":
        _discard(ctx, job)
    elif outcome == "published" and old_version and old_version != job.version_id:
        # kept for a rollback, hidden from searches; beyond RAGLOOM_KEEP_VERSIONS versions, dropped
        versions.retire(ctx, tenant_id=job.tenant_id, kb_id=job.kb_id, doc_id=job.doc_id, version_id=old_version)
    elif outcome == "staged":  # kept, hidden from searches until it is published
        versions.retire(ctx, tenant_id=job.tenant_id, kb_id=job.kb_id, doc_id=job.doc_id, version_id=job.version_id)
    if outcome == "published":
        _knowledge_follows(ctx, job)
    return outcome == "published"


def _knowledge_follows(ctx: Context, job: Job) -> None:
    """The knowledge built over the document follows its new version
    (:func:`ragloom.service.builds.kinds.on_published`: a RAPTOR branch rebuilt, ...). The version is
    published whatever happens here: a failure to queue that is logged, never turned into a failure of the
    parse."""
    from ragloom.service.builds import kinds

    try:
        kinds.on_published(ctx, job.kb_id, job.doc_id)
    except Exception:
        log.exception("task %s: the document is published, but its knowledge builds could not be queued", job.task_id)


def _summed_coverage(tasks_of_version: list[Task]) -> dict[str, Any] | None:
    parts = [coverage.Coverage.from_dict(t.coverage) for t in tasks_of_version if t.coverage]
    return sum(parts[1:], parts[0]).as_dict() if parts else None


def store_metadata(ctx: Context, job: Job, parsed: ParsedDocument) -> None:
    """Metadata the parser found becomes document metadata (values the user set win)."""
    from ragloom.service.documents.catalog import merge_extracted_metadata

    found = pipeline.extracted_metadata(parsed)
    if found:
        with ctx.db.session() as s:
            merge_extracted_metadata(s, job.doc_id, found)


def store_pages(ctx: Context, job: Job, data: bytes, parsed: ParsedDocument) -> None:
    """Record each parsed page's size and store its preview image in the tenant's namespace; a
    flowing format's version gets its HTML view instead."""
    view = pipeline.html_preview(job, parsed)
    if view is not None:
        key = ctx.objects.put(view.encode("utf-8"), namespace=job.tenant_id)
        with ctx.db.session() as s:
            version = s.get(DocumentVersion, job.version_id)
            if version is not None:
                version.view_key = key
    if not parsed.page_sizes:
        return
    images = {page: ctx.objects.put(png, namespace=job.tenant_id)
              for page, png in pipeline.page_previews(data, job, parsed)}
    with ctx.db.session() as s:
        for page, (width, height) in parsed.page_sizes.items():
            s.merge(VersionPage(version_id=job.version_id, page=page, width=width, height=height,
                                image_key=images.get(page)))


def add_tags(ctx: Context, job: Job, records: list[ChunkRecord]) -> None:
    """Tag features (REFERENCE §5.5) from the knowledge base's tag sets, when it has some."""
    from ragloom.service.search.tags import tag_records

    if job.tag_kb_ids:
        tagged = tag_records(ctx, tenant_id=job.tenant_id, tag_kb_ids=job.tag_kb_ids, topn=job.topn_tags,
                             records=records)
        log.info("task %s: %d of %d chunks tagged", job.task_id, tagged, len(records))
