"""Documents and their versions: upload, list, delete, re-parse, cancel."""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from ragloom.context import Context, Principal
from ragloom.db.models import Document, DocumentVersion, KnowledgeBase, Task, VersionFigure, utcnow
from ragloom.docstore.base import Filters
from ragloom.errors import ConflictError, InvalidRequestError, NotFoundError, PayloadTooLargeError
from ragloom.service import knowledgebases
from ragloom.service.accounts import access, audit
from ragloom.service.documents.uploads import Spooled
from ragloom.states import DocumentStatus, Role, TaskStatus, VersionReason, VersionStatus

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Upload:
    """One file to add: its bytes, or (``spooled``) a file the API received to disk, already hashed,
    which is moved into the object store as it is (never read into memory)."""

    filename: str
    data: bytes = b""
    content_type: str = ""
    spooled: Spooled | None = None

    @property
    def size(self) -> int:
        return self.spooled.size if self.spooled is not None else len(self.data)

    @property
    def sha256(self) -> str:
        return self.spooled.sha256 if self.spooled is not None else hashlib.sha256(self.data).hexdigest()

    @property
    def content(self) -> bytes | Path:
        """The bytes, or the spooled file's path."""
        return self.spooled.path if self.spooled is not None else self.data

    def store(self, ctx: Context, namespace: str) -> str:
        """Put the file into the object store (a spooled one is moved there); its key."""
        if self.spooled is not None:
            return ctx.objects.put_file(self.spooled.path, namespace=namespace, sha256=self.spooled.sha256,
                                        move=True)
        return ctx.objects.put(self.data, namespace=namespace)


def _clean_name(name: str) -> str:
    from ragloom.schemas.names import normalize_filename

    return normalize_filename(name)


def numbered_name(session: Session, kb_id: str, name: str) -> str:
    """``name``, or the first of ``stem(1).ext``, ``stem(2).ext``... that no document of the knowledge base
    has (a name that ends in ``(n)`` counts on from n), as RAGFlow names a second upload of a file."""
    taken = set(session.scalars(select(Document.name).where(Document.kb_id == kb_id)))
    stem, dot, ext = name.rpartition(".") if "." in name.lstrip(".") else (name, "", "")
    numbered = re.fullmatch(r"(.*)\((\d+)\)", stem)
    base, n = (numbered.group(1), int(numbered.group(2))) if numbered else (stem, 0)
    while name in taken:
        n += 1
        name = f"{base}({n}){dot}{ext}"
    return name


def add_documents(
    ctx: Context, session: Session, *, principal: Principal, kb_id: str, uploads: list[Upload],
    chunk_method: str | None = None, parser_config: dict[str, Any] | None = None, stage: bool = False,
    number_taken_names: bool = False, hold: bool = False,
) -> list[Document]:
    """Store each file, create Document + Version + Task rows, return at once.

    A file whose name already exists in the knowledge base becomes a new version
    of that document (unless its content equals the latest version's); with ``number_taken_names``
    it becomes a new document named as :func:`numbered_name` says instead. Readers
    keep seeing the active version until the new one is published: when built, or with ``stage``
    when a reviewer publishes it (:func:`ragloom.service.documents.versions.activate`). With ``hold``
    a new version waits, unparsed, until :func:`start` (or a re-parse) asks for it: RAGFlow's ``UNSTART``.
    """
    kb = knowledgebases.get_editable(session, principal=principal, kb_id_or_name=kb_id, action="add documents to it")
    if not uploads:
        raise InvalidRequestError("no files in the request")
    if parser_config is not None and chunk_method is None:
        chunk_method = kb.chunk_method  # parameters for these files alone: with the knowledge base's method
    if chunk_method is not None:
        knowledgebases.validate_chunking(chunk_method, parser_config or {})
    limit = ctx.settings.max_upload_mb * 1024 * 1024
    docs = []
    for up in uploads:
        name = _clean_name(up.filename)
        if number_taken_names:
            name = numbered_name(session, kb.id, name)
        if up.size > limit:
            raise PayloadTooLargeError(f"{name!r} is larger than the limit of {ctx.settings.max_upload_mb} MiB per "
                                       "file (RAGLOOM_MAX_UPLOAD_MB)")
        content_hash = up.sha256
        doc = session.scalar(select(Document).where(Document.kb_id == kb.id, Document.name == name))
        if doc is None:
            doc = Document(kb_id=kb.id, tenant_id=kb.tenant_id, name=name)
            session.add(doc)
            session.flush()
        if chunk_method is not None:
            doc.chunk_method, doc.parser_config = chunk_method, dict(parser_config or {})
        else:
            latest = session.get(DocumentVersion, doc.latest_version_id) if doc.latest_version_id else None
            live = (VersionStatus.READY, VersionStatus.BUILDING)
            if latest is not None and latest.content_hash == content_hash and latest.status in live:
                docs.append(doc)
                continue
        ranges = page_ranges(up.content, name, *_method_and_config(kb, doc), max_pages=ctx.settings.max_pages,
                             count_pages=isolated_page_count(ctx))  # before a spooled file moves into the store
        key = up.store(ctx, kb.tenant_id)  # "<tenant>/<sha256>": no cross-tenant dedupe
        _new_version(session, kb=kb, doc=doc, content_hash=content_hash, object_key=key, size=up.size,
                     content_type=up.content_type, page_ranges=[] if hold else ranges, created_by=principal.user_id,
                     stage=stage)
        if hold:
            doc.message = HELD_MESSAGE
        docs.append(doc)
    session.flush()
    return docs


def replace_file(ctx: Context, session: Session, *, principal: Principal, kb_id: str, doc_id: str,
                 upload: Upload, stage: bool = False) -> Document:
    """New content for an existing document (by id or name), keeping its id, metadata, chunk edits and
    history: a new version of it, published when built (readers keep the active one until then). The
    file keeps the document's name; content equal to the latest version's, built or building, makes none.
    With ``stage`` the new version waits, built, for a reviewer to publish or discard it."""
    kb = knowledgebases.get_editable(session, principal=principal, kb_id_or_name=kb_id, action="add documents to it")
    doc = get(session, principal=principal, kb_id=kb.id, doc_id=doc_id)
    if upload.size > ctx.settings.max_upload_mb * 1024 * 1024:
        raise PayloadTooLargeError(f"the file is larger than the limit of {ctx.settings.max_upload_mb} MiB per "
                                   "file (RAGLOOM_MAX_UPLOAD_MB)")
    latest = session.get(DocumentVersion, doc.latest_version_id) if doc.latest_version_id else None
    if latest is not None and latest.content_hash == upload.sha256 and latest.status in (
            VersionStatus.READY, VersionStatus.BUILDING):
        return doc
    cancel_open_tasks(session, doc)  # the build of older content is of no use any more
    ranges = page_ranges(upload.content, doc.name, *_method_and_config(kb, doc), max_pages=ctx.settings.max_pages,
                         count_pages=isolated_page_count(ctx))
    key = upload.store(ctx, kb.tenant_id)
    _new_version(session, kb=kb, doc=doc, content_hash=upload.sha256, object_key=key, size=upload.size,
                 content_type=upload.content_type, page_ranges=ranges, created_by=principal.user_id, stage=stage)
    audit.record_by(session, principal, "document.replaced", target=f"document:{doc.id}",
                    detail=f"{doc.name} in {kb.name}")
    session.flush()
    return doc


TASK_PAGE_SIZE = 12  # pages per parsing task of a PDF (REFERENCE §11)
WHOLE = (0, 100_000_000)  # a task over the whole document


def page_ranges(content: bytes | Path, filename: str, method: str, parser_config: dict[str, Any], *,
                max_pages: int | None = None,
                count_pages: Callable[[bytes | Path, str], int] | None = None) -> list[tuple[int, int]]:
    """Page ranges (1-based, inclusive) of the parsing tasks of a file (its bytes, or a file on disk,
    never read whole here): 12-page slices of a PDF (22 for papers). Non-PDF files, unreadable PDFs
    (the task reports why), the ``one`` method and ``toc_extraction`` (one table of contents per
    document) give one task; so does a PDF of more than ``max_pages`` pages (default: the
    ``max_pages`` limit), whose task then fails at once with the limit named instead of filling the
    queue. ``count_pages`` opens the PDF (default: in this process; a server passes
    :func:`isolated_page_count`)."""
    from ragloom.errors import ParseError, RateLimitedError
    from ragloom.ingest.guard import limits

    if method == "one" or parser_config.get("toc_extraction"):
        return [WHOLE]
    size = int(parser_config.get("task_page_size") or (22 if method == "paper" else TASK_PAGE_SIZE))
    if isinstance(content, bytes):
        head = content[:PDF_HEAD_BYTES]
    else:
        with content.open("rb") as f:
            head = f.read(PDF_HEAD_BYTES)
    if not _is_pdf(head):  # nothing more is read
        return [WHOLE]
    try:
        pages = (count_pages or _page_count)(content, filename)
    except (ParseError, RateLimitedError):  # unreadable, over its budget, or no process free: one task says why
        return [WHOLE]
    if pages <= size or pages > (max_pages if max_pages is not None else limits().max_pages):
        return [WHOLE]
    return [(p, min(p + size - 1, pages)) for p in range(1, pages + 1, size)]


PDF_HEAD_BYTES = 1024


def _is_pdf(head: bytes) -> bool:
    """How a PDF is recognised (parsers.sniff.detect_type): its header in the first KiB."""
    return b"%PDF-" in head[:PDF_HEAD_BYTES]


def _page_count(content: bytes | Path, filename: str) -> int:
    """A PDF's page count in this process. A path is opened by pdfium itself, which reads only what the
    count needs (``open_pdf`` hands its argument to ``pdfium.PdfDocument``, which takes bytes or a path)."""
    from ragloom.ingest.parsers import pdf_page_count

    return pdf_page_count(content if isinstance(content, bytes) else cast(bytes, content), filename)


PAGE_COUNT_CPU_SECONDS = 5.0  # opening a PDF to count its pages takes milliseconds; a crafted one gets this


def isolated_page_count(ctx: Context) -> Callable[[bytes | Path, str], int]:
    """A PDF's page count read in a child process of ``ctx.sandbox`` (never in the server's process),
    within :data:`PAGE_COUNT_CPU_SECONDS` and the sandbox's memory limit."""
    from dataclasses import replace

    from ragloom.ingest.parsers import pdf_page_count

    budget = replace(ctx.sandbox_limits(), cpu_seconds=min(PAGE_COUNT_CPU_SECONDS, ctx.settings.sandbox_cpu_seconds))

    def count(data: bytes | Path, filename: str) -> int:  # a path: the child opens the file itself
        return ctx.sandbox.run(pdf_page_count, data, filename, limits=budget)

    return count


def _method_and_config(kb: KnowledgeBase, doc: Document) -> tuple[str, dict[str, Any]]:
    """The document's own chunk method and parameters when set, else its knowledge base's."""
    if doc.chunk_method:
        return doc.chunk_method, dict(doc.parser_config or {})
    return kb.chunk_method, dict(kb.parser_config or {})


CONTENT_TYPE_CHARS = 128  # DocumentVersion.content_type


def _bounded_content_type(content_type: str) -> str:
    """The client's Content-Type, within its column (PostgreSQL refuses a longer value; SQLite would keep
    it): a longer one keeps its media type only."""
    limit = CONTENT_TYPE_CHARS
    return content_type if len(content_type) <= limit else content_type.split(";", 1)[0].strip()[:limit]


def _new_version(
    session: Session, *, kb: KnowledgeBase, doc: Document, content_hash: str, object_key: str | None, size: int,
    content_type: str,
    page_ranges: list[tuple[int, int]], reason: VersionReason = VersionReason.UPLOAD, created_by: str | None = None,
    stage: bool = False,
) -> DocumentVersion:
    number = (
        session.scalar(select(func.max(DocumentVersion.number)).where(DocumentVersion.document_id == doc.id)) or 0
    ) + 1
    method, config = _method_and_config(kb, doc)
    version = DocumentVersion(
        document_id=doc.id,
        number=number,
        content_hash=content_hash,
        object_key=object_key,
        size=size,
        content_type=_bounded_content_type(content_type),
        chunk_method=method,
        parser_config=config,
        reason=reason,
        created_by=created_by,
        # the knowledge base may hold every new version for review; a re-index (a new embedding model, or a
        # rebuilt store) must reach readers, so it never waits
        staged=stage or (bool(kb.review_versions) and reason != VersionReason.REINDEX),
        embedding_model=kb.embedding_model,
    )
    session.add(version)
    session.flush()
    doc.latest_version_id = version.id
    doc.status, doc.progress, doc.message = DocumentStatus.QUEUED, 0.0, "waiting for a worker"
    for first, last in page_ranges:
        session.add(Task(tenant_id=kb.tenant_id, kb_id=kb.id, document_id=doc.id, version_id=version.id,
                         from_page=first, to_page=last))
    return version


HELD_MESSAGE = "uploaded; not parsed until asked (a re-parse, or RAGFlow's parse request)"


def held_ids(session: Session, docs: Sequence[Document]) -> set[str]:
    """The documents among ``docs`` whose latest version waits to be asked for (uploaded with ``hold``):
    queued, and their latest version has no task."""
    waiting = {d.latest_version_id: d.id for d in docs
               if d.status == DocumentStatus.QUEUED and d.latest_version_id is not None}
    if not waiting:
        return set()
    tasked = set(session.scalars(select(Task.version_id).where(Task.version_id.in_(list(waiting))).distinct()))
    return {doc_id for version_id, doc_id in waiting.items() if version_id not in tasked}


def _start(ctx: Context, session: Session, kb: KnowledgeBase, doc: Document) -> None:
    """Queue a held version's tasks, with the document's settings as they are now."""
    version = session.get(DocumentVersion, doc.latest_version_id)
    assert version is not None
    method, config = _method_and_config(kb, doc)
    version.chunk_method, version.parser_config = method, config
    for first, last in _stored_page_ranges(ctx, version.file_key, doc.name, method, config):
        session.add(Task(tenant_id=kb.tenant_id, kb_id=kb.id, document_id=doc.id, version_id=version.id,
                         from_page=first, to_page=last))
    doc.progress, doc.message = 0.0, "waiting for a worker"
    session.flush()


def reparse(ctx: Context, session: Session, *, principal: Principal, kb_id: str, doc_id: str,
            reason: VersionReason = VersionReason.REPARSE) -> Document:
    """Build a new version of a document from its latest file with the KB's current settings (a held
    upload: its waiting version is started instead)."""
    kb = knowledgebases.get_editable(session, principal=principal, kb_id_or_name=kb_id, action="re-parse its documents")
    doc = get(session, principal=principal, kb_id=kb.id, doc_id=doc_id)
    if held_ids(session, [doc]):
        _start(ctx, session, kb, doc)
        return doc
    latest = session.get(DocumentVersion, doc.latest_version_id)
    assert latest is not None
    cancel_open_tasks(session, doc)
    _new_version(session, kb=kb, doc=doc, content_hash=latest.content_hash, object_key=latest.object_key,
                 size=latest.size,
                 content_type=latest.content_type, reason=reason, created_by=principal.user_id,
                 page_ranges=_stored_page_ranges(ctx, latest.file_key, doc.name, *_method_and_config(kb, doc)))
    return doc


def _stored_page_ranges(ctx: Context, key: str, filename: str, method: str,
                        parser_config: dict[str, Any]) -> list[tuple[int, int]]:
    """:func:`page_ranges` of a stored file (a legacy version, no object_key, keeps its bare-hash key):
    its first KiB tells a PDF; only a PDF is copied out of the store, to a spool file, for its pages to
    be counted. Nothing of it is held whole in memory."""
    from ragloom.service.documents.uploads import scratch_file

    head = ctx.objects.head(key, PDF_HEAD_BYTES)
    if not _is_pdf(head):
        return page_ranges(head, filename, method, parser_config, max_pages=ctx.settings.max_pages)
    with scratch_file(ctx.settings) as copy:
        ctx.objects.get_file(key, copy)
        return page_ranges(copy, filename, method, parser_config, max_pages=ctx.settings.max_pages,
                           count_pages=isolated_page_count(ctx))


def set_chunking(ctx: Context, session: Session, *, principal: Principal, kb_id: str, doc_id: str,
                 chunk_method: str | None, parser_config: dict[str, Any] | None) -> Document:
    """Give one document its own chunk method (``None`` = follow the knowledge base) and re-parse it (a held
    upload stays held)."""
    from ragloom.service.knowledgebases import validate_chunking

    kb = knowledgebases.get_editable(session, principal=principal, kb_id_or_name=kb_id,
                                     action="change how its documents are chunked")
    doc = get(session, principal=principal, kb_id=kb.id, doc_id=doc_id)
    if chunk_method is not None:
        validate_chunking(chunk_method, parser_config or {})
    doc.chunk_method = chunk_method
    doc.parser_config = parser_config if chunk_method is not None else None
    session.flush()
    if held_ids(session, [doc]):
        return doc  # still held: its parse, when asked for, reads the new settings
    return reparse(ctx, session, principal=principal, kb_id=kb.id, doc_id=doc.id, reason=VersionReason.SETTINGS)


def rename(session: Session, *, principal: Principal, kb_id: str, doc_id: str, name: str) -> Document:
    """Give a document another name in its knowledge base, keeping its extension (which says how it is
    parsed). Its chunks carry the new name from its next version on (a re-parse)."""
    kb = knowledgebases.get_editable(session, principal=principal, kb_id_or_name=kb_id, action="rename its documents")
    doc = get(session, principal=principal, kb_id=kb.id, doc_id=doc_id)
    new = _clean_name(name)
    if not new:
        raise InvalidRequestError("a document's name cannot be empty")
    if Path(new).suffix.lower() != Path(doc.name).suffix.lower():
        raise InvalidRequestError(f"the extension of a document cannot change ({doc.name!r} to {new!r})")
    if new == doc.name:
        return doc
    if session.scalar(select(Document.id).where(Document.kb_id == kb.id, Document.name == new)) is not None:
        raise ConflictError(f"a document named {new!r} is already in knowledge base {kb.name!r}")
    audit.record_by(session, principal, "document.renamed", target=f"document:{doc.id}",
                    detail=f"{doc.name} to {new} in {kb.name}")
    doc.name = new
    session.flush()
    return doc


MetaValue = str | int | float | bool | list[str | int | float | bool]


def set_metadata(session: Session, *, principal: Principal, kb_id: str, doc_id: str,
                 changes: dict[str, MetaValue | None]) -> Document:
    """Merge ``changes`` into a document's metadata; a ``None`` value removes the key."""
    knowledgebases.get_editable(session, principal=principal, kb_id_or_name=kb_id,
                                action="edit its documents' metadata")
    doc = get(session, principal=principal, kb_id=kb_id, doc_id=doc_id)
    meta = dict(doc.meta or {})
    for key, value in changes.items():
        if not key or len(key) > 128:
            raise InvalidRequestError(f"metadata key {key!r} must have 1 to 128 characters")
        if value is None:
            meta.pop(key, None)
        else:
            meta[key] = value
    doc.meta = meta
    return doc


def merge_extracted_metadata(session: Session, doc_id: str, extracted: Mapping[str, object]) -> None:
    """Add what a parser found (title, author, date...) without overwriting keys already set."""
    doc = session.get(Document, doc_id)
    if doc is None:
        return
    meta = dict(doc.meta or {})
    for key, value in extracted.items():
        if value and key not in meta:
            meta[key] = value
    doc.meta = meta


@dataclass(frozen=True)
class DocumentFilter:
    """Which documents a listing shows: a status, a file type (the name's extension, ``pdf``), and a
    part of the name (case-insensitive); each None = any."""

    status: str | None = None
    type: str | None = None
    name: str | None = None

    def where(self, kb_id: str) -> list[Any]:
        conditions: list[Any] = [Document.kb_id == kb_id]
        if self.status:
            if self.status not in set(DocumentStatus):
                raise InvalidRequestError(f"status must be one of {', '.join(DocumentStatus)}, not {self.status!r}")
            conditions.append(Document.status == self.status)
        if self.type:
            conditions.append(func.lower(Document.name).endswith("." + self.type.lower().lstrip("."),
                                                                 autoescape=True))  # wildcards taken literally
        if self.name:
            conditions.append(func.lower(Document.name).contains(self.name.lower(), autoescape=True))
        return conditions


def list_documents(
    session: Session, *, principal: Principal, kb_id: str, offset: int = 0, limit: int = 100,
    where: DocumentFilter | None = None,
) -> tuple[list[Document], int]:
    kb = knowledgebases.get(session, principal=principal, kb_id_or_name=kb_id)
    conditions = [*(where or DocumentFilter()).where(kb.id), access.readable_clause(session, principal, kb)]
    total = session.scalar(select(func.count()).select_from(Document).where(*conditions)) or 0
    rows = session.scalars(
        select(Document).where(*conditions).order_by(Document.created_at, Document.name)
        .offset(offset).limit(limit)
    )
    return list(rows), total


@dataclass(frozen=True)
class FileFacts:
    """What the document list shows of a document's file: of the version a reader sees."""

    size: int
    page_count: int | None
    thumbnail: bool  # its first page has a preview image


def file_facts(session: Session, docs: Sequence[Document]) -> dict[str, FileFacts]:
    """The shown version's size, page count and whether its first page has an image, by document id:
    two queries for a whole page of the list."""
    from ragloom.db.models import VersionPage

    shown = {d.id: shown_version_id(d) for d in docs}
    ids = sorted({v for v in shown.values() if v})
    if not ids:
        return {}
    versions = {v.id: v for v in session.scalars(select(DocumentVersion).where(DocumentVersion.id.in_(ids)))}
    pictured = set(session.scalars(select(VersionPage.version_id).where(
        VersionPage.version_id.in_(ids), VersionPage.page == 1, VersionPage.image_key.is_not(None))))
    return {doc_id: FileFacts(versions[vid].size, versions[vid].page_count, vid in pictured)
            for doc_id, vid in shown.items() if vid in versions}


def versions(session: Session, *, principal: Principal, kb_id: str, doc_id: str) -> list[DocumentVersion]:
    """A document's versions, newest first."""
    doc = get(session, principal=principal, kb_id=kb_id, doc_id=doc_id)
    return list(session.scalars(select(DocumentVersion).where(DocumentVersion.document_id == doc.id)
                                .order_by(DocumentVersion.number.desc())))


def source_urls(session: Session, doc_ids: Sequence[str]) -> dict[str, str]:
    """The URL back to its source of each document a source's sync made (``source_url`` in its metadata),
    by id: what a citation links to besides the page image."""
    if not doc_ids:
        return {}
    rows = session.execute(select(Document.id, Document.meta).where(Document.id.in_(sorted(set(doc_ids)))))
    return {d: str(m["source_url"]) for d, m in rows if isinstance(m, dict) and m.get("source_url")}


def user_names(session: Session, ids: set[str]) -> dict[str, str]:
    """Users' display names (else e-mails) by id."""
    from ragloom.db.models import User

    if not ids:
        return {}
    return {u.id: u.name or u.email for u in session.scalars(select(User).where(User.id.in_(sorted(ids))))}


def get(session: Session, *, principal: Principal, kb_id: str, doc_id: str) -> Document:
    kb = knowledgebases.get(session, principal=principal, kb_id_or_name=kb_id)
    doc = session.scalar(
        select(Document).where(Document.kb_id == kb.id, (Document.id == doc_id) | (Document.name == doc_id))
    )
    if doc is None or not access.can_read(session, principal, kb, doc):
        raise NotFoundError(f"document {doc_id!r} not found")
    return doc


def cancel_open_tasks(session: Session, doc: Document) -> None:
    # the document row first, then its tasks: the order a publish and a claim take them (on PostgreSQL
    # the other order could deadlock with a publish of the same document)
    session.refresh(doc, with_for_update=True)
    open_tasks = Task.status.in_((TaskStatus.QUEUED, TaskStatus.RUNNING))
    for task in session.scalars(select(Task).where(Task.document_id == doc.id, open_tasks)):
        if task.status == TaskStatus.QUEUED:
            task.status, task.finished_at, task.message = TaskStatus.CANCELLED, utcnow(), "superseded"
        else:
            task.cancel_requested = True


def cancel(session: Session, *, principal: Principal, kb_id: str, doc_id: str) -> Document:
    """Stop the document's pending processing; the active version stays searchable."""
    knowledgebases.get_editable(session, principal=principal, kb_id_or_name=kb_id, action="cancel its documents")
    doc = get(session, principal=principal, kb_id=kb_id, doc_id=doc_id)
    cancel_open_tasks(session, doc)
    if doc.status in (DocumentStatus.QUEUED, DocumentStatus.RUNNING):
        doc.status, doc.message = DocumentStatus.CANCELLED, "cancelled by user"
        version = session.get(DocumentVersion, doc.latest_version_id)
        if version is not None and version.status == VersionStatus.BUILDING:
            version.status = VersionStatus.CANCELLED
    return doc


def delete_documents(
    ctx: Context, session: Session, *, principal: Principal, kb_id: str, doc_ids: list[str]
) -> int:
    """Delete documents (metadata rows first, then their chunks). Unknown ids are a 404."""
    kb = knowledgebases.get_editable(session, principal=principal, kb_id_or_name=kb_id, action="delete its documents")
    docs = [get(session, principal=principal, kb_id=kb.id, doc_id=d) for d in doc_ids]
    for doc in docs:
        cancel_open_tasks(session, doc)
        audit.record_by(session, principal, "document.deleted", target=f"document:{doc.id}",
                        detail=f"{doc.name} in {kb.name}")
        session.delete(doc)
    session.flush()
    if docs:
        ctx.docstore.delete(kb.tenant_id, Filters(kb_ids=[kb.id], doc_ids=[d.id for d in docs]))
        from ragloom.service.builds import kinds

        kinds.on_deleted(ctx, session, kb, [d.id for d in docs])  # what was built over them goes too
    return len(docs)


@dataclass(slots=True)
class PageInfo:
    page: int
    width: float
    height: float
    image_key: str | None


def shown_version_id(doc: Document) -> str | None:
    """The id of the version a reader sees: the active one, else the latest (not yet published)."""
    return doc.active_version_id or doc.latest_version_id


def _shown_version(session: Session, doc: Document) -> DocumentVersion:
    """The version a reader sees (:func:`shown_version_id`)."""
    version = session.get(DocumentVersion, shown_version_id(doc))
    if version is None:
        raise NotFoundError(f"document {doc.name!r} has no version")
    return version


def original_file(ctx: Context, session: Session, *, principal: Principal, kb_id: str, doc_id: str,
                  version_id: str | None = None) -> tuple[str, bytes]:
    """(file name, bytes) of the document as uploaded — of a given version when asked,
    so an old answer's citation opens exactly the file it cited."""
    doc, version = _version_of(session, principal=principal, kb_id=kb_id, doc_id=doc_id, version_id=version_id)
    return doc.name, ctx.objects.get(version.file_key)


def original_key(session: Session, *, principal: Principal, kb_id: str, doc_id: str,
                 version_id: str | None = None) -> tuple[str, str]:
    """(file name, object-store key) of the document as uploaded (of ``version_id`` when given)."""
    doc, version = _version_of(session, principal=principal, kb_id=kb_id, doc_id=doc_id, version_id=version_id)
    return doc.name, version.file_key


@dataclass(frozen=True)
class StoredFile:
    """A document's original file as it is served: its name, media type, size and its bytes in pieces
    (never whole in the server's memory)."""

    name: str
    media_type: str
    size: int
    pieces: Iterator[bytes]


def open_original(ctx: Context, session: Session, *, principal: Principal, kb_id: str, doc_id: str,
                  version_id: str | None = None) -> StoredFile:
    """The original file of a document (of ``version_id`` when given) to serve a piece at a time."""
    doc, version = _version_of(session, principal=principal, kb_id=kb_id, doc_id=doc_id, version_id=version_id)
    head = ctx.objects.head(version.file_key, SNIFF_BYTES)
    return StoredFile(doc.name, media_type(doc.name, head), version.size, ctx.objects.stream(version.file_key))


def _version_of(session: Session, *, principal: Principal, kb_id: str, doc_id: str,
                version_id: str | None) -> tuple[Document, DocumentVersion]:
    doc = get(session, principal=principal, kb_id=kb_id, doc_id=doc_id)
    if version_id is not None:
        version = session.get(DocumentVersion, version_id)
        if version is None or version.document_id != doc.id:
            raise NotFoundError(f"version {version_id!r} of {doc.name!r} not found")
    else:
        version = _shown_version(session, doc)
    return doc, version


SNIFF_BYTES = 64 * 1024  # of a stored file read to name its media type


def media_type(name: str, data: bytes) -> str:
    """The media type a stored file is served with, from its first :data:`SNIFF_BYTES` (``data``: the
    file or its beginning) and its name:
    the server's own process reads no further into an uploaded file (a zip or OLE container, whose
    directory is at its end, takes the type its name claims)."""
    from ragloom.errors import ParseError
    from ragloom.ingest.parsers import detect_type
    from ragloom.ingest.parsers.sniff import extension_type

    if not data:
        return "application/octet-stream"
    if data.startswith((b"PK\x03\x04", b"PK\x05\x06", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")):
        return extension_type(name) or "application/octet-stream"
    try:
        return detect_type(name, data[:SNIFF_BYTES])
    except ParseError:
        return "application/octet-stream"


def pages(session: Session, *, principal: Principal, kb_id: str, doc_id: str,
          version_id: str | None = None) -> list[PageInfo]:
    """Page sizes (PDF points) and preview image keys of a version (default: the one shown)."""
    from ragloom.db.models import VersionPage

    doc = get(session, principal=principal, kb_id=kb_id, doc_id=doc_id)
    vid = version_id or _shown_version(session, doc).id
    version = session.get(DocumentVersion, vid)
    if version is None or version.document_id != doc.id:
        raise NotFoundError(f"version {vid!r} of {doc.name!r} not found")
    rows = session.scalars(select(VersionPage).where(VersionPage.version_id == vid).order_by(VersionPage.page))
    return [PageInfo(r.page, r.width, r.height, r.image_key) for r in rows]


def page_png(ctx: Context, session: Session, *, principal: Principal, kb_id: str, doc_id: str, page: int,
             version_id: str | None = None, width: int | None = None) -> bytes:
    """A page's preview image (PNG) of a version (default: the one shown), scaled down to ``width``
    pixels wide when asked (a thumbnail, made on request: nothing more is stored)."""
    from ragloom.ingest.preview import scaled_png

    found = next((p for p in pages(session, principal=principal, kb_id=kb_id, doc_id=doc_id, version_id=version_id)
                  if p.page == page and p.image_key), None)
    if found is None or found.image_key is None:
        raise NotFoundError(f"no preview image of page {page}")
    image = ctx.objects.get(found.image_key)
    return scaled_png(image, width) if width is not None else image


def figure_png(ctx: Context, session: Session, *, principal: Principal, kb_id: str, doc_id: str,
               chunk_id: str) -> bytes:
    """The picture of a figure chunk of the document (any of its versions: an old answer's citation still
    shows what it cited), as stored at ingestion (PNG, at most 1600 pixels a side)."""
    doc = get(session, principal=principal, kb_id=kb_id, doc_id=doc_id)
    key = session.scalar(select(VersionFigure.image_key)
                         .join(DocumentVersion, DocumentVersion.id == VersionFigure.version_id)
                         .where(DocumentVersion.document_id == doc.id, VersionFigure.chunk_id == chunk_id))
    if key is None:
        raise NotFoundError(f"chunk {chunk_id!r} of {doc.name!r} is not a figure (or not found)")
    return ctx.objects.get(key)


def view(ctx: Context, session: Session, *, principal: Principal, kb_id: str, doc_id: str,
         version_id: str | None = None, highlight: Sequence[int] = ()) -> str:
    """The HTML view of a version of a flowing format (default: the one shown), the blocks numbered
    ``highlight`` marked; NotFoundError for a paginated one (its previews are page images) or a
    version parsed before views existed."""
    from ragloom.ingest.preview import highlighted

    doc = get(session, principal=principal, kb_id=kb_id, doc_id=doc_id)
    vid = version_id or _shown_version(session, doc).id
    version = session.get(DocumentVersion, vid)
    if version is None or version.document_id != doc.id:
        raise NotFoundError(f"version {vid!r} of {doc.name!r} not found")
    if version.view_key is None:
        raise NotFoundError(f"version {vid!r} of {doc.name!r} has no HTML view: its previews are page images "
                            "(.../pages), or it was parsed before views existed (re-parse it)")
    return highlighted(ctx.objects.get(version.view_key).decode("utf-8"), highlight)


def reindex(ctx: Context, session: Session, *, principal: Principal, kb_ids: list[str] | None = None,
            drop: bool = False) -> list[Document]:
    """Rebuild the search store from the truth (metadata DB + stored files): every document of
    the given (default: every visible) knowledge base gets a new version from its latest file.

    With ``drop`` the tenant's whole index is removed and recreated first (needed when its
    format is from another ragloom); only a tenant owner or admin may do that, and then every
    knowledge base of the tenant is re-parsed, not only the given ones (the others would be left
    with nothing indexed).
    """
    from ragloom.errors import PermissionDeniedError

    kbs = ([knowledgebases.get(session, principal=principal, kb_id_or_name=k) for k in kb_ids] if kb_ids
           else knowledgebases.list_visible(session, principal=principal))
    if drop:
        if principal.role not in (Role.OWNER, Role.ADMIN):
            raise PermissionDeniedError("only a tenant owner or admin may drop the search index")
        if ctx.docstore.index_exists(principal.tenant_id):
            ctx.docstore.drop_index(principal.tenant_id)
        # every version's chunks are gone with the index: none can be made live again without a re-parse
        session.execute(update(DocumentVersion).where(DocumentVersion.document_id.in_(
            select(Document.id).where(Document.tenant_id == principal.tenant_id))).values(indexed=False, parked=None))
        dims = {kb.embedding_dim for kb in knowledgebases.list_visible(session, principal=principal)}
        for dim in dims:
            ctx.docstore.create_index(principal.tenant_id, dim)
        kbs = knowledgebases.list_visible(session, principal=principal)  # an owner or admin sees them all
    out = []
    # tag sets first: their tasks are claimed first, so the chunks tagged from them find them indexed
    for kb in sorted(kbs, key=lambda kb: kb.chunk_method != "tag"):
        for doc in session.scalars(select(Document).where(Document.kb_id == kb.id)):
            if doc.latest_version_id:
                out.append(reparse(ctx, session, principal=principal, kb_id=kb.id, doc_id=doc.id,
                                   reason=VersionReason.REINDEX))
    return out
