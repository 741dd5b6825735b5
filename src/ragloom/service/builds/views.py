"""The builder of a knowledge build's view: a stored build with its progress and cost, as
:class:`ragloom.schemas.builds.Build` (the conventions of :mod:`ragloom.service.views`)."""

from __future__ import annotations

from ragloom.db import models as db
from ragloom.schemas.base import iso_utc
from ragloom.schemas.builds import Build, BuildEstimate


def build_view(row: db.KnowledgeBuild) -> Build:
    return Build(
        id=row.id, kb_id=row.kb_id, document_id=row.document_id, kind=row.kind, trigger=row.trigger,
        status=row.status, stage=row.stage, progress=round(row.progress, 4), message=row.message,
        attempts=row.attempts, estimate=BuildEstimate.model_validate(row.estimate) if row.estimate else None,
        stats=dict(row.stats or {}), created_by=row.created_by, created_at=iso_utc(row.created_at),
        started_at=iso_utc(row.started_at), finished_at=iso_utc(row.finished_at),
    )
