"""The ingestion task executor: fetch -> parse -> chunk -> embed -> index -> publish.

Each stage is a small function; :func:`run_task` reads top to bottom. A task is
idempotent: chunk ids are a hash of (version id, chunk order), so running it
again rewrites the same rows. Readers see the new version only after
:func:`publish` flips ``document.active_version_id`` in one transaction.
The task's inputs live in :mod:`ragloom.ingest.job`, the building of its
search-store rows in :mod:`ragloom.ingest.records`; both are re-exported here.
"""

from __future__ import annotations

import logging
from datetime import timedelta

import numpy as np
from sqlalchemy import select

from ragloom.db.models import Document, DocumentVersion, Task, utcnow
from ragloom.docstore.base import ChunkRecord, Filters
from ragloom.errors import ModelError, ParseError, StoreError, TaskCancelledError, TaskInterruptedError
from ragloom.ingest.blocks import Chunk, ParsedDocument
from ragloom.ingest.chunkers.oversize import bound_chunks
from ragloom.ingest.guard import checkpoint, limits
from ragloom.ingest.job import ORDER_STRIDE, Job, Progress, load_job
from ragloom.ingest.records import add_tags, chunk_id, llm_toc, parent_id, to_records, toc_id
from ragloom.models.embedding import Embedder
from ragloom.service import tasks
from ragloom.service.context import Context

__all__ = [
    "ORDER_STRIDE", "Job", "Progress", "add_tags", "chunk", "chunk_id", "embed", "embedding_text", "fail_version",
    "index", "llm_toc", "load_job", "parent_id", "parse", "publish", "run_task", "store_metadata", "store_pages",
    "to_records", "toc_id",
]

log = logging.getLogger(__name__)

TITLE_WEIGHT = 0.1  # REFERENCE §6: vec = w * title + (1 - w) * content
EMBED_BATCH = 32
INDEX_BATCH = 256


def parse(ctx: Context, job: Job) -> ParsedDocument:
    from ragloom.ingest.ocr import default_page_reader
    from ragloom.ingest.parsers import PdfParser, parse_document

    data = ctx.objects.get(job.file_key)
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

        data = ctx.objects.get(job.file_key)
        for page in sorted(parsed.page_sizes):  # the tenant's namespace; recorded below within the task's time
            checkpoint()  # huge pages render at fewer pixels (max_page_pixels): see parsers.pdf_render
            images[page] = ctx.objects.put(render_page_png(data, page, dpi=PREVIEW_DPI), namespace=job.tenant_id)
    with ctx.db.session() as s:
        for page, (width, height) in parsed.page_sizes.items():
            s.merge(VersionPage(version_id=job.version_id, page=page, width=width, height=height,
                                image_key=images.get(page)))


def chunk(job: Job, parsed: ParsedDocument, embedder: Embedder) -> list[Chunk]:
    from ragloom.ingest.chunkers import ChunkerConfig, chunk_blocks

    config = ChunkerConfig.parse({**job.parser_config, "method": job.chunk_method})
    # no chunk over max_chunk_chars (split), no more than max_chunks: limits of the task
    chunks = bound_chunks(chunk_blocks(parsed.blocks, config, embedder.count_tokens))
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
        checkpoint()  # cancel, shutdown, time and memory limits are honoured between batches
        batch = [embedding_text(c) for c in chunks[i : i + EMBED_BATCH]]
        parts.append(embedder.embed_passages(batch))
        done = min(i + EMBED_BATCH, len(chunks))
        progress(0.35 + 0.5 * done / len(chunks), f"embedded {done}/{len(chunks)} chunks")
    vecs = TITLE_WEIGHT * title_vec + (1 - TITLE_WEIGHT) * np.vstack(parts)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs.astype(np.float32)


def embedding_text(chunk: Chunk) -> str:
    """What a chunk's vector is made from: its questions when it has some (qa), else its text
    (never more than ``max_chunk_chars`` characters)."""
    text = "\n".join(chunk.questions) if chunk.questions else chunk.text
    return text[: limits().max_chunk_chars]

def index(ctx: Context, job: Job, records: list[ChunkRecord], progress: Progress) -> None:
    for i in range(0, len(records), INDEX_BATCH):
        checkpoint()
        ctx.docstore.upsert(job.tenant_id, records[i : i + INDEX_BATCH])
        done = min(i + INDEX_BATCH, len(records))
        progress(0.85 + 0.1 * done / len(records), f"indexed {done}/{len(records)} chunks")


def publish(ctx: Context, job: Job, *, chunk_count: int, page_count: int | None, note: str = "") -> bool:
    """Finish this task; when it is the version's last, flip the document's active version.

    One transaction: the document row is written first (it serialises the tasks
    of one version on SQLite and PostgreSQL alike), then this task is marked
    done, then, if no sibling task is left, the version becomes active and the
    old version's chunks are dropped afterwards. When the document was deleted
    or a newer version was uploaded meanwhile, this version is discarded
    instead. Returns True when the version was published. ``note`` (e.g. why no TOC was
    built) is appended to the task's and the document's message.
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
        if doc is None or version is None or doc.latest_version_id != job.version_id:
            outcome = "discard"
            if version is not None:
                version.status = "superseded"
            tasks.finish(s, job.task_id, message="superseded by a newer version; not published")
        else:
            doc.updated_at = utcnow()
            s.flush()  # take the write lock before reading the siblings
            tasks.finish(s, job.task_id, message=f"{chunk_count} chunks indexed{suffix}")
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
                doc.message = f"published {total} chunks{suffix}"
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
        note = llm_toc(ctx, job, chunks, records, embedder.count_tokens, progress)
        add_tags(ctx, job, records)
        progress(0.86, "indexing", force=True)
        index(ctx, job, records, progress)
        progress(0.97, "publishing", force=True)
        publish(ctx, job, chunk_count=sum(1 for r in records if r.available), page_count=parsed.page_count,
                note=note)
        return "done"
    except TaskInterruptedError:
        log.info("task %s: handed back to the queue (the worker is stopping)", task_id)
        with ctx.db.session() as s:
            tasks.hand_back(s, task_id)
        return "interrupted"
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
