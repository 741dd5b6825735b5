"""The ingestion task executor: fetch -> parse -> chunk -> embed -> index -> publish.

Each stage is a small function; :func:`run_task` reads top to bottom. A task is
idempotent: chunk ids are a hash of (version id, chunk order), so running it
again rewrites the same rows. Readers see the new version only after
:func:`publish` flips ``document.active_version_id`` in one transaction.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

import numpy as np
import xxhash
from sqlalchemy import select

from ragloom.db.models import Document, DocumentVersion, KnowledgeBase, Task, utcnow
from ragloom.docstore.base import ChunkRecord, Filters
from ragloom.errors import ModelError, ParseError, StoreError, TaskCancelledError
from ragloom.ingest.blocks import Chunk, ParsedDocument
from ragloom.models.embedding import Embedder
from ragloom.service import tasks
from ragloom.service.context import Context

log = logging.getLogger(__name__)

TITLE_WEIGHT = 0.1  # REFERENCE §6: vec = w * title + (1 - w) * content
EMBED_BATCH = 32
ORDER_STRIDE = 100_000
INDEX_BATCH = 256


@dataclass(slots=True)
class Job:
    """Everything a task needs, read from the DB once at its start."""

    task_id: str
    tenant_id: str
    kb_id: str
    doc_id: str
    version_id: str
    filename: str
    content_hash: str
    chunk_method: str
    parser_config: dict
    embedding_model: str
    language: str
    from_page: int = 0  # 1-based first page of a page-range task; 0 = the whole document
    to_page: int = 100_000_000

    @property
    def is_page_range(self) -> bool:
        return self.from_page > 0

    @property
    def order_base(self) -> int:
        """Chunk orders of a page-range task start at ``from_page * 100000``, so the
        chunks of all tasks of a version sort in reading order and never collide."""
        return self.from_page * ORDER_STRIDE


def chunk_id(version_id: str, order: int) -> str:
    return xxhash.xxh3_128_hexdigest(f"{version_id}:{order}".encode())


class Progress:
    """Reports progress to the task row; raises TaskCancelledError once cancel is asked."""

    def __init__(self, ctx: Context, task_id: str) -> None:
        self.ctx = ctx
        self.task_id = task_id
        self._last = 0.0

    def __call__(self, progress: float, message: str, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < 0.5:
            return
        self._last = now
        with self.ctx.db.session() as s:
            alive = tasks.report(s, self.task_id, progress=progress, message=message)
        if not alive:
            raise TaskCancelledError("cancelled by user")


def load_job(ctx: Context, task_id: str) -> Job:
    with ctx.db.session() as s:
        task = s.get(Task, task_id)
        assert task is not None
        version = s.get(DocumentVersion, task.version_id)
        doc = s.get(Document, task.document_id)
        kb = s.get(KnowledgeBase, task.kb_id)
        assert version is not None and doc is not None and kb is not None
        return Job(
            task_id=task.id, tenant_id=task.tenant_id, kb_id=kb.id, doc_id=doc.id, version_id=version.id,
            filename=doc.name, content_hash=version.content_hash, chunk_method=version.chunk_method,
            parser_config=dict(version.parser_config or {}), embedding_model=kb.embedding_model,
            language=kb.language, from_page=task.from_page, to_page=task.to_page,
        )


def parse(ctx: Context, job: Job) -> ParsedDocument:
    from ragloom.ingest.ocr import default_page_reader
    from ragloom.ingest.parsers import PdfParser, parse_document

    data = ctx.objects.get(job.content_hash)
    if job.is_page_range:
        parser = PdfParser(first_page=job.from_page, last_page=job.to_page, ocr=default_page_reader())
        return parser.parse(data, job.filename)
    return parse_document(data, job.filename)


PREVIEW_DPI = 110


EXTRACTED_KEYS = ("title", "author", "date", "created", "modified", "subject", "keywords", "language")


def store_metadata(ctx: Context, job: Job, parsed: ParsedDocument) -> None:
    """Title, author, dates... found by the parser become document metadata (user values win)."""
    from ragloom.service.documents import merge_extracted_metadata

    found = {k: str(v) for k, v in parsed.metadata.items() if k in EXTRACTED_KEYS and v}
    if parsed.title and "title" not in found:
        found["title"] = parsed.title
    if found:
        with ctx.db.session() as s:
            merge_extracted_metadata(s, job.doc_id, found)


def store_pages(ctx: Context, job: Job, parsed: ParsedDocument) -> None:
    """Record each parsed page's size and, for PDFs, store a preview image of it (for citation highlights)."""
    from ragloom.db.models import VersionPage

    if not parsed.page_sizes:
        return
    images: dict[int, str] = {}
    if parsed.metadata.get("mime_type", "application/pdf") == "application/pdf" and job.filename:
        from ragloom.ingest.parsers.pdf import render_page_png

        data = ctx.objects.get(job.content_hash)
        for page in sorted(parsed.page_sizes):
            images[page] = ctx.objects.put(render_page_png(data, page, dpi=PREVIEW_DPI))
    with ctx.db.session() as s:
        for page, (width, height) in parsed.page_sizes.items():
            s.merge(VersionPage(version_id=job.version_id, page=page, width=width, height=height,
                                image_key=images.get(page)))


def chunk(job: Job, parsed: ParsedDocument, embedder: Embedder) -> list[Chunk]:
    from ragloom.ingest.chunkers import ChunkerConfig, chunk_blocks

    config = ChunkerConfig.parse({**job.parser_config, "method": job.chunk_method})
    chunks = chunk_blocks(parsed.blocks, config, embedder.count_tokens)
    if not chunks and not job.is_page_range:
        raise ParseError("the document has no text to index")
    for c in chunks:
        c.order += job.order_base
    return chunks


def embed(job: Job, chunks: list[Chunk], embedder: Embedder, progress: Progress) -> np.ndarray:
    """Content vectors blended with the file-name vector, batch by batch (0.35 -> 0.85)."""
    title_vec = embedder.embed_passages([job.filename])[0]
    parts = []
    for i in range(0, len(chunks), EMBED_BATCH):
        batch = [embedding_text(c) for c in chunks[i : i + EMBED_BATCH]]
        parts.append(embedder.embed_passages(batch))
        done = min(i + EMBED_BATCH, len(chunks))
        progress(0.35 + 0.5 * done / len(chunks), f"embedded {done}/{len(chunks)} chunks")
    vecs = TITLE_WEIGHT * title_vec + (1 - TITLE_WEIGHT) * np.vstack(parts)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs.astype(np.float32)


def embedding_text(chunk: Chunk) -> str:
    """What a chunk's vector is made from: its questions when it has some (qa), else its text."""
    return "\n".join(chunk.questions) if chunk.questions else chunk.text


def toc_id(version_id: str, from_page: int) -> str:
    """Id of the hidden TOC row a task stores (one per page range)."""
    return xxhash.xxh3_128_hexdigest(f"{version_id}:toc:{from_page}".encode())


def parent_id(version_id: str, text: str) -> str:
    return xxhash.xxh3_128_hexdigest(f"{version_id}:parent:{text}".encode())


def to_records(ctx: Context, job: Job, chunks: list[Chunk], vectors: np.ndarray,
               titles: Sequence[tuple[int, str]] = ()) -> list[ChunkRecord]:
    """Search-store rows: one per chunk, plus one hidden row per distinct parent text
    (parent-child chunking: children are matched, the parent is swapped in at retrieval).
    A qa chunk is indexed by its questions only (its text keeps question and answer)."""
    from ragloom.nlp import analyze_chunk

    records: list[ChunkRecord] = []
    parents: dict[str, list[int]] = {}
    for c, vec in zip(chunks, vectors, strict=True):
        indexed = "\n".join(c.questions) if c.questions else c.text
        terms = analyze_chunk(ctx.analyzer, indexed, title=job.filename, important_keywords=c.important_keywords,
                              questions=c.questions)
        pid = parent_id(job.version_id, c.parent_text) if c.parent_text else None
        if pid is not None:
            parents.setdefault(pid, []).append(len(records))
        records.append(_record(job, c, vec, terms, pid))
    for pid, members in parents.items():
        first = chunks[members[0]]
        text = first.parent_text or ""
        vec = np.mean([records[i].vector for i in members], axis=0)
        positions = [p for i in members for p in records[i].positions]
        terms = analyze_chunk(ctx.analyzer, text, title=job.filename)
        parent = Chunk(text=text, order=first.order, positions=list(dict.fromkeys(positions)),
                       heading_path=first.heading_path, kind="parent", method=first.method)
        row = _record(job, parent, (vec / (np.linalg.norm(vec) or 1.0)).astype(np.float32), terms, None)
        row.id, row.available = pid, False
        records.append(row)
    toc = _toc_record(job, titles, chunks, records)
    if toc is not None:
        records.append(toc)
    return records


def _toc_record(job: Job, titles: Sequence[tuple[int, str]], chunks: list[Chunk],
                records: list[ChunkRecord]) -> ChunkRecord | None:
    """The hidden table-of-contents row of this task's chunks, when the document has headings."""
    from ragloom.knowledge.toc import build_toc, dump_toc

    entries = build_toc(titles, [(r.id, c.text) for c, r in zip(chunks, records, strict=False)])
    if not entries:
        return None
    return ChunkRecord(id=toc_id(job.version_id, job.from_page), kb_id=job.kb_id, doc_id=job.doc_id,
                       version_id=job.version_id, content=dump_toc(entries), vector=records[0].vector,
                       document_name=job.filename, available=False, kind="toc",
                       order=job.order_base + ORDER_STRIDE - 1)


def _record(job: Job, c: Chunk, vec: np.ndarray, terms, parent: str | None) -> ChunkRecord:  # type: ignore[no-untyped-def]
    return ChunkRecord(
        id=chunk_id(job.version_id, c.order), kb_id=job.kb_id, doc_id=job.doc_id,
        version_id=job.version_id, content=c.text, vector=vec, document_name=job.filename,
        content_terms=terms.content_terms, content_fine_terms=terms.content_fine_terms,
        title_terms=terms.title_terms, title_fine_terms=terms.title_fine_terms,
        important_keywords=terms.important_keywords, important_terms=terms.important_terms,
        question_terms=terms.question_terms, order=c.order, kind=c.kind,
        positions=list(c.positions), heading_path=list(c.heading_path), html=c.html, parent_id=parent,
    )


def index(ctx: Context, job: Job, records: list[ChunkRecord], progress: Progress) -> None:
    for i in range(0, len(records), INDEX_BATCH):
        ctx.docstore.upsert(job.tenant_id, records[i : i + INDEX_BATCH])
        done = min(i + INDEX_BATCH, len(records))
        progress(0.85 + 0.1 * done / len(records), f"indexed {done}/{len(records)} chunks")


def publish(ctx: Context, job: Job, *, chunk_count: int, page_count: int | None) -> bool:
    """Finish this task; when it is the version's last, flip the document's active version.

    One transaction: the document row is written first (it serialises the tasks
    of one version on SQLite and PostgreSQL alike), then this task is marked
    done, then, if no sibling task is left, the version becomes active and the
    old version's chunks are dropped afterwards. When the document was deleted
    or a newer version was uploaded meanwhile, this version is discarded
    instead. Returns True when the version was published.
    """
    old_version: str | None = None
    outcome = "wait"
    with ctx.db.session() as s:
        doc = s.get(Document, job.doc_id, with_for_update=True)
        version = s.get(DocumentVersion, job.version_id)
        task = s.get(Task, job.task_id)
        if task is not None:
            task.chunk_count = chunk_count
        if doc is None or version is None or doc.latest_version_id != job.version_id:
            outcome = "discard"
            if version is not None:
                version.status = "superseded"
            tasks.finish(s, job.task_id, message="superseded by a newer version; not published")
        else:
            doc.updated_at = utcnow()
            s.flush()  # take the write lock before reading the siblings
            tasks.finish(s, job.task_id, message=f"{chunk_count} chunks indexed")
            siblings = list(s.scalars(select(Task).where(Task.version_id == job.version_id)))
            if all(t.status == "done" for t in siblings):
                outcome = "published"
                total = sum(t.chunk_count for t in siblings)
                old_version = doc.active_version_id
                if old_version and old_version != version.id:
                    old = s.get(DocumentVersion, old_version)
                    if old is not None:
                        old.status = "superseded"
                version.status, version.chunk_count, version.published_at = "ready", total, utcnow()
                version.page_count = page_count
                doc.active_version_id = version.id
                doc.chunk_count = total
                doc.message = f"published {total} chunks"
    if outcome == "discard":
        _discard(ctx, job)
    elif outcome == "published" and old_version and old_version != job.version_id:
        ctx.docstore.delete(job.tenant_id, Filters(kb_ids=[job.kb_id], version_ids=[old_version]))
    return outcome == "published"


def run_task(ctx: Context, task_id: str) -> str:
    """Run one claimed task to its end; returns the final task status."""
    job = load_job(ctx, task_id)
    progress = Progress(ctx, task_id)
    try:
        progress(0.05, "parsing", force=True)
        parsed = parse(ctx, job)
        embedder = ctx.embedder(job.embedding_model)
        progress(0.2, f"parsed {len(parsed.blocks)} blocks; rendering page previews", force=True)
        store_pages(ctx, job, parsed)
        store_metadata(ctx, job, parsed)
        progress(0.25, f"parsed {len(parsed.blocks)} blocks; chunking", force=True)
        chunks = chunk(job, parsed, embedder)
        progress(0.3, f"{len(chunks)} chunks; embedding", force=True)
        vectors = embed(job, chunks, embedder, progress)
        titles = [(max(1, b.level), b.text) for b in parsed.blocks if b.kind == "title"]
        records = to_records(ctx, job, chunks, vectors, titles)
        progress(0.86, "indexing", force=True)
        index(ctx, job, records, progress)
        progress(0.97, "publishing", force=True)
        publish(ctx, job, chunk_count=sum(1 for r in records if r.available), page_count=parsed.page_count)
        return "done"
    except TaskCancelledError:
        _discard(ctx, job)
        with ctx.db.session() as s:
            tasks.mark_cancelled(s, task_id)
            _set_version(s, job.version_id, "cancelled", "cancelled by user")
        return "cancelled"
    except ParseError as exc:
        fail_version(ctx, job, exc.message)
        return "failed"
    except (StoreError, ModelError) as exc:
        log.warning("task %s: transient failure: %s", task_id, exc.message)
        with ctx.db.session() as s:
            tasks.fail(s, task_id, reason=exc.message, retry_in=timedelta(seconds=5),
                       max_attempts=ctx.settings.task_max_retries)
            task = s.get(Task, task_id)
            gave_up = task is not None and task.status == "failed"
        if gave_up:
            fail_version(ctx, job, exc.message)
            return "failed"
        return "retry"


def fail_version(ctx: Context, job: Job, reason: str) -> None:
    """A task failed for good: the whole version fails with its reason; sibling tasks stop."""
    with ctx.db.session() as s:
        tasks.fail(s, job.task_id, reason=reason)
        _set_version(s, job.version_id, "failed", reason)
        for sibling in s.scalars(select(Task).where(Task.version_id == job.version_id, Task.id != job.task_id)):
            if sibling.status == "queued":
                sibling.status, sibling.finished_at = "cancelled", utcnow()
                sibling.message = "another page range failed"
            elif sibling.status == "running":
                sibling.cancel_requested = True
    _discard(ctx, job)


def _discard(ctx: Context, job: Job) -> None:
    ctx.docstore.delete(job.tenant_id, Filters(kb_ids=[job.kb_id], version_ids=[job.version_id]))


def _set_version(session, version_id: str, status: str, error: str) -> None:  # type: ignore[no-untyped-def]
    version = session.get(DocumentVersion, version_id)
    if version is not None and version.status == "building":
        version.status, version.error = status, error
