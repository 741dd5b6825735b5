"""A source and its syncs as the API shows them (:mod:`ragloom.schemas.sources`): never its credentials."""

from __future__ import annotations

from sqlalchemy.orm import Session

from ragloom.db.models import Source as SourceRow
from ragloom.db.models import SourceSync
from ragloom.schemas.base import iso_utc
from ragloom.schemas.sources import Source, SourceFilters, Sync, SyncError, SyncStats
from ragloom.service.sources import manage


def sync_view(job: SourceSync) -> Sync:
    stats = {k: int(v) for k, v in (job.stats or {}).items() if k in SyncStats.model_fields}
    return Sync(id=job.id, source_id=job.source_id, dataset_id=job.kb_id, trigger=job.trigger, status=job.status,
                stage=job.stage, progress=job.progress, message=job.message, stats=SyncStats(**stats),
                errors=[SyncError(item=str(e.get("item", "")), message=str(e.get("message", "")))
                        for e in (job.errors or [])],
                attempts=job.attempts, created_at=iso_utc(job.created_at) or "", started_at=iso_utc(job.started_at),
                finished_at=iso_utc(job.finished_at))


def source_view(row: SourceRow, *, documents: int, last: SourceSync | None) -> Source:
    return Source(id=row.id, dataset_id=row.kb_id, name=row.name, type=row.type, settings=dict(row.settings or {}),
                  has_credentials=bool(row.secret), filters=SourceFilters.model_validate(row.filters or {}),
                  readers=list(row.readers or []), schedule_minutes=row.schedule_minutes, paused=row.paused,
                  next_run_at=iso_utc(row.next_run_at),
                  last_synced_at=iso_utc(row.last_synced_at), last_sync=sync_view(last) if last else None,
                  documents=documents, created_at=iso_utc(row.created_at) or "",
                  updated_at=iso_utc(row.updated_at) or "")


def source_views(session: Session, rows: list[SourceRow]) -> list[Source]:
    """Views of several sources, their document counts and latest syncs read in two queries."""
    ids = [r.id for r in rows]
    counts, latest = manage.document_counts(session, ids), manage.latest_syncs(session, ids)
    return [source_view(r, documents=counts.get(r.id, 0), last=latest.get(r.id)) for r in rows]


def one_source_view(session: Session, row: SourceRow) -> Source:
    return source_views(session, [row])[0]
