"""A knowledge base's sources: add (settings validated by the connector), list, read, change, pause and
resume, remove (with the documents they made, unless kept), test the connection, and ask for a sync.

Who may do what follows the knowledge base: anyone who reads it reads its sources (never their
credentials), and whoever may change it (its creator, a workspace owner or admin) changes them.
Another workspace's sources, like its knowledge bases, are "not found".
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ragloom.context import Context, Principal
from ragloom.db import syncs
from ragloom.db.models import Document, KnowledgeBase, Source, SourceItem, SourceSync, utcnow
from ragloom.errors import ConflictError, InvalidRequestError, NotFoundError
from ragloom.ingest.connectors import Connector, ConnectorSpec, SourceError, open_connector
from ragloom.schemas.sources import SourceCreate, SourceFilters, SourceUpdate
from ragloom.service import knowledgebases
from ragloom.service.accounts import access, audit, secrets
from ragloom.states import TaskStatus

MIB = 1024 * 1024


def types() -> list[str]:
    """The source types a source may have: the built-in connectors and the installed plugins'."""
    from ragloom.ingest.connectors import connectors

    return connectors.names


def credentials(ctx: Context, source: Source) -> dict[str, str]:
    """The source's credentials, decrypted."""
    if not source.secret:
        return {}
    value = json.loads(secrets.decrypt(ctx.settings, source.secret))
    return {str(k): str(v) for k, v in value.items()}


def max_bytes(ctx: Context, filters: SourceFilters) -> int:
    """The largest item a source's sync reads: its filter's size, within the server's upload limit."""
    limit = ctx.settings.max_upload_mb * MIB
    return min(limit, int(filters.max_size_mb * MIB)) if filters.max_size_mb is not None else limit


def spec_of(ctx: Context, *, settings: dict[str, Any], creds: dict[str, str], filters: SourceFilters) -> ConnectorSpec:
    s = ctx.settings
    return ConnectorSpec(settings=settings, credentials=creds, roots=tuple(s.source_roots),
                         outbound_allow=tuple(s.outbound_allow), max_bytes=max_bytes(ctx, filters))


def connector(ctx: Context, source: Source) -> Connector:
    """The source's connector, ready to list."""
    return open_connector(source.type, spec_of(ctx, settings=dict(source.settings), creds=credentials(ctx, source),
                                               filters=SourceFilters.model_validate(source.filters or {})))


def _validated(ctx: Context, kind: str, settings: dict[str, Any], creds: dict[str, str],
               filters: SourceFilters) -> dict[str, Any]:
    """The settings as the connector normalises them; ``InvalidRequestError`` when it refuses them."""
    made = open_connector(kind, spec_of(ctx, settings=settings, creds=creds, filters=filters))
    try:
        return made.settings()
    finally:
        made.close()


def _encrypt(ctx: Context, creds: dict[str, str] | None) -> str:
    return secrets.encrypt(ctx.settings, json.dumps(creds, sort_keys=True)) if creds else ""


def add(ctx: Context, session: Session, *, principal: Principal, kb_id: str, spec: SourceCreate) -> Source:
    """A new source of the knowledge base; with a schedule its first sync is due at once."""
    kb = knowledgebases.get_editable(session, principal=principal, kb_id_or_name=kb_id, action="add sources to it")
    if session.scalar(select(Source.id).where(Source.kb_id == kb.id, Source.name == spec.name)):
        raise ConflictError(f"knowledge base {kb.name!r} already has a source named {spec.name!r}")
    settings = _validated(ctx, spec.type, spec.settings, spec.credentials or {}, spec.filters)
    source = Source(tenant_id=kb.tenant_id, kb_id=kb.id, name=spec.name, type=spec.type, settings=settings,
                    secret=_encrypt(ctx, spec.credentials), filters=spec.filters.model_dump(mode="json"),
                    readers=_readers(spec.readers), schedule_minutes=spec.schedule_minutes, paused=spec.paused,
                    created_by=principal.user_id,
                    next_run_at=utcnow() if spec.schedule_minutes is not None else None)
    session.add(source)
    session.flush()
    audit.record_by(session, principal, "source.added", target=f"source:{source.id}",
                    detail=f"{spec.type} source {spec.name} of {kb.name}")
    return source


def _readers(given: list[str]) -> list[str]:
    """A source's readers as stored (``InvalidRequestError`` naming one that is not a user or a group); the
    next sync gives them to its documents."""
    return sorted({access.normalise(r) for r in given})


def _find(session: Session, kb: KnowledgeBase, source_id: str) -> Source:
    source = session.scalar(select(Source).where(Source.kb_id == kb.id,
                                                 (Source.id == source_id) | (Source.name == source_id)))
    if source is None:
        raise NotFoundError(f"source {source_id!r} not found")
    return source


def get(session: Session, *, principal: Principal, kb_id: str, source_id: str) -> Source:
    """A source of a knowledge base the caller reads, by id or name."""
    return _find(session, knowledgebases.get(session, principal=principal, kb_id_or_name=kb_id), source_id)


def get_editable(session: Session, *, principal: Principal, kb_id: str, source_id: str, action: str) -> Source:
    kb = knowledgebases.get_editable(session, principal=principal, kb_id_or_name=kb_id, action=action)
    return _find(session, kb, source_id)


def list_sources(session: Session, *, principal: Principal, kb_id: str) -> list[Source]:
    kb = knowledgebases.get(session, principal=principal, kb_id_or_name=kb_id)
    return list(session.scalars(select(Source).where(Source.kb_id == kb.id).order_by(Source.name)))


def update(ctx: Context, session: Session, *, principal: Principal, kb_id: str, source_id: str,
           spec: SourceUpdate) -> Source:
    """Change a source: what the request gives (``paused`` pauses or resumes it)."""
    source = get_editable(session, principal=principal, kb_id=kb_id, source_id=source_id, action="change its sources")
    given = spec.model_fields_set
    if spec.name is not None and spec.name != source.name:
        if session.scalar(select(Source.id).where(Source.kb_id == source.kb_id, Source.name == spec.name)):
            raise ConflictError(f"this knowledge base already has a source named {spec.name!r}")
        source.name = spec.name
    filters = spec.filters if spec.filters is not None else SourceFilters.model_validate(source.filters or {})
    creds = spec.credentials if spec.credentials is not None else credentials(ctx, source)
    if spec.settings is not None or spec.credentials is not None or spec.filters is not None:
        source.settings = _validated(ctx, source.type, spec.settings if spec.settings is not None
                                     else dict(source.settings), creds, filters)
    if spec.credentials is not None:
        source.secret = _encrypt(ctx, spec.credentials)
    if spec.filters is not None:
        source.filters = spec.filters.model_dump(mode="json")
    if spec.readers is not None:
        source.readers = _readers(spec.readers)
    if "schedule_minutes" in given:
        source.schedule_minutes = spec.schedule_minutes
        source.next_run_at = utcnow() if spec.schedule_minutes is not None else None
    if spec.paused is not None:
        source.paused = spec.paused
        if not spec.paused and source.schedule_minutes is not None and source.next_run_at is None:
            source.next_run_at = utcnow()
    audit.record_by(session, principal, "source.changed", target=f"source:{source.id}",
                    detail="changed: " + ", ".join(sorted(given)))  # which fields, never a value
    session.flush()
    return source


def remove(ctx: Context, session: Session, *, principal: Principal, kb_id: str, source_id: str,
           keep_documents: bool = False) -> None:
    """Remove a source; the documents it made go with it unless ``keep_documents`` (then they stay as
    ordinary documents). Its open sync is cancelled."""
    from ragloom.service.documents.catalog import delete_documents

    source = get_editable(session, principal=principal, kb_id=kb_id, source_id=source_id,
                          action="remove its sources")
    doc_ids = list(session.scalars(select(SourceItem.document_id).where(SourceItem.source_id == source.id)))
    for job in session.scalars(select(SourceSync).where(SourceSync.source_id == source.id,
                                                        SourceSync.status.in_(syncs.OPEN))):
        syncs.request_cancel(session, job)
    audit.record_by(session, principal, "source.removed", target=f"source:{source.id}",
                    detail=f"{source.name}; documents {'kept' if keep_documents else 'deleted'}")
    if doc_ids and not keep_documents:
        delete_documents(ctx, session, principal=principal, kb_id=source.kb_id, doc_ids=doc_ids)
    session.delete(source)
    session.flush()


def check(ctx: Context, session: Session, *, principal: Principal, kb_id: str, source_id: str) -> tuple[bool, str]:
    """Test a source's connection: ``(ok, message)``."""
    source = get_editable(session, principal=principal, kb_id=kb_id, source_id=source_id,
                          action="test its sources")
    try:
        made = connector(ctx, source)
    except InvalidRequestError as exc:
        return False, exc.message
    try:
        return True, made.check()
    except SourceError as exc:
        return False, exc.message
    finally:
        made.close()


def request_sync(session: Session, *, principal: Principal, kb_id: str, source_id: str) -> SourceSync:
    """Queue a sync of the source now (or the one already waiting); paused or not."""
    source = get_editable(session, principal=principal, kb_id=kb_id, source_id=source_id, action="sync its sources")
    return enqueue(session, source, trigger="user", created_by=principal.user_id)


def enqueue(session: Session, source: Source, *, trigger: str, created_by: str | None = None) -> SourceSync:
    """A queued sync of the source, or the one already waiting."""
    waiting = syncs.open_sync(session, source.id, (TaskStatus.QUEUED,))
    if waiting is not None:
        return waiting
    job = SourceSync(tenant_id=source.tenant_id, kb_id=source.kb_id, source_id=source.id, trigger=trigger,
                     created_by=created_by, stats={}, errors=[], message="waiting for a worker")
    session.add(job)
    session.flush()
    return job


def list_syncs(session: Session, *, principal: Principal, kb_id: str, source_id: str, offset: int,
               limit: int) -> tuple[list[SourceSync], int]:
    source = get(session, principal=principal, kb_id=kb_id, source_id=source_id)
    where = SourceSync.source_id == source.id
    total = session.scalar(select(func.count()).select_from(SourceSync).where(where)) or 0
    rows = session.scalars(select(SourceSync).where(where).order_by(SourceSync.created_at.desc(), SourceSync.id)
                           .offset(offset).limit(limit)).all()
    return list(rows), total


def get_sync(session: Session, *, principal: Principal, kb_id: str, source_id: str, sync_id: str) -> SourceSync:
    source = get(session, principal=principal, kb_id=kb_id, source_id=source_id)
    job = session.scalar(select(SourceSync).where(SourceSync.id == sync_id, SourceSync.source_id == source.id))
    if job is None:
        raise NotFoundError(f"sync {sync_id!r} not found")
    return job


def cancel_sync(session: Session, *, principal: Principal, kb_id: str, source_id: str, sync_id: str) -> SourceSync:
    """Cancel a sync: a queued one at once, a running one after the item it is at (what it did stays)."""
    source = get_editable(session, principal=principal, kb_id=kb_id, source_id=source_id, action="sync its sources")
    job = get_sync(session, principal=principal, kb_id=source.kb_id, source_id=source.id, sync_id=sync_id)
    syncs.request_cancel(session, job)
    session.flush()
    return job


def document_counts(session: Session, source_ids: list[str]) -> dict[str, int]:
    if not source_ids:
        return {}
    rows = session.execute(select(SourceItem.source_id, func.count()).where(SourceItem.source_id.in_(source_ids))
                           .group_by(SourceItem.source_id))
    return {sid: n for sid, n in rows}


def latest_syncs(session: Session, source_ids: list[str]) -> dict[str, SourceSync]:
    out: dict[str, SourceSync] = {}
    if not source_ids:
        return out
    for job in session.scalars(select(SourceSync).where(SourceSync.source_id.in_(source_ids))
                               .order_by(SourceSync.created_at)):
        out[job.source_id] = job  # the newest last
    return out


def due(session: Session, *, now: Any = None) -> list[Source]:
    """Sources whose scheduled sync is due: a schedule, not paused, ``next_run_at`` passed."""
    now = now or utcnow()
    return list(session.scalars(select(Source).where(Source.schedule_minutes.is_not(None), Source.paused.is_(False),
                                                     Source.next_run_at.is_not(None), Source.next_run_at <= now)
                                .order_by(Source.next_run_at).limit(100)))


def next_run(source: Source, *, now: Any = None) -> Any:
    assert source.schedule_minutes is not None
    return (now or utcnow()) + timedelta(minutes=source.schedule_minutes)


def documents_of(session: Session, source_id: str) -> list[Document]:
    return list(session.scalars(select(Document).join(SourceItem, SourceItem.document_id == Document.id)
                                .where(SourceItem.source_id == source_id).order_by(Document.name)))
