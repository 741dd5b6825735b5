"""What a kind of knowledge build is (:class:`BuildKind`), what it runs with (:class:`BuildJob`), what
it reports before it starts (:class:`Estimate`), and how a build is queued (:func:`enqueue`).

:mod:`ragloom.service.builds.kinds` lists the kinds and tells them about documents published and deleted;
:mod:`ragloom.service.builds.lifecycle` holds the use cases and runs builds; a kind's module
(:mod:`ragloom.service.builds.raptor`) imports only this one."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy import select
from sqlalchemy.orm import Session

from ragloom.context import Context
from ragloom.db import builds as queue
from ragloom.db.models import Document, DocumentVersion, KnowledgeBase, KnowledgeBuild, KnowledgePart
from ragloom.errors import TaskCancelledError
from ragloom.ingest.guard import checkpoint


@dataclass(slots=True)
class Estimate:
    """What a build would cost before it starts (the API shows it as ``BuildEstimate``, whose fields
    describe each of these)."""

    kind: str
    mode: str
    model: str | None
    documents: int
    documents_to_build: int
    llm_calls: int
    llm_calls_cached: int
    prompt_tokens: int
    completion_tokens: int
    note: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class BuildJob:
    """A claimed build as its kind runs it: what to build, where to report, what it did so far."""

    ctx: Context
    build_id: str
    tenant_id: str
    kb_id: str
    document_id: str | None
    kind: str
    stats: dict[str, Any] = field(default_factory=dict)
    stored: int = 0  # rows this run stored (a run out of time that stored some goes back to the queue)
    current: Any = None  # what the kind is building now (its discard() uses it)
    _last: float = 0.0

    def knowledge_base(self) -> KnowledgeBase:
        """The knowledge base built over; a deleted one ends the build (:class:`TaskCancelledError`)."""
        with self.ctx.db.session() as s:
            kb = s.get(KnowledgeBase, self.kb_id)
        if kb is None:
            raise TaskCancelledError("the dataset was deleted")
        return kb

    def progress(self, stage: str, fraction: float, message: str, *, force: bool = False) -> None:
        """Report a stage's progress; raises at a checkpoint (cancel, limits, the worker stopping)."""
        checkpoint()
        now = time.monotonic()
        if not force and now - self._last < 0.5:
            return
        self._last = now
        with self.ctx.db.session() as s:
            alive = queue.report(s, self.build_id, progress=fraction, message=message, stage=stage,
                                 stats=self.stats)
        if not alive:
            raise TaskCancelledError("cancelled by user")


class BuildKind(Protocol):
    """One kind of knowledge build: ``estimate`` a build before it starts; ``run`` it, reporting stages
    through the :class:`BuildJob`, resumable from what it stored; ``discard`` what an unfinished run
    stored (cancelled, or failed for good); ``on_published`` / ``on_deleted``: keep its part of the
    knowledge base in step with the documents (rebuild a branch, drop a deleted document's share);
    ``drop`` all it built over a knowledge base."""

    name: str

    def estimate(self, ctx: Context, kb: KnowledgeBase, document_id: str | None) -> Estimate: ...

    def run(self, job: BuildJob) -> str: ...

    def discard(self, job: BuildJob) -> None: ...

    def on_published(self, ctx: Context, kb: KnowledgeBase, doc_id: str) -> None: ...

    def on_deleted(self, ctx: Context, session: Session, kb: KnowledgeBase, doc_ids: Sequence[str]) -> None:
        """Called in the deleting request's ``session`` (its rows are deleted in it)."""
        ...

    def drop(self, ctx: Context, session: Session, kb: KnowledgeBase) -> int:
        """Remove all this kind built over the knowledge base (its search-store rows and its parts, in
        ``session``); returns how many rows (summaries) or entities (graph) went."""
        ...



def enqueue(session: Session, kb: KnowledgeBase, *, kind: str, document_id: str | None, trigger: str,
            created_by: str | None = None, estimate: dict[str, Any] | None = None) -> KnowledgeBuild:
    """A queued build of ``kind`` for the document (None: the dataset), or the one already waiting that
    covers it."""
    waiting = queue.open_build(session, kb_id=kb.id, kind=kind, document_id=document_id)
    if waiting is not None and (waiting.document_id == document_id or waiting.document_id is None):
        return waiting
    row = KnowledgeBuild(tenant_id=kb.tenant_id, kb_id=kb.id, document_id=document_id, kind=kind, trigger=trigger,
                         created_by=created_by, estimate=estimate, stats={}, message="waiting for a worker")
    session.add(row)
    session.flush()
    return row


@dataclass(frozen=True, slots=True)
class DocumentPart:
    """A document a build considers: its published version, and whether the part a build of this kind
    stored for it is current (built from this version with this recipe)."""

    doc_id: str
    version_id: str
    name: str
    current: bool


def document_parts(ctx: Context, *, kb_id: str, kind: str, recipe: str, document_id: str | None,
                   skipped_methods: Sequence[str]) -> list[DocumentPart]:
    """The knowledge base's documents with a published version (or only ``document_id``), oldest first,
    but those of ``skipped_methods``; each marked current when its stored ``kind`` part is."""
    with ctx.db.session() as s:
        query = (select(Document.id, Document.active_version_id, Document.name, DocumentVersion.chunk_method)
                 .join(DocumentVersion, DocumentVersion.id == Document.active_version_id)
                 .where(Document.kb_id == kb_id).order_by(Document.created_at, Document.name))
        if document_id is not None:
            query = query.where(Document.id == document_id)
        rows = s.execute(query).all()
        parts = {p.scope: p for p in s.scalars(select(KnowledgePart).where(KnowledgePart.kb_id == kb_id,
                                                                          KnowledgePart.kind == kind))}
    out = []
    for doc_id, version_id, name, method in rows:
        if method in skipped_methods or version_id is None:
            continue
        part = parts.get(doc_id)
        current = part is not None and part.version_id == version_id and part.recipe == recipe
        out.append(DocumentPart(doc_id, version_id, name, current))
    return out
