"""The ingestion stages: parse -> chunk -> embed -> records -> index.

Each stage receives exactly the data, stores and models it uses, so a file can be parsed and
chunked with no database: ``chunk(job, parse(data, job), embedder)``. The task runner that reads
the job from the queue, calls the stages in order, records progress and publishes the version is
the service use case :mod:`ragloom.service.documents.ingestion`. Search-store rows are built in
:mod:`ragloom.ingest.records`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ragloom.dataflow import Chunk, ChunkRecord, ParsedDocument
from ragloom.docstore.base import DocStore
from ragloom.errors import ParseError
from ragloom.ingest import preview
from ragloom.ingest.chunkers.oversize import bound_chunks
from ragloom.ingest.guard import checkpoint, limits
from ragloom.ingest.job import ORDER_STRIDE, Job, Progress, no_progress
from ragloom.ingest.records import llm_toc, to_records
from ragloom.models.embedding import Embedder

__all__ = [
    "EXTRACTED_KEYS", "ORDER_STRIDE", "PREVIEW_DPI", "Job", "Progress", "chunk", "chunk_parsed", "embed",
    "embedding_text", "extracted_metadata", "index", "llm_toc", "no_progress", "page_previews", "parse", "parse_file",
    "to_records",
]

log = logging.getLogger(__name__)

TITLE_WEIGHT = 0.1  # REFERENCE §6: vec = w * title + (1 - w) * content
EMBED_BATCH = 32
EMBED_MIN_BATCH = 8
INDEX_BATCH = 256


def parse(data: bytes, job: Job) -> ParsedDocument:
    """The file's blocks with their positions (a page-range task parses its pages only); scans are read by
    OCR for the knowledge base's language (:func:`ragloom.ingest.ocr.unread_scans`)."""
    from ragloom.ingest.ocr import scans_in

    with scans_in(job.language):
        return parse_file(data, job.filename, pages=(job.from_page, job.to_page) if job.is_page_range else None)


def parse_file(data: bytes, filename: str, *, pages: tuple[int, int] | None = None) -> ParsedDocument:
    """A file's blocks with their positions; ``pages`` (1-based, inclusive): a PDF's page range only."""
    from ragloom.ingest.ocr import default_page_reader
    from ragloom.ingest.parsers import PdfParser, parse_document
    from ragloom.ingest.parsers.clean import clean_parsed

    if pages is not None:
        parser = PdfParser(first_page=pages[0], last_page=pages[1], ocr=default_page_reader())
        parsed = parser.parse(data, filename)
        clean_parsed(parsed)  # as parse_document does
        return parsed
    parsed = parse_document(data, filename)
    preview.anchor_blocks(parsed)  # a flowing format: positions are anchors of its HTML view
    return parsed


PREVIEW_DPI = 110


EXTRACTED_KEYS = ("title", "author", "date", "created", "modified", "subject", "keywords", "language")


def extracted_metadata(parsed: ParsedDocument) -> dict[str, str]:
    """Title, author, dates... that the parser found in the file (they become document metadata)."""
    found = {k: str(v) for k, v in parsed.metadata.items() if k in EXTRACTED_KEYS and v}
    if parsed.title and "title" not in found:
        found["title"] = parsed.title
    return found


SLIDES = "application/vnd.openxmlformats-officedocument.presentationml.presentation"


def page_previews(data: bytes, job: Job, parsed: ParsedDocument) -> Iterator[tuple[int, bytes]]:
    """A PNG preview of each parsed page (for citation highlights): PDF pages rendered, image
    frames, slides drawn from their blocks (:mod:`ragloom.ingest.preview`); none for flowing formats."""
    if not parsed.page_sizes or not job.filename:
        return
    mime = parsed.metadata.get("mime_type", "application/pdf")
    if mime == "application/pdf":
        from ragloom.ingest.parsers.pdf import render_page_png

        for page in sorted(parsed.page_sizes):
            checkpoint()  # huge pages render at fewer pixels (max_page_pixels): see parsers.pdf_render
            yield page, render_page_png(data, page, dpi=PREVIEW_DPI)
    elif mime.startswith("image/"):
        yield from preview.image_pngs(data, parsed, PREVIEW_DPI)
    elif mime == SLIDES:
        for page, size in sorted(parsed.page_sizes.items()):
            checkpoint()
            yield page, preview.slide_png([b for b in parsed.blocks if b.page == page], size, PREVIEW_DPI)


def html_preview(job: Job, parsed: ParsedDocument) -> str | None:
    """The HTML view of a flowing document (none for a paginated one)."""
    if not preview.is_flowing(parsed):
        return None
    return preview.render_html(parsed, job.filename)


def chunk(job: Job, parsed: ParsedDocument, embedder: Embedder) -> list[Chunk]:
    chunks = chunk_parsed(parsed, job.chunk_method, job.parser_config, embedder.count_tokens)
    if not chunks and not job.is_page_range:
        raise ParseError("the document has no text to index")
    for c in chunks:
        c.order += job.order_base
    return chunks


def chunk_parsed(parsed: ParsedDocument, method: str, parser_config: Mapping[str, Any],
                 count_tokens: Callable[[str], int]) -> list[Chunk]:
    """``parsed``'s chunks by ``method`` with ``parser_config``, within the task's limits (no chunk over
    max_chunk_chars: split; no more than max_chunks)."""
    from ragloom.ingest.chunkers import ChunkerConfig, chunk_blocks

    config = ChunkerConfig.parse({**parser_config, "method": method})
    return bound_chunks(chunk_blocks(parsed.blocks, config, count_tokens))


def embed(job: Job, chunks: list[Chunk], embedder: Embedder, progress: Progress) -> np.ndarray:
    """Content vectors of one document's chunks (:func:`embed_many`)."""
    return embed_many([(job, chunks)], embedder, progress)[0]


def embed_many(parts: list[tuple[Job, list[Chunk]]], embedder: Embedder, progress: Progress) -> list[np.ndarray]:
    """Content vectors blended with each document's file-name vector, for one or more documents
    in shared model batches (0.35 -> 0.85): many small documents fill a batch together. A file
    name rides in the batches with its chunks (a one-chunk document costs one model call, not
    two); a name that says nothing (``1.txt``, ``IMG_0042.jpg``: :attr:`Job.title`) is not blended in."""
    texts: list[str] = []
    is_chunk: list[bool] = []
    spans: list[tuple[int, bool, int]] = []  # (first text, has a title, chunks) per document
    for job, chunks in parts:
        title = job.title
        spans.append((len(texts), title is not None, len(chunks)))
        texts += ([title] if title else []) + [embedding_text(c.text, c.questions) for c in chunks]
        is_chunk += ([False] if title else []) + [True] * len(chunks)
    total = sum(is_chunk)
    rows = []
    step = embed_step(len(texts))
    for i in range(0, len(texts), step):
        checkpoint()  # cancel, shutdown, time and memory limits are honoured between batches
        rows.append(embedder.embed_passages(texts[i : i + step]))
        done = sum(is_chunk[: i + step])
        progress(0.35 + 0.5 * done / max(1, total), f"embedded {done}/{total} chunks")
    every = np.vstack(rows) if rows else np.zeros((0, embedder.dim), dtype=np.float32)
    out = []
    for first, titled, n in spans:
        own = every[first : first + n + titled]
        vecs = TITLE_WEIGHT * own[0] + (1 - TITLE_WEIGHT) * own[1:] if titled else own.copy()
        if len(vecs):
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        out.append(vecs.astype(np.float32))
    return out


def embed_step(count: int) -> int:
    """Texts per model call: :data:`EMBED_BATCH`, smaller for a few dozen texts so that progress moves
    (at least about eight steps, never under :data:`EMBED_MIN_BATCH` texts)."""
    return max(EMBED_MIN_BATCH, min(EMBED_BATCH, -(-count // 8)))


def embedding_text(text: str, questions: Sequence[str]) -> str:
    """What a chunk's vector is made from: its questions when it has some (a qa pair, ``auto_questions``,
    an edit), else its text (never more than ``max_chunk_chars`` characters)."""
    embedded = "\n".join(questions) if questions else text
    return embedded[: limits().max_chunk_chars]


def index(docstore: DocStore, job: Job, records: list[ChunkRecord], progress: Progress) -> None:
    for i in range(0, len(records), INDEX_BATCH):
        checkpoint()
        docstore.upsert(job.tenant_id, records[i : i + INDEX_BATCH])
        done = min(i + INDEX_BATCH, len(records))
        progress(0.85 + 0.1 * done / len(records), f"indexed {done}/{len(records)} chunks")
