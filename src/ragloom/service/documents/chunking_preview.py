"""The chunk methods as a form can show them, and a preview of how a sample file would be chunked.

:func:`methods` describes each registered chunk method and the parameters it reads (type, default,
bounds, meaning — from :class:`~ragloom.ingest.chunkers.config.ChunkerConfig` itself, so a form built
from it validates as the API does). :func:`preview` parses a sample (an uploaded file or one of the
knowledge base's documents) and chunks it with the given method and parameters, without storing
anything: a PDF's first :data:`PREVIEW_PAGES` pages, in a child process of the server's sandbox
(:mod:`ragloom.ingest.sandbox`) that is killed when it goes over its CPU or memory limit.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from ragloom.config import Settings
from ragloom.context import Context, Principal
from ragloom.dataflow import ParsedDocument
from ragloom.errors import InvalidRequestError, ParseError
from ragloom.ingest.guard import IngestLimits
from ragloom.schemas.chunking import (
    PREVIEW_CHARS,
    PREVIEW_CHUNKS,
    ChunkingPreview,
    ChunkMethod,
    ChunkMethodList,
    MethodParameter,
    PreviewChunk,
)
from ragloom.service import knowledgebases
from ragloom.service.accounts import workspace_models
from ragloom.service.documents import catalog, figures

PREVIEW_PAGES = 5  # of a PDF: enough to see the method at work, quick enough for a form
PREVIEW_SECONDS = 60.0

BUDGET = ("chunk_token_num", "delimiter", "overlapped_percent", "heading_prefix")
SECTIONED = (*BUDGET, "toc_extraction", "task_page_size")
ENRICH = ("auto_keywords", "auto_questions", "metadata_fields")  # chat-model enrichment (knowledge/enrich.py)

# The parameters each built-in method reads (the others are accepted and ignored, except the ones
# ChunkerConfig refuses for a method that cannot use them). A plugin's method gets every parameter.
PARAMETERS: dict[str, tuple[str, ...]] = {
    "naive": (*BUDGET, "children_delimiter", "toc_extraction", "task_page_size", *ENRICH),
    "title": (*BUDGET, "title_depth", "children_delimiter", "toc_extraction", "task_page_size", *ENRICH),
    "book": (*SECTIONED, *ENRICH),
    "laws": (*SECTIONED, *ENRICH),
    "manual": (*SECTIONED, *ENRICH),
    "paper": (*SECTIONED, *ENRICH),
    "email": (*BUDGET, *ENRICH),
    "qa": ("chunk_token_num", "task_page_size", *ENRICH),
    "table": ("task_page_size", *ENRICH),
    "presentation": ("task_page_size", *ENRICH),
    "picture": ("picture_min_chars", *ENRICH),
    "one": ENRICH,
    "tag": ("task_page_size",),
}

SUMMARIES: dict[str, str] = {
    "naive": "Packs text into chunks of up to chunk_token_num tokens, cutting at the delimiters; general purpose.",
    "title": "One chunk per section (headings down to title_depth), prefixed with its heading path.",
    "book": "Drops the table of contents and packs whole sections while they fit the budget.",
    "laws": "One chunk per article, with its chapter and section titles.",
    "manual": "Top-level sections apart, their subsections packed together while they fit.",
    "paper": "Front matter, the abstract as its own chunk, then the body's sections.",
    "qa": "Question/answer pairs (Q:/A: text, two-column sheets); only the question is indexed.",
    "table": "One chunk per spreadsheet or CSV row, its cells kept as typed fields.",
    "presentation": "One chunk per slide or PDF page, with the slide's notes.",
    "picture": "The OCR text of an image as one chunk.",
    "one": "The whole document as a single chunk.",
    "email": "Headers, body and each attachment, each packed like naive.",
    "tag": "A tag set: each row is (content, tags); other knowledge bases take their tags from it.",
}


def _parameter(name: str) -> MethodParameter:
    from ragloom.ingest.chunkers.config import ChunkerConfig

    info = ChunkerConfig.model_fields[name]
    schema = ChunkerConfig.model_json_schema()["properties"][name]
    kinds = [schema] if "type" in schema else schema.get("anyOf", [])
    main = next((k for k in kinds if k.get("type") != "null"), schema)
    return MethodParameter(
        name=name, type=main.get("type", "string"), default=info.get_default(call_default_factory=True),
        minimum=main.get("minimum"), maximum=main.get("maximum"), max_length=main.get("maxLength"),
        nullable=any(k.get("type") == "null" for k in kinds), description=info.description or "")


def methods() -> ChunkMethodList:
    """Every registered chunk method with the parameters it reads."""
    from ragloom.ingest.chunkers.config import ChunkerConfig

    every = tuple(n for n in ChunkerConfig.model_fields if n != "method")
    out = []
    for name in knowledgebases.chunk_methods():
        params = PARAMETERS.get(name, every)
        out.append(ChunkMethod(name=name, description=SUMMARIES.get(name, "a chunk method of a plugin"),
                               parameters=[_parameter(p) for p in params]))
    return ChunkMethodList(methods=out)


@dataclass(frozen=True)
class Sample:
    """The file to chunk: uploaded bytes, or a document of the knowledge base (``document_id``)."""

    filename: str = ""
    data: bytes | None = None
    document_id: str | None = None


def preview(ctx: Context, session: Session, *, principal: Principal, kb_id: str, sample: Sample,
            chunk_method: str | None, parser_config: dict[str, Any] | None) -> ChunkingPreview:
    """Parse ``sample`` and chunk it with ``chunk_method`` and ``parser_config`` (default: the knowledge
    base's), validated as saving them would be. Parse problems are :class:`ParseError` (a 422).

    The file is read in a child process of :attr:`Context.sandbox` under its CPU and memory limits
    (``RAGLOOM_SANDBOX_CPU_SECONDS``, ``RAGLOOM_SANDBOX_MEMORY_MB``), one preview per user at a time:
    never in the server's own process."""
    kb = knowledgebases.get(session, principal=principal, kb_id_or_name=kb_id)
    method = chunk_method or kb.chunk_method
    config = kb.parser_config if parser_config is None else parser_config
    knowledgebases.validate_chunking(method, config)
    data: bytes | None = None
    file_key = None
    if sample.document_id:  # read by the child from the object store, not by this process
        filename, file_key = catalog.original_key(session, principal=principal, kb_id=kb.id,
                                                     doc_id=sample.document_id)
    elif sample.data is not None:
        filename, data = sample.filename or "sample", sample.data
        if not data:
            raise ParseError(f"{filename!r} is empty")
    else:
        raise InvalidRequestError("send a sample file (field 'file') or a document of the knowledge base "
                                  "('document_id')")
    workspace_models.embedder(ctx, kb.embedding_model)  # the model still resolves (else a clear 409)
    job = _Job(data=data, file_key=file_key, filename=filename, method=method, config=config,
               limits=IngestLimits.from_settings(ctx.settings), embedding_model=kb.embedding_model,
               settings=ctx.settings, language=kb.language)
    outcome = ctx.sandbox.run(chunk_sample, job, limits=ctx.sandbox_limits(), key=f"user:{principal.user_id}")
    model, calls = figures.estimate(ctx, principal.tenant_id, outcome.pop("picture_hashes"))
    return ChunkingPreview(filename=filename, chunk_method=method, parser_config=config, vision_model=model,
                           vision_calls=calls, **outcome)


@dataclass(frozen=True)
class _Job:
    """What the child process needs to chunk a sample (it pickles)."""

    data: bytes | None  # the sample, or None: the stored file ``file_key``
    file_key: str | None
    filename: str
    method: str
    config: dict[str, Any]
    limits: IngestLimits
    embedding_model: str
    settings: Settings
    language: str = ""  # the knowledge base's: scans are read, or refused, as at ingestion


def chunk_sample(job: _Job) -> dict[str, Any]:
    """In the sandbox's child: parse and chunk ``job``'s file under the preview's guard; the preview's
    fields (all but the file name, method and parameters)."""
    from ragloom.ingest import pipeline
    from ragloom.ingest.guard import TaskGuard, guarded

    count_tokens = _token_counter(job.embedding_model, job.settings)
    guard = TaskGuard(job.limits, time_limit=PREVIEW_SECONDS, memory_limit_mb=job.settings.sandbox_memory_mb)
    with guarded(guard):
        data = job.data if job.data is not None else _stored(job)
        if not data:
            raise ParseError(f"{job.filename!r} is empty")
        from ragloom.ingest.ocr import scans_in

        with scans_in(job.language):
            parsed, pages_total = _parse(data, job.filename)
        chunks = pipeline.chunk_parsed(parsed, job.method, job.config, count_tokens)
        from ragloom.ingest.figures import NO_FIGURE_METHODS, find_figures

        found = [] if job.method in NO_FIGURE_METHODS else find_figures(parsed, data, job.filename)
    shown = []
    for c in chunks[:PREVIEW_CHUNKS]:
        pages = [p for p in c.pages if p > 0] if parsed.page_sizes else []  # 0: a flowing format's anchors
        shown.append(PreviewChunk(order=c.order, text=c.text[:PREVIEW_CHARS], tokens=count_tokens(c.text),
                                  pages=pages, truncated=len(c.text) > PREVIEW_CHARS))
    return {"pages_parsed": len(parsed.page_sizes) or None, "pages_total": pages_total,
            "blocks": len(parsed.blocks), "chunk_count": len(chunks), "chunks": shown, "figures": len(found),
            "picture_hashes": [hashlib.sha256(f.png).hexdigest() for f in found]}


def _stored(job: _Job) -> bytes:
    from ragloom.storage import open_object_store

    assert job.file_key is not None
    return open_object_store(job.settings).get(job.file_key)


_COUNTERS: dict[str, Callable[[str], int]] = {}  # per child process: the embedding models' token counters


def _token_counter(name: str, settings: Settings) -> Callable[[str], int]:
    """How the knowledge base's embedding model counts tokens: a workspace provider's (a remote API,
    whose count is an estimate made here) or a registry model's, built once per child."""
    from ragloom.models.embedding import estimate_tokens
    from ragloom.models.registry import make_embedder

    if name.startswith(workspace_models.PREFIX):
        return estimate_tokens
    if name not in _COUNTERS:
        _COUNTERS[name] = make_embedder(name, settings.model_copy(update={"embedding_threads": 1})).count_tokens
    return _COUNTERS[name]


def _parse(data: bytes, filename: str) -> tuple[ParsedDocument, int | None]:
    """The sample's blocks (a PDF's first pages) and, for a PDF, its page count."""
    from ragloom.ingest import pipeline
    from ragloom.ingest.parsers import detect_type, pdf_page_count

    if detect_type(filename, data) == "application/pdf":
        total = pdf_page_count(data, filename)
        return pipeline.parse_file(data, filename, pages=(1, min(total, PREVIEW_PAGES))), total
    return pipeline.parse_file(data, filename), None
