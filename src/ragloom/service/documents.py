"""Documents and their versions: upload, list, delete, re-parse, cancel."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ragloom.db.models import Document, DocumentVersion, KnowledgeBase, Task, utcnow
from ragloom.docstore.base import Filters
from ragloom.errors import InvalidRequestError, NotFoundError
from ragloom.service import knowledgebases
from ragloom.service.context import Context, Principal

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Upload:
    filename: str
    data: bytes
    content_type: str = ""


def _clean_name(name: str) -> str:
    base = name.replace("\\", "/").rsplit("/", 1)[-1].strip()
    if not base or base in (".", ".."):
        raise InvalidRequestError(f"invalid file name {name!r}")
    return base[:512]


def add_documents(
    ctx: Context, session: Session, *, principal: Principal, kb_id: str, uploads: list[Upload]
) -> list[Document]:
    """Store each file, create Document + Version + Task rows, return at once.

    A file whose name already exists in the knowledge base becomes a new version
    of that document (unless its content equals the latest version's). Readers
    keep seeing the active version until the new one is published.
    """
    kb = knowledgebases.get(session, principal=principal, kb_id_or_name=kb_id)
    if not uploads:
        raise InvalidRequestError("no files in the request")
    limit = ctx.settings.max_upload_mb * 1024 * 1024
    docs = []
    for up in uploads:
        name = _clean_name(up.filename)
        if len(up.data) > limit:
            raise InvalidRequestError(f"{name}: file is larger than {ctx.settings.max_upload_mb} MiB")
        key = ctx.objects.put(up.data)
        doc = session.scalar(select(Document).where(Document.kb_id == kb.id, Document.name == name))
        if doc is None:
            doc = Document(kb_id=kb.id, tenant_id=kb.tenant_id, name=name)
            session.add(doc)
            session.flush()
        else:
            latest = session.get(DocumentVersion, doc.latest_version_id) if doc.latest_version_id else None
            if latest is not None and latest.content_hash == key and latest.status in ("ready", "building"):
                docs.append(doc)
                continue
        _new_version(session, kb=kb, doc=doc, content_hash=key, size=len(up.data), content_type=up.content_type)
        docs.append(doc)
    session.flush()
    return docs


def _new_version(
    session: Session, *, kb: KnowledgeBase, doc: Document, content_hash: str, size: int, content_type: str
) -> DocumentVersion:
    number = (
        session.scalar(select(func.max(DocumentVersion.number)).where(DocumentVersion.document_id == doc.id)) or 0
    ) + 1
    version = DocumentVersion(
        document_id=doc.id,
        number=number,
        content_hash=content_hash,
        size=size,
        content_type=content_type,
        chunk_method=kb.chunk_method,
        parser_config=dict(kb.parser_config or {}),
    )
    session.add(version)
    session.flush()
    doc.latest_version_id = version.id
    doc.status, doc.progress, doc.message = "queued", 0.0, "waiting for a worker"
    session.add(Task(tenant_id=kb.tenant_id, kb_id=kb.id, document_id=doc.id, version_id=version.id))
    return version


def reparse(ctx: Context, session: Session, *, principal: Principal, kb_id: str, doc_id: str) -> Document:
    """Build a new version of a document from its latest file with the KB's current settings."""
    kb = knowledgebases.get(session, principal=principal, kb_id_or_name=kb_id)
    doc = get(session, principal=principal, kb_id=kb.id, doc_id=doc_id)
    latest = session.get(DocumentVersion, doc.latest_version_id)
    assert latest is not None
    _cancel_open_tasks(session, doc)
    _new_version(session, kb=kb, doc=doc, content_hash=latest.content_hash, size=latest.size,
                 content_type=latest.content_type)
    return doc


def list_documents(
    session: Session, *, principal: Principal, kb_id: str, offset: int = 0, limit: int = 100
) -> tuple[list[Document], int]:
    kb = knowledgebases.get(session, principal=principal, kb_id_or_name=kb_id)
    total = session.scalar(select(func.count()).select_from(Document).where(Document.kb_id == kb.id)) or 0
    rows = session.scalars(
        select(Document).where(Document.kb_id == kb.id).order_by(Document.created_at, Document.name)
        .offset(offset).limit(limit)
    )
    return list(rows), total


def get(session: Session, *, principal: Principal, kb_id: str, doc_id: str) -> Document:
    kb = knowledgebases.get(session, principal=principal, kb_id_or_name=kb_id)
    doc = session.scalar(
        select(Document).where(Document.kb_id == kb.id, (Document.id == doc_id) | (Document.name == doc_id))
    )
    if doc is None:
        raise NotFoundError(f"document {doc_id!r} not found")
    return doc


def _cancel_open_tasks(session: Session, doc: Document) -> None:
    for task in session.scalars(select(Task).where(Task.document_id == doc.id, Task.status.in_(("queued", "running")))):
        if task.status == "queued":
            task.status, task.finished_at, task.message = "cancelled", utcnow(), "superseded"
        else:
            task.cancel_requested = True


def cancel(session: Session, *, principal: Principal, kb_id: str, doc_id: str) -> Document:
    """Stop the document's pending processing; the active version stays searchable."""
    doc = get(session, principal=principal, kb_id=kb_id, doc_id=doc_id)
    _cancel_open_tasks(session, doc)
    if doc.status in ("queued", "running"):
        doc.status, doc.message = "cancelled", "cancelled by user"
        version = session.get(DocumentVersion, doc.latest_version_id)
        if version is not None and version.status == "building":
            version.status = "cancelled"
    return doc


def delete_documents(
    ctx: Context, session: Session, *, principal: Principal, kb_id: str, doc_ids: list[str]
) -> int:
    """Delete documents (metadata rows first, then their chunks). Unknown ids are a 404."""
    kb = knowledgebases.get(session, principal=principal, kb_id_or_name=kb_id)
    docs = [get(session, principal=principal, kb_id=kb.id, doc_id=d) for d in doc_ids]
    for doc in docs:
        _cancel_open_tasks(session, doc)
        session.delete(doc)
    session.flush()
    if docs:
        ctx.docstore.delete(kb.tenant_id, Filters(kb_ids=[kb.id], doc_ids=[d.id for d in docs]))
    return len(docs)
