"""What the sources' tests share: a knowledge base, a source, a sync run by the worker's own code."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from sqlalchemy import select

from ragloom.context import Context, Principal
from ragloom.db.models import Document, DocumentVersion, SourceSync
from ragloom.schemas.datasets import KBCreate
from ragloom.schemas.sources import SourceCreate
from ragloom.service import knowledgebases
from ragloom.service.sources import manage
from ragloom.worker import run_one_sync


def make_kb(ctx: Context, principal: Principal, name: str = "kb") -> str:
    with ctx.db.session() as s:
        return knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(name=name)).id


def add_source(ctx: Context, principal: Principal, kb_id: str, **fields: Any) -> str:
    spec = SourceCreate.model_validate({"name": "src", **fields})
    with ctx.db.session() as s:
        return manage.add(ctx, s, principal=principal, kb_id=kb_id, spec=spec).id


def sync(ctx: Context, principal: Principal, kb_id: str, source_id: str) -> SourceSync:
    """Ask for a sync and run it as a worker does; the finished sync."""
    with ctx.db.session() as s:
        job_id = manage.request_sync(s, principal=principal, kb_id=kb_id, source_id=source_id).id
    assert run_one_sync(ctx, "test-worker") == job_id
    with ctx.db.session() as s:
        job = s.get(SourceSync, job_id)
        assert job is not None
        return job


def documents(ctx: Context, kb_id: str) -> dict[str, Document]:
    with ctx.db.session() as s:
        return {d.name: d for d in s.scalars(select(Document).where(Document.kb_id == kb_id))}


def version_count(ctx: Context, doc_id: str) -> int:
    with ctx.db.session() as s:
        return len(list(s.scalars(select(DocumentVersion.id).where(DocumentVersion.document_id == doc_id))))


def write(path: Path, text: str, *, later: bool = True) -> Path:
    """Write a file; ``later``: with a modification time a second after its last (a change a listing sees
    even when the size is the same and the clock's resolution coarse)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.stat().st_mtime if path.exists() else time.time() - 10
    path.write_text(text)
    if later:
        os.utime(path, (old + 1, old + 1))
    return path
