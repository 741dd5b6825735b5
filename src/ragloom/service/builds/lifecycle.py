"""Knowledge builds: start (with a cost estimate first), list, read, cancel, run.

A build is a row of ``knowledge_build`` (:mod:`ragloom.db.builds` is its queue) that a worker runs like
an ingestion task, under the same guard (cancel, wall time, memory, the worker stopping). What a kind
of build does is a :class:`~ragloom.service.builds.jobs.BuildKind` in
:data:`ragloom.service.builds.kinds.BUILD_KINDS` (``raptor``: :mod:`ragloom.service.builds.raptor`; the
knowledge graph and chunk enrichment are added there the same way). A kind:

* ``estimate``\\ s a build before it starts (chat-model calls and tokens),
* ``run``\\ s it, reporting stages through a :class:`BuildJob`, resumable from what it stored,
* ``discard``\\ s what an unfinished run stored when the build is cancelled or fails for good,
* hears when a document is published or deleted (``on_published``, ``on_deleted``) to keep its part of
  the knowledge base in step: rebuild a branch, drop a deleted document's contribution.

How a run ends (:func:`run_build`): done; cancelled (what it stored unfinished is discarded); a model or
store failure is retried with back-off (the next run resumes from what is stored and from the LLM
cache); out of wall time after storing something, it goes back to the queue without counting the
attempt; anything else fails it.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Sequence
from dataclasses import asdict
from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ragloom.context import Context, Principal
from ragloom.db import builds as queue
from ragloom.db.models import Document, KnowledgeBase, KnowledgeBuild
from ragloom.errors import (
    ConflictError,
    InvalidRequestError,
    LimitExceededError,
    ModelError,
    NotFoundError,
    StoreError,
    TaskCancelledError,
    TaskInterruptedError,
)
from ragloom.schemas.builds import BuildEstimate, BuildRequest, BuildsStarted, KnowledgeDropped
from ragloom.service import knowledgebases
from ragloom.service.builds.jobs import BuildJob, Estimate, enqueue
from ragloom.service.builds.kinds import kind_of, kinds
from ragloom.service.builds.views import build_view
from ragloom.states import RunOutcome, TaskStatus

log = logging.getLogger(__name__)

RETRY_SECONDS = 5.0  # the first retry's pause after a model or store failure; doubled at each attempt


# --- use cases -----------------------------------------------------------------------------------------

def _documents(session: Session, kb: KnowledgeBase, refs: Sequence[str]) -> list[Document]:
    docs = []
    for ref in dict.fromkeys(refs):
        doc = session.scalar(select(Document).where(Document.kb_id == kb.id,
                                                    (Document.id == ref) | (Document.name == ref)))
        if doc is None:
            raise NotFoundError(f"document {ref!r} not found")
        docs.append(doc)
    return docs


def start(ctx: Context, *, principal: Principal, kb_id: str, request: BuildRequest) -> BuildsStarted:
    """Estimate, then (unless ``dry_run``) queue one build for the dataset or one per document named. A
    build already waiting for the same part is reused, not queued twice."""
    with ctx.db.session() as s:
        kb = knowledgebases.get_editable(s, principal=principal, kb_id_or_name=kb_id, action="build knowledge over it")
        doc_ids: list[str | None] = ([d.id for d in _documents(s, kb, request.document_ids)]
                                     if request.document_ids is not None else [None])
        if request.document_ids is not None and not doc_ids:
            raise InvalidRequestError("document_ids: name at least one document, or leave it out for all")
    kind = kind_of(request.kind)
    estimates = [estimate_view(kind.estimate(ctx, kb, d)) for d in doc_ids]
    estimate = estimates[0] if len(estimates) == 1 else _sum(estimates)
    if request.dry_run:
        return BuildsStarted(dry_run=True, builds=[], estimate=estimate)
    with ctx.db.session() as s:
        rows = [enqueue(s, kb, kind=kind.name, document_id=d, trigger="user", created_by=principal.user_id,
                        estimate=e.model_dump(mode="json")) for d, e in zip(doc_ids, estimates, strict=True)]
        return BuildsStarted(dry_run=False, builds=[build_view(r) for r in dict.fromkeys(rows)], estimate=estimate)


def estimate_view(e: Estimate) -> BuildEstimate:
    return BuildEstimate.model_validate(asdict(e))


def _sum(estimates: list[BuildEstimate]) -> BuildEstimate:
    first = estimates[0]
    totals = {k: sum(getattr(e, k) for e in estimates) for k in ("documents", "documents_to_build", "llm_calls",
                                                                 "llm_calls_cached", "prompt_tokens",
                                                                 "completion_tokens")}
    return first.model_copy(update={**totals, "details": {"per_document": [e.details for e in estimates]}})


def list_builds(session: Session, *, principal: Principal, kb_id: str, kind: str | None = None,
                status: str | None = None, offset: int = 0, limit: int = 50) -> tuple[list[KnowledgeBuild], int]:
    """A dataset's builds, newest first."""
    kb = knowledgebases.get(session, principal=principal, kb_id_or_name=kb_id)
    where = [KnowledgeBuild.kb_id == kb.id]
    if kind:
        where.append(KnowledgeBuild.kind == kind_of(kind).name)
    if status:
        if status not in set(TaskStatus):
            raise InvalidRequestError(f"status must be one of {', '.join(TaskStatus)}, not {status!r}")
        where.append(KnowledgeBuild.status == status)
    total = session.scalar(select(func.count()).select_from(KnowledgeBuild).where(*where)) or 0
    rows = session.scalars(select(KnowledgeBuild).where(*where)
                           .order_by(KnowledgeBuild.created_at.desc(), KnowledgeBuild.id).offset(offset).limit(limit))
    return list(rows), total


def get_build(session: Session, *, principal: Principal, kb_id: str, build_id: str) -> KnowledgeBuild:
    kb = knowledgebases.get(session, principal=principal, kb_id_or_name=kb_id)
    row = session.get(KnowledgeBuild, build_id)
    if row is None or row.kb_id != kb.id:
        raise NotFoundError(f"build {build_id!r} not found")
    return row


def cancel(session: Session, *, principal: Principal, kb_id: str, build_id: str) -> KnowledgeBuild:
    """Cancel a build: a queued one at once, a running one at its next checkpoint (what it stored
    unfinished is then deleted). A finished build stays as it is."""
    knowledgebases.get_editable(session, principal=principal, kb_id_or_name=kb_id, action="cancel its builds")
    row = get_build(session, principal=principal, kb_id=kb_id, build_id=build_id)
    queue.request_cancel(session, row)
    return row


def drop(ctx: Context, *, principal: Principal, kb_id: str, kind: str) -> KnowledgeDropped:
    """Delete all a kind of build made over the knowledge base (every RAPTOR summary, or the knowledge
    graph): searches stop finding it at once. Refused while a build of that kind waits or runs (cancel it
    first: it would publish again). The settings stay as they are: a knowledge base that builds on each
    new version (``use_raptor``, ``use_graphrag``) builds again when a document changes."""
    with ctx.db.session() as s:
        kb = knowledgebases.get_editable(s, principal=principal, kb_id_or_name=kb_id,
                                         action="delete knowledge built over it")  # another's dataset: 404 first
        found = kind_of(kind)
        busy = s.scalars(select(KnowledgeBuild).where(
            KnowledgeBuild.kb_id == kb.id, KnowledgeBuild.kind == found.name,
            KnowledgeBuild.status.in_((TaskStatus.QUEUED, TaskStatus.RUNNING))).limit(1)).first()
        if busy is not None:
            raise ConflictError(f"a {found.name} build of {kb.name!r} is {busy.status} ({busy.id}): cancel it "
                                "first, or wait until it ends")
        removed = found.drop(ctx, s, kb)
        log.info("%s knowledge of %s deleted: %d", found.name, kb.id, removed)
        return KnowledgeDropped(kind=found.name, removed=removed)


# --- running a claimed build -----------------------------------------------------------------------

def load(ctx: Context, build_id: str) -> BuildJob | None:
    with ctx.db.session() as s:
        row = s.get(KnowledgeBuild, build_id)
        if row is None:
            return None
        return BuildJob(ctx, row.id, row.tenant_id, row.kb_id, row.document_id, row.kind, stats=dict(row.stats or {}))


def run_build(ctx: Context, build_id: str) -> RunOutcome:
    """Run one claimed build to its end; returns how the run ended."""
    job = load(ctx, build_id)
    if job is None:
        return RunOutcome.CANCELLED  # its knowledge base or document was deleted meanwhile
    try:
        kind = kind_of(job.kind)
        job.progress("starting", 0.0, "starting", force=True)
        message = kind.run(job)
    except Exception as exc:
        return _settle(ctx, job, exc)
    with ctx.db.session() as s:
        queue.finish(s, build_id, message=message, stats=job.stats)
    return RunOutcome.DONE


def _settle(ctx: Context, job: BuildJob, exc: Exception) -> RunOutcome:
    """What a build becomes after ``exc`` (see the module docstring)."""
    kind = kinds().get(job.kind)
    max_attempts = ctx.settings.task_max_retries
    with ctx.db.session() as s:
        row = s.get(KnowledgeBuild, job.build_id)
        attempts = row.attempts if row is not None else 0
    if isinstance(exc, TaskInterruptedError):
        with ctx.db.session() as s:
            queue.hand_back(s, job.build_id, message=f"{exc.message} (resumes from what is stored)")
        return RunOutcome.INTERRUPTED
    if isinstance(exc, TaskCancelledError):
        if kind is not None:
            kind.discard(job)
        with ctx.db.session() as s:
            queue.mark_cancelled(s, job.build_id, stats=job.stats)
        return RunOutcome.CANCELLED
    if isinstance(exc, LimitExceededError) and job.stored:
        with ctx.db.session() as s:
            queue.hand_back(s, job.build_id, message=f"{exc.message}; {job.stored} rows stored, the next run goes "
                                                     "on from there")
        return RunOutcome.RETRY
    if isinstance(exc, ModelError | StoreError):
        log.warning("build %s: transient failure: %s", job.build_id, exc.message)
        pause = timedelta(seconds=RETRY_SECONDS * 2 ** max(0, attempts - 1))
        with ctx.db.session() as s:
            retried = queue.fail(s, job.build_id, reason=exc.message, retry_in=pause, max_attempts=max_attempts,
                                 stats=job.stats)
        if retried:
            return RunOutcome.RETRY
    else:
        reason = exc.message if isinstance(exc, InvalidRequestError | LimitExceededError) else \
            f"internal error: {type(exc).__name__}: {exc}"
        if not isinstance(exc, InvalidRequestError | LimitExceededError):
            log.error("build %s crashed:\n%s", job.build_id,
                      "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
        with ctx.db.session() as s:
            queue.fail(s, job.build_id, reason=reason, stats=job.stats)
    if kind is not None:
        kind.discard(job)
    return RunOutcome.FAILED
