"""RAGFlow's HTTP API under ``/ragflow`` (``/ragflow/api/v1/...``): RAGFlow's clients (``ragflow-sdk``,
its MCP server, Dify's "RAGFlow" external knowledge) work against ragloom with only their base URL
(``http://HOST:PORT/ragflow``) and API key (a ragloom key, ``Authorization: Bearer``) changed.

A sub-application mounted by :func:`ragloom.api.app.create_app` when ``settings.ragflow_compat`` is on,
with its own OpenAPI document (``/ragflow/openapi.json``). It only translates shapes: every operation
calls ragloom's use cases (the same code path, isolation, limits, audit and rate limits as
``/api/v1``), as :mod:`ragloom.api.dify` does for Dify. Chat assistants, sessions and completions are
in :mod:`ragloom.api.ragflow_chats`.

RAGFlow's envelope: ``{"code": 0, "data": ...}`` on success, ``{"code": <n>, "message": ...}`` on
error with HTTP 200 (:func:`install_errors`, the one place ragloom's errors become RAGFlow's codes):
101 a bad argument, 102 not found / not the caller's / refused (another workspace's id is "not
found", as an unknown one), 108 not allowed (a read-only key writing), 100 any other failure; HTTP
401 (code 401) without a valid key, 429 (code 429) over the rate limit, 404 (code 404) for a route
RAGFlow does not have either. RAGFlow routes ragloom has no equivalent of answer code 102 "... is
not supported by ragloom" (:func:`unsupported`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from datetime import datetime
from typing import Annotated, Any, NoReturn
from urllib.parse import quote

from fastapi import APIRouter, Body, FastAPI, File, Query, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from ragloom import __version__
from ragloom.api.deps import READS, ContextDep, PrincipalDep, rate_limited
from ragloom.api.ratelimit import refund_charge
from ragloom.api.uploads import SpoolingRoute, spooled
from ragloom.context import Context, Principal
from ragloom.errors import (
    AuthenticationError,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    RagloomError,
    RateLimitedError,
    http_status,
)
from ragloom.schemas.chunks import StoredChunk
from ragloom.schemas.datasets import Dataset, KBCreate, KBUpdate
from ragloom.schemas.dify import DifyMetadataConditions
from ragloom.schemas.documents import Document
from ragloom.schemas.options import RetrievalOptions
from ragloom.schemas.ragflow import (
    ARGUMENT_ERROR,
    CHUNK_METHODS,
    DATA_ERROR,
    EXCEPTION_ERROR,
    MAX_DATASET_PAGE_SIZE,
    MAX_PAGE_SIZE,
    PERMISSION_ERROR,
    RFAddedChunk,
    RFAutoMetadataConfig,
    RFChunk,
    RFChunkCreate,
    RFChunkDelete,
    RFChunkList,
    RFChunkSwitch,
    RFChunkUpdate,
    RFCode,
    RFDataset,
    RFDatasetCreate,
    RFDatasetUpdate,
    RFDeleted,
    RFDeleteRequest,
    RFDocAgg,
    RFDocument,
    RFDocumentIds,
    RFDocumentList,
    RFDocumentUpdate,
    RFError,
    RFHealth,
    RFListDatasets,
    RFNewChunk,
    RFResult,
    RFRetrieval,
    RFRetrievalRequest,
    RFRetrievedChunk,
    RFSuccessCount,
    RunStatus,
)
from ragloom.service import knowledgebases
from ragloom.service.documents import catalog, chunk_edits, chunks
from ragloom.service.documents.views import document_view, stored_chunk_view
from ragloom.service.knowledgebases import kb_view
from ragloom.service.search.retrieval import check_documents, search
from ragloom.service.search.views import retrieval_view

BASE = "/ragflow"
API = "/api/v1"
UNAUTHORIZED = "<Unauthorized '401: Unauthorized'>"


# --- errors: the one place ragloom's errors become RAGFlow's codes ---------------------------------


class RFFailure(Exception):
    """An error answered with RAGFlow's envelope: ``code``, ``message`` and (rarely) ``data``."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def fail(code: int, message: str, data: Any = None) -> NoReturn:
    raise RFFailure(code, message, data)


def _reply(code: int, message: str, status: int = 200, data: Any = None,
           headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(RFError(code=code, message=message, data=data).model_dump(), status_code=status,
                        headers=headers)


def error_code(exc: RagloomError) -> tuple[int, int]:
    """RAGFlow's ``(code, HTTP status)`` for one of ragloom's errors."""
    if isinstance(exc, AuthenticationError):
        return 401, 401
    if isinstance(exc, RateLimitedError):
        return 429, 429
    if isinstance(exc, InvalidRequestError):  # and PayloadTooLargeError
        return ARGUMENT_ERROR, 200
    if isinstance(exc, PermissionDeniedError):
        return PERMISSION_ERROR, 200
    if isinstance(exc, NotFoundError | ConflictError):
        return DATA_ERROR, 200
    return (EXCEPTION_ERROR if http_status(exc) >= 500 else DATA_ERROR), 200


def _field_errors(exc: RequestValidationError | ValidationError) -> str:
    lines = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err.get("loc", ()) if x not in ("body", "query", "path"))
        lines.append(f"Field: <{loc}> - Message: <{err.get('msg')}> - Value: <{err.get('input', '')}>")
    return "\n".join(lines) or "invalid request"


def install_errors(app: FastAPI) -> None:
    @app.exception_handler(RFFailure)
    async def _failure(_: Request, exc: RFFailure) -> JSONResponse:
        return _reply(exc.code, exc.message, data=exc.data)

    @app.exception_handler(RagloomError)
    async def _ragloom(_: Request, exc: RagloomError) -> JSONResponse:
        code, status = error_code(exc)
        headers = None
        message = exc.message
        if status == 401:
            message = f"{UNAUTHORIZED} {exc.message}"
        if isinstance(exc, RateLimitedError):
            headers = {"Retry-After": str(max(1, math.ceil(exc.retry_after)))}
        return _reply(code, message, status, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        refund_charge(request.scope)  # refused before any work: the rate-limit token goes back
        return _reply(ARGUMENT_ERROR, _field_errors(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 404:
            body = {"code": 404, "message": f"Not Found: {request.url.path}", "data": None, "error": "Not Found"}
            return JSONResponse(body, status_code=404)
        return _reply(exc.status_code, str(exc.detail), exc.status_code)


# --- shapes ---------------------------------------------------------------------------------------


def _time(iso: str | None) -> tuple[int | None, str | None]:
    """RAGFlow's ``create_time`` (ms since the epoch) and ``create_date`` of an ISO timestamp."""
    if not iso:
        return None, None
    dt = datetime.fromisoformat(iso)
    return int(dt.timestamp() * 1000), dt.strftime("%a, %d %b %Y %H:%M:%S GMT")


def dataset_out(d: Dataset, principal: Principal, chunk_count: int) -> RFDataset:
    created, created_date = _time(d.created_at)
    return RFDataset(
        id=d.id, name=d.name, description=d.description or None, tenant_id=principal.tenant_id, created_by="",
        language=d.language, permission=d.permission, embedding_model=d.embedding_model,
        chunk_method=d.chunk_method, parser_config=d.parser_config, pagerank=d.pagerank,
        document_count=d.document_count or 0, chunk_count=chunk_count,
        similarity_threshold=float(d.similarity_threshold), vector_similarity_weight=float(d.vector_similarity_weight),
        create_time=created, create_date=created_date, update_time=created, update_date=created_date)


RUN: dict[str, RunStatus] = {"queued": "RUNNING", "running": "RUNNING", "done": "DONE", "failed": "FAIL",
                             "cancelled": "CANCEL"}
RUN_FILTER: dict[str, RunStatus] = {"UNSTART": "UNSTART", "0": "UNSTART", "RUNNING": "RUNNING", "1": "RUNNING",
                                     "CANCEL": "CANCEL", "2": "CANCEL", "DONE": "DONE", "3": "DONE", "FAIL": "FAIL",
                                     "4": "FAIL"}
_IMAGES = {"png", "jpg", "jpeg", "gif", "bmp", "tif", "tiff", "webp"}


def _doc_type(ext: str) -> str:
    if ext == "pdf":
        return "pdf"
    if ext in _IMAGES:
        return "visual"
    if ext in ("ppt", "pptx"):
        return "presentation"
    return "doc"


def document_out(d: Document, kb_method: str, held: set[str] | frozenset[str] = frozenset()) -> RFDocument:
    """``held``: the ids of documents uploaded and not yet asked to be parsed (``UNSTART``)."""
    created, created_date = _time(d.created_at)
    updated, updated_date = _time(d.updated_at)
    run: RunStatus = "UNSTART" if d.id in held else RUN.get(d.status, "RUNNING")
    progress = (-1.0 if run == "FAIL" else 1.0 if run == "DONE" else 0.0 if run == "UNSTART"
                else min(float(d.progress), 0.99))
    return RFDocument(
        id=d.id, name=d.name, dataset_id=d.kb_id, chunk_method=d.chunk_method or kb_method,
        parser_config=d.parser_config or {}, type=_doc_type(d.file_type), suffix=d.file_type, location=d.name,
        size=d.size or 0, thumbnail=d.thumbnail, chunk_count=d.chunk_count, progress=progress,
        progress_msg=d.message, run=run, meta_fields=dict(d.metadata), create_time=created,
        create_date=created_date, update_time=updated, update_date=updated_date)


def chunk_out(c: StoredChunk, dataset_id: str) -> RFChunk:
    return RFChunk(id=c.chunk_id, content=c.content, document_id=c.doc_id, docnm_kwd=c.document_name,
                   important_keywords=list(c.important_keywords), tag_kwd=list(c.tag_keywords or c.tags),
                   questions=list(c.questions), dataset_id=dataset_id,
                   doc_type_kwd="table" if c.kind == "table" else "text", available=c.available,
                   positions=[[float(x) for x in p] for p in c.positions])


# --- paging ---------------------------------------------------------------------------------------


def _page(value: str | None) -> int:
    try:
        n = int(value) if value is not None else 1
    except ValueError:
        return 1
    return n if n >= 1 else 1


def _page_size(value: str | None, limit: int = MAX_PAGE_SIZE) -> int:
    try:
        n = int(value) if value is not None else 30
    except ValueError:
        return 30
    if n < 1:
        return 30
    if n > limit:
        fail(ARGUMENT_ERROR, f"Field: <page_size> - Message: <Value error, page_size must be less than or equal to "
                             f"{limit}> - Value: <{n}>")
    return n


def _desc(value: str | None) -> bool:
    return value is None or value.strip().lower() != "false"


def _ids(values: list[str] | None) -> list[str]:
    """Repeated (``ids=a&ids=b``) and comma-separated ids alike."""
    out = [part.strip() for v in values or [] for part in v.split(",") if part.strip()]
    if len(out) > 100:
        fail(ARGUMENT_ERROR, "at most 100 ids")
    return out


def _no_duplicates(ids: list[str]) -> None:
    dup = [i for i, n in Counter(ids).items() if n > 1]
    if dup:
        fail(ARGUMENT_ERROR, f"Duplicate ids: '{', '.join(dup)}'")


PageArg = Annotated[str | None, Query(description="1-based (default 1)")]
PageSizeArg = Annotated[str | None, Query(description=f"default 30, at most {MAX_PAGE_SIZE}")]
DescArg = Annotated[str | None, Query(description="anything but 'false': newest first (default)")]


# --- the routes -----------------------------------------------------------------------------------

router = APIRouter(prefix=API)
# the upload's multipart body is received straight to disk, as /api/v1's (api/uploads.py)
upload_router = APIRouter(prefix=API, route_class=SpoolingRoute)


def _chunk_count(ctx: Context, principal: Principal, kb_id: str) -> int:
    with ctx.db.session() as s:
        docs, _ = catalog.list_documents(s, principal=principal, kb_id=kb_id, limit=100_000)
        return sum(d.chunk_count for d in docs)


def _dataset(ctx: Context, principal: Principal, kb_id: str) -> RFDataset:
    with ctx.db.session() as s:
        kb = knowledgebases.get(s, principal=principal, kb_id_or_name=kb_id)
        count = knowledgebases.document_counts(s, [kb], principal=principal).get(kb.id, 0)
        view = kb_view(kb, count, fusion=ctx.settings.fusion)
    return dataset_out(view, principal, _chunk_count(ctx, principal, view.id))


def _lacks(principal: Principal, what: str) -> NoReturn:
    fail(DATA_ERROR, f"User '{principal.tenant_id}' lacks permission for dataset '{what}'")


# ---- datasets


@router.post("/datasets", tags=["datasets"], summary="Create a dataset")
def create_dataset(body: RFDatasetCreate, ctx: ContextDep, principal: PrincipalDep) -> RFResult[RFDataset]:
    """A name taken already gets a suffix (``name(1)``, ``name(2)``...), as RAGFlow does: use the
    returned ``name`` and ``id``."""
    name = body.name.strip()
    if not name:
        fail(ARGUMENT_ERROR, "Field: <name> - Message: <String should have at least 1 character> - Value: <>")
    if body.chunk_method not in CHUNK_METHODS:
        fail(ARGUMENT_ERROR, f"Field: <chunk_method> - Message: <Input should be one of {', '.join(CHUNK_METHODS)}> "
                             f"- Value: <{body.chunk_method}>")
    with ctx.db.session() as s:
        taken = {kb.name for kb in knowledgebases.list_visible(s, principal=principal)}
        unique, n = name, 0
        while unique in taken:
            n += 1
            unique = f"{name}({n})"
        config = dict(body.parser_config or {})
        if body.auto_metadata_config is not None:
            config["metadata_fields"] = metadata_fields(body.auto_metadata_config)
        spec = KBCreate(name=unique, description=body.description or "", permission=body.permission,
                        chunk_method=body.chunk_method, parser_config=config,
                        embedding_model=body.embedding_model)
        kb = knowledgebases.create(ctx, s, principal=principal, spec=spec)
        view = kb_view(kb, 0, fusion=ctx.settings.fusion)
    return RFResult(data=dataset_out(view, principal, 0))


def metadata_fields(config: RFAutoMetadataConfig) -> dict[str, str]:
    """RAGFlow's ``auto_metadata_config`` as ragloom's ``metadata_fields`` ({name: what it is}, which the
    chat model fills in for each document): the type, examples and restriction are said in the
    description; disabled, none."""
    if not config.enabled:
        return {}
    out = {}
    for f in config.fields:
        what = (f.description or f.name).strip()
        if f.type == "list":
            what += " (a list of values)"
        elif f.type == "time":
            what += " (a date or time, ISO 8601)"
        if f.examples:
            what += ("; one of: " if f.restrict_values else "; e.g. ") + ", ".join(f.examples)
        out[f.name] = what[:500]
    return out


@router.get("/datasets", tags=["datasets"], summary="List datasets")
def list_datasets(
    ctx: ContextDep, principal: PrincipalDep, page: PageArg = None, page_size: PageSizeArg = None,
    orderby: Annotated[str, Query(description="create_time or update_time")] = "create_time",
    desc: DescArg = None, id: Annotated[str | None, Query(description="one dataset")] = None,
    ids: Annotated[list[str] | None, Query(description="several (repeated or comma-separated)")] = None,
    name: Annotated[str | None, Query(description="exact name")] = None,
) -> RFListDatasets[RFDataset]:
    if orderby not in ("create_time", "update_time"):
        fail(ARGUMENT_ERROR, f"Field: <orderby> - Message: <Input should be 'create_time' or 'update_time'> - "
                             f"Value: <{orderby}>")
    p, size, wanted = _page(page), _page_size(page_size, MAX_DATASET_PAGE_SIZE), _ids(ids)
    if id and wanted:
        fail(DATA_ERROR, f"Should not provide both 'id':{id} and 'ids'{wanted}")
    with ctx.db.session() as s:
        kbs = knowledgebases.list_visible(s, principal=principal)
        if id:
            kbs = [kb for kb in kbs if kb.id == id]
            if not kbs:
                _lacks(principal, id)
        if name:
            kbs = [kb for kb in kbs if kb.name.lower() == name.lower()]
            if not kbs:
                _lacks(principal, name)
        if wanted:
            kbs = [kb for kb in kbs if kb.id in set(wanted)]
        kbs.sort(key=lambda kb: (kb.created_at, kb.id), reverse=_desc(desc))
        total = len(kbs)
        kbs = kbs[(p - 1) * size:p * size]
        counts = knowledgebases.document_counts(s, kbs, principal=principal)
        views = [kb_view(kb, counts.get(kb.id, 0), fusion=ctx.settings.fusion) for kb in kbs]
    return RFListDatasets(data=[dataset_out(v, principal, _chunk_count(ctx, principal, v.id)) for v in views],
                          total_datasets=total)


@router.get("/datasets/{dataset_id}", tags=["datasets"], summary="Get a dataset")
def get_dataset(dataset_id: str, ctx: ContextDep, principal: PrincipalDep) -> RFResult[RFDataset]:
    try:
        return RFResult(data=_dataset(ctx, principal, dataset_id))
    except NotFoundError:
        _lacks(principal, dataset_id)


@router.put("/datasets/{dataset_id}", tags=["datasets"], summary="Update a dataset")
def update_dataset(dataset_id: str, body: RFDatasetUpdate, ctx: ContextDep,
                   principal: PrincipalDep) -> RFResult[RFDataset]:
    """``parser_config`` is merged into the dataset's; ``auto_metadata_config`` sets its
    ``metadata_fields``. The embedding model of a ragloom dataset changes only by a re-index
    (``POST /api/v1/datasets/{id}/reindex``): another one is refused."""
    given = body.model_dump(exclude_unset=True)
    if not given:
        fail(DATA_ERROR, "no properties were modified")
    if body.chunk_method is not None and body.chunk_method not in CHUNK_METHODS:
        fail(ARGUMENT_ERROR, f"Field: <chunk_method> - Message: <Input should be one of {', '.join(CHUNK_METHODS)}> "
                             f"- Value: <{body.chunk_method}>")
    with ctx.db.session() as s:
        try:
            kb = knowledgebases.get(s, principal=principal, kb_id_or_name=dataset_id)
        except NotFoundError:
            _lacks(principal, dataset_id)
        if body.embedding_model and body.embedding_model != kb.embedding_model:
            fail(DATA_ERROR, "ragloom keeps a dataset's embedding model: re-embed its documents with POST "
                             f"/api/v1/datasets/{kb.id}/reindex {{\"embedding_model\": ...}}")
        if body.name is not None and body.name.strip() != kb.name and any(
                k.name == body.name.strip() for k in knowledgebases.list_visible(s, principal=principal)):
            fail(DATA_ERROR, f"Dataset name '{body.name.strip()}' already exists")
        config = None
        if body.parser_config is not None:
            config = {**(kb.parser_config or {}), **body.parser_config}
        elif body.chunk_method is not None and body.chunk_method != kb.chunk_method:
            config = {}  # another method without parameters: that method's defaults
        if body.auto_metadata_config is not None:
            base = dict(kb.parser_config or {}) if config is None else config
            config = {**base, "metadata_fields": metadata_fields(body.auto_metadata_config)}
        changes: dict[str, Any] = {k: given[k] for k in ("permission", "chunk_method", "pagerank")
                                   if given.get(k) is not None}
        if body.name is not None:
            changes["name"] = body.name.strip()
        if "description" in given:
            changes["description"] = body.description or ""
        if config is not None:
            changes["parser_config"] = config
        spec = KBUpdate(**changes)
        kb = knowledgebases.update(s, principal=principal, kb_id_or_name=kb.id, spec=spec)
        count = knowledgebases.document_counts(s, [kb], principal=principal).get(kb.id, 0)
        view = kb_view(kb, count, fusion=ctx.settings.fusion)
    return RFResult(data=dataset_out(view, principal, _chunk_count(ctx, principal, view.id)))


@router.delete("/datasets", tags=["datasets"], summary="Delete datasets")
def delete_datasets(ctx: ContextDep, principal: PrincipalDep,
                    body: Annotated[RFDeleteRequest | None, Body()] = None) -> RFResult[RFSuccessCount]:
    """``ids`` (none: nothing is deleted) or ``delete_all``; an id that is not one of the caller's
    datasets deletes nothing."""
    req = body or RFDeleteRequest()
    with ctx.db.session() as s:
        visible = knowledgebases.list_visible(s, principal=principal)
        if req.delete_all:
            targets = [kb.id for kb in visible]
        else:
            targets = list(req.ids or [])
            _no_duplicates(targets)
            known = {kb.id for kb in visible}
            missing = [i for i in targets if i not in known]
            if missing:
                fail(DATA_ERROR, f"User '{principal.tenant_id}' lacks permission for datasets: '{', '.join(missing)}'")
        for kb_id in targets:
            knowledgebases.delete(ctx, s, principal=principal, kb_id_or_name=kb_id)
    return RFResult(data=RFSuccessCount(success_count=len(targets)))


# ---- documents


def _kb_method(ctx: Context, principal: Principal, dataset_id: str, *, missing: str | None = None) -> tuple[str, str]:
    """The dataset's id and chunk method; RAGFlow's message when it is not the caller's."""
    with ctx.db.session() as s:
        try:
            kb = knowledgebases.get(s, principal=principal, kb_id_or_name=dataset_id)
        except NotFoundError:
            fail(DATA_ERROR, missing or f"You don't own the dataset {dataset_id}. ")
        return kb.id, kb.chunk_method


def _document(ctx: Context, principal: Principal, kb_id: str, method: str, doc_id: str) -> RFDocument:
    with ctx.db.session() as s:
        try:
            doc = catalog.get(s, principal=principal, kb_id=kb_id, doc_id=doc_id)
        except NotFoundError:
            fail(DATA_ERROR, f"you don't own the document {doc_id}")
        return document_out(document_view(doc, catalog.file_facts(s, [doc])), method, catalog.held_ids(s, [doc]))


@upload_router.post("/datasets/{dataset_id}/documents", tags=["documents"], summary="Upload documents",
                    dependencies=[rate_limited("upload")])
def upload_documents(dataset_id: str, ctx: ContextDep, principal: PrincipalDep,
                     file: Annotated[list[UploadFile], File(description="one or more files (the part name is "
                                                                        "'file')")],
                     ) -> RFResult[list[RFDocument]]:
    """As in RAGFlow, the new documents wait to be parsed (``UNSTART``) until ``POST .../chunks`` asks,
    and a name already in the dataset makes a new document named ``name(1)`` (ragloom's own API parses
    at once, and makes a new version of the document instead)."""
    if len(file) > ctx.settings.max_upload_files:
        raise PayloadTooLargeError(f"{len(file)} files in one upload; the limit is {ctx.settings.max_upload_files} "
                                   "files per request (RAGLOOM_MAX_UPLOAD_FILES)")
    if any(not f.filename for f in file):
        fail(ARGUMENT_ERROR, "No file selected!")
    kb_id, method = _kb_method(ctx, principal, dataset_id, missing=f"Can't find the dataset with ID {dataset_id}!")
    uploads = [catalog.Upload(filename=f.filename or "", content_type=f.content_type or "",
                              spooled=spooled(f, ctx.settings)) for f in file]
    with ctx.db.session() as s:
        docs = catalog.add_documents(ctx, s, principal=principal, kb_id=kb_id, uploads=uploads,
                                     number_taken_names=True, hold=True)
        facts, held = catalog.file_facts(s, docs), catalog.held_ids(s, docs)
        return RFResult(data=[document_out(document_view(d, facts), method, held) for d in docs])


@router.get("/datasets/{dataset_id}/documents", tags=["documents"], summary="List documents")
def list_documents(
    dataset_id: str, ctx: ContextDep, principal: PrincipalDep, page: PageArg = None, page_size: PageSizeArg = None,
    orderby: Annotated[str, Query(description="create_time, update_time or name")] = "create_time",
    desc: DescArg = None,
    keywords: Annotated[str | None, Query(max_length=256, description="part of the name")] = None,
    id: Annotated[str | None, Query(description="one document")] = None,
    ids: Annotated[list[str] | None, Query(description="several (repeated or comma-separated)")] = None,
    name: Annotated[str | None, Query(description="exact name")] = None,
    suffix: Annotated[str | None, Query(max_length=16, description="file extension (pdf)")] = None,
    run: Annotated[list[str] | None, Query(description="UNSTART, RUNNING, CANCEL, DONE or FAIL (or 0-4)")] = None,
    create_time_from: Annotated[int, Query(description="ms since the epoch; 0: any")] = 0,
    create_time_to: Annotated[int, Query(description="ms since the epoch; 0: any")] = 0,
) -> RFResult[RFDocumentList]:
    if orderby not in ("create_time", "update_time", "name"):
        fail(ARGUMENT_ERROR, f"invalid orderby field: {orderby}")
    p, size, wanted = _page(page), _page_size(page_size), _ids(ids)
    if id and wanted:
        fail(DATA_ERROR, "Should not provide both 'id' and 'ids'")
    statuses: set[str] = set()
    for r in _ids(run):
        if r.upper() not in RUN_FILTER:
            fail(DATA_ERROR, f"Invalid filter run status conditions: {r}")
        statuses.add(RUN_FILTER[r.upper()])
    kb_id, method = _kb_method(ctx, principal, dataset_id)
    with ctx.db.session() as s:
        if id or name or wanted:
            docs = []
            for d in ([id] if id else [name] if name else wanted):
                try:
                    docs.append(catalog.get(s, principal=principal, kb_id=kb_id, doc_id=str(d)))
                except NotFoundError:
                    fail(DATA_ERROR, f"you don't own the document {d}")
        else:
            where = catalog.DocumentFilter(type=suffix, name=keywords or None)
            docs, _ = catalog.list_documents(s, principal=principal, kb_id=kb_id, limit=100_000, where=where)
        held = catalog.held_ids(s, docs)
        if statuses:
            docs = [d for d in docs if ("UNSTART" if d.id in held else RUN.get(d.status, "RUNNING")) in statuses]
        if orderby == "name":
            docs.sort(key=lambda d: d.name, reverse=_desc(desc))
        else:
            key = "created_at" if orderby == "create_time" else "updated_at"
            docs.sort(key=lambda d: (getattr(d, key) or d.created_at, d.id), reverse=_desc(desc))
        total = len(docs)
        docs = docs[(p - 1) * size:p * size]
        facts = catalog.file_facts(s, docs)
        out = [document_out(document_view(d, facts), method, held) for d in docs]
    if create_time_from or create_time_to:  # after paging, as RAGFlow does
        out = [d for d in out if d.create_time is not None and d.create_time >= create_time_from
               and (not create_time_to or d.create_time <= create_time_to)]
    return RFResult(data=RFDocumentList(total=total, docs=out))


@router.get("/datasets/{dataset_id}/documents/{document_id}", tags=["documents"], summary="Download a document",
            response_class=Response,
            responses={200: {"content": {"application/octet-stream": {}},
                             "description": "the original file as an attachment"}})
def download_document(dataset_id: str, document_id: str, ctx: ContextDep, principal: PrincipalDep) -> Response:
    from ragloom.schemas.names import ascii_filename

    kb_id, _ = _kb_method(ctx, principal, dataset_id)
    with ctx.db.session() as s:
        try:
            stored = catalog.open_original(ctx, s, principal=principal, kb_id=kb_id, doc_id=document_id)
        except NotFoundError:
            fail(DATA_ERROR, f"The dataset not own the document {document_id}.")
    name = stored.name
    disposition = f"attachment; filename=\"{ascii_filename(name)}\"; filename*=UTF-8''{quote(name, safe='')}"
    headers = {"Content-Disposition": disposition, "Content-Security-Policy": "sandbox"}
    if stored.size > 0:
        headers["Content-Length"] = str(stored.size)
    return StreamingResponse(stored.pieces, media_type=stored.media_type, headers=headers)


_META_SCALAR = (str, int, float)


def _check_meta(meta: dict[str, Any]) -> None:
    for value in meta.values():
        ok = isinstance(value, _META_SCALAR) and not isinstance(value, bool) or (
            isinstance(value, list) and all(isinstance(v, _META_SCALAR) and not isinstance(v, bool) for v in value))
        if not ok:
            fail(DATA_ERROR, f"The type is not supported: {value}")


def _update_document(dataset_id: str, document_id: str, body: RFDocumentUpdate, ctx: Context,
                     principal: Principal) -> RFResult[RFDocument]:
    kb_id, method = _kb_method(ctx, principal, dataset_id)
    given = body.model_dump(exclude_unset=True)
    if "name" in given and body.name is None:
        fail(DATA_ERROR, "The name cannot be null")
    if body.chunk_method is not None and body.chunk_method not in (*CHUNK_METHODS, "knowledge_graph", "audio"):
        fail(DATA_ERROR, f"`chunk_method` {body.chunk_method} doesn't exist")
    if body.meta_fields is not None:
        _check_meta(body.meta_fields)
    with ctx.db.session() as s:
        try:
            doc = catalog.get(s, principal=principal, kb_id=kb_id, doc_id=document_id)
        except NotFoundError:
            fail(DATA_ERROR, f"the dataset doesn't own the document {document_id}")
        if body.name is not None and body.name != doc.name:
            try:
                doc = catalog.rename(s, principal=principal, kb_id=kb_id, doc_id=doc.id, name=body.name)
            except ConflictError:
                fail(DATA_ERROR, "Duplicated document name in the same dataset.")
            except InvalidRequestError as exc:
                extension = "extension" in exc.message
                fail(ARGUMENT_ERROR, f"The extension of file can't be changed ({exc.message})" if extension
                     else exc.message)
        if body.meta_fields is not None:
            changes: dict[str, Any] = {k: None for k in (doc.meta or {}) if k not in body.meta_fields}
            changes.update(body.meta_fields)
            doc = catalog.set_metadata(s, principal=principal, kb_id=kb_id, doc_id=doc.id, changes=changes)
        chunking = body.chunk_method is not None and body.chunk_method != (doc.chunk_method or method)
        if chunking or body.parser_config is not None:
            new_method = body.chunk_method or doc.chunk_method or method
            config = body.parser_config if body.parser_config is not None else {}
            doc = catalog.set_chunking(ctx, s, principal=principal, kb_id=kb_id, doc_id=doc.id,
                                       chunk_method=new_method, parser_config=config)
        return RFResult(data=document_out(document_view(doc, catalog.file_facts(s, [doc])), method,
                                          catalog.held_ids(s, [doc])))


@router.patch("/datasets/{dataset_id}/documents/{document_id}", tags=["documents"], summary="Update a document")
def update_document(dataset_id: str, document_id: str, body: RFDocumentUpdate, ctx: ContextDep,
                    principal: PrincipalDep) -> RFResult[RFDocument]:
    """``name`` renames it (same extension), ``meta_fields`` replaces its metadata, ``chunk_method`` /
    ``parser_config`` re-parse it with them."""
    return _update_document(dataset_id, document_id, body, ctx, principal)


@router.put("/datasets/{dataset_id}/documents/{document_id}", tags=["documents"],
            summary="Update a document (RAGFlow's deprecated alias of PATCH)")
def update_document_put(dataset_id: str, document_id: str, body: RFDocumentUpdate, ctx: ContextDep,
                        principal: PrincipalDep) -> RFResult[RFDocument]:
    return _update_document(dataset_id, document_id, body, ctx, principal)


@router.delete("/datasets/{dataset_id}/documents", tags=["documents"], summary="Delete documents")
def delete_documents(dataset_id: str, ctx: ContextDep, principal: PrincipalDep,
                     body: Annotated[RFDeleteRequest | None, Body()] = None) -> RFResult[RFDeleted]:
    req = body or RFDeleteRequest()
    kb_id, _ = _kb_method(ctx, principal, dataset_id)
    if not req.ids and not req.delete_all:
        fail(DATA_ERROR, f"should either provide doc ids or set delete_all(true), dataset: {dataset_id}. ")
    if req.ids and req.delete_all:
        fail(DATA_ERROR, f"should not provide both doc ids and delete_all(true), dataset: {dataset_id}. ")
    with ctx.db.session() as s:
        if req.delete_all:
            docs, _ = catalog.list_documents(s, principal=principal, kb_id=kb_id, limit=100_000)
            ids = [d.id for d in docs]
        else:
            ids = list(req.ids or [])
            _no_duplicates(ids)
            missing = []
            for i in ids:
                try:
                    catalog.get(s, principal=principal, kb_id=kb_id, doc_id=i)
                except NotFoundError:
                    missing.append(i)
            if missing:
                fail(DATA_ERROR, f"These documents do not belong to dataset {dataset_id} or Document not found: "
                                 f"{', '.join(missing)}")
        n = catalog.delete_documents(ctx, s, principal=principal, kb_id=kb_id, doc_ids=ids)
    return RFResult(data=RFDeleted(deleted=n))


@router.post("/datasets/{dataset_id}/chunks", tags=["documents"], summary="Parse documents",
             dependencies=[rate_limited("reparse")])
def parse_documents(dataset_id: str, ctx: ContextDep, principal: PrincipalDep,
                    body: Annotated[RFDocumentIds | None, Body()] = None) -> RFCode:
    """Parse each document: one waiting since its upload (``UNSTART``) starts; another is re-parsed (a
    new version, published when built); one being parsed is left to finish (not an error, unlike
    RAGFlow)."""
    ids = (body.document_ids if body else None) or []
    if not ids:
        fail(DATA_ERROR, "`document_ids` is required")
    kb_id, _ = _kb_method(ctx, principal, dataset_id)
    missing = []
    with ctx.db.session() as s:
        for i in dict.fromkeys(ids):
            try:
                doc = catalog.get(s, principal=principal, kb_id=kb_id, doc_id=i)
            except NotFoundError:
                missing.append(i)
                continue
            if doc.status not in ("queued", "running") or catalog.held_ids(s, [doc]):
                catalog.reparse(ctx, s, principal=principal, kb_id=kb_id, doc_id=doc.id)
    if missing:
        fail(DATA_ERROR, f"Documents not found: {missing}")
    return RFCode()


@router.delete("/datasets/{dataset_id}/chunks", tags=["documents"], summary="Stop parsing documents")
def stop_parsing(dataset_id: str, ctx: ContextDep, principal: PrincipalDep,
                 body: Annotated[RFDocumentIds | None, Body()] = None) -> RFCode:
    ids = (body.document_ids if body else None) or []
    if not ids:
        fail(DATA_ERROR, "`document_ids` is required")
    kb_id, _ = _kb_method(ctx, principal, dataset_id)
    with ctx.db.session() as s:
        for i in dict.fromkeys(ids):
            try:
                doc = catalog.get(s, principal=principal, kb_id=kb_id, doc_id=i)
            except NotFoundError:
                fail(DATA_ERROR, f"you don't own the document {i}")
            if doc.status not in ("queued", "running") or catalog.held_ids(s, [doc]):
                fail(DATA_ERROR, "Can't stop parsing document that has not started or already completed",
                     {"error_code": "DOC_STOP_PARSING_INVALID_STATE"})
            catalog.cancel(s, principal=principal, kb_id=kb_id, doc_id=doc.id)
    return RFCode()


# ---- chunks

HIDDEN_KINDS = ("parent", "toc", "summary")  # rows never listed as a document's chunks
MAX_LISTED_CHUNKS = 100_000


def _chunks(ctx: Context, principal: Principal, kb_id: str, doc_id: str) -> list[StoredChunk]:
    """The document's chunks in reading order, disabled ones included (RAGFlow lists them)."""
    with ctx.db.session() as s:
        listing = chunks.list_chunks(ctx, s, principal=principal, kb_id=kb_id, doc_id=doc_id,
                                     limit=MAX_LISTED_CHUNKS, include_hidden=True)
    return [stored_chunk_view(r, listing.method) for r in listing.chunks if r.kind not in HIDDEN_KINDS]


def _owned_document(ctx: Context, principal: Principal, dataset_id: str, document_id: str) -> tuple[str, str]:
    kb_id, method = _kb_method(ctx, principal, dataset_id)
    with ctx.db.session() as s:
        try:
            doc = catalog.get(s, principal=principal, kb_id=kb_id, doc_id=document_id)
        except NotFoundError:
            fail(DATA_ERROR, f"you don't own the document {document_id}")
        return kb_id, doc.id


@router.get("/datasets/{dataset_id}/documents/{document_id}/chunks", tags=["chunks"], summary="List chunks")
def list_chunks(
    dataset_id: str, document_id: str, ctx: ContextDep, principal: PrincipalDep, page: PageArg = None,
    page_size: PageSizeArg = None,
    keywords: Annotated[str | None, Query(max_length=256, description="words the chunk contains")] = None,
    id: Annotated[str | None, Query(description="one chunk")] = None,
    available: Annotated[str | None, Query(description="true or false")] = None,
) -> RFResult[RFChunkList]:
    p, size = _page(page), _page_size(page_size)
    kb_id, doc_id = _owned_document(ctx, principal, dataset_id, document_id)
    rows = _chunks(ctx, principal, kb_id, doc_id)
    if id:
        rows = [c for c in rows if c.chunk_id == id]
        if not rows:
            fail(DATA_ERROR, f"Chunk not found: {dataset_id}/{id}")
    if keywords and keywords.strip():
        words = keywords.lower().split()
        rows = [c for c in rows if all(w in c.content.lower() for w in words)]
    if available is not None and available.strip():
        want = available.strip().lower() not in ("false", "0")
        rows = [c for c in rows if c.available == want]
    doc = _document(ctx, principal, kb_id, _kb_method(ctx, principal, kb_id)[1], doc_id)
    return RFResult(data=RFChunkList(total=len(rows), chunks=[chunk_out(c, kb_id)
                                                              for c in rows[(p - 1) * size:p * size]], doc=doc))


@router.post("/datasets/{dataset_id}/documents/{document_id}/chunks", tags=["chunks"], summary="Add a chunk")
def add_chunk(dataset_id: str, document_id: str, body: RFChunkCreate, ctx: ContextDep,
              principal: PrincipalDep) -> RFResult[RFAddedChunk]:
    """A chunk of your own text after the document's last one, searchable at once and kept over
    re-parses, with its ``important_keywords`` and ``questions`` (matched beside the text; questions are
    embedded in its place). ``tag_kwd`` is accepted but not stored."""
    if not body.content.strip():
        fail(DATA_ERROR, "`content` is required")
    if body.image_base64:
        fail(DATA_ERROR, "`image_base64` is not supported by ragloom")
    kb_id, doc_id = _owned_document(ctx, principal, dataset_id, document_id)
    with ctx.db.session() as s:
        row = chunk_edits.add_chunk(ctx, s, principal=principal, kb_id=kb_id, doc_id=doc_id, content=body.content,
                                    keywords=body.important_keywords, questions=body.questions)
    now = datetime.now()
    return RFResult(data=RFAddedChunk(chunk=RFNewChunk(
        id=row.id, content=row.content, document_id=row.doc_id, dataset_id=row.kb_id,
        important_keywords=list(row.important_keywords), tag_kwd=[], questions=list(row.questions),
        create_timestamp=now.timestamp(), create_time=now.strftime("%Y-%m-%d %H:%M:%S"))))


def _update_chunk(dataset_id: str, document_id: str, chunk_id: str, body: RFChunkUpdate, ctx: Context,
                  principal: Principal) -> RFCode:
    if body.content is not None and not body.content.strip():
        fail(DATA_ERROR, "`content` is required")
    kb_id, doc_id = _owned_document(ctx, principal, dataset_id, document_id)
    if (body.content is None and body.available is None and body.important_keywords is None
            and body.questions is None):
        return RFCode()  # positions and tags: not stored by ragloom
    with ctx.db.session() as s:
        try:
            chunk_edits.update_chunk(ctx, s, principal=principal, kb_id=kb_id, doc_id=doc_id, row_id=chunk_id,
                                     content=body.content, available=body.available,
                                     keywords=body.important_keywords, questions=body.questions)
        except NotFoundError:
            fail(DATA_ERROR, f"Can't find this chunk {chunk_id}")
    return RFCode()


@router.patch("/datasets/{dataset_id}/documents/{document_id}/chunks/{chunk_id}", tags=["chunks"],
              summary="Update a chunk")
def update_chunk(dataset_id: str, document_id: str, chunk_id: str, body: RFChunkUpdate, ctx: ContextDep,
                 principal: PrincipalDep) -> RFCode:
    """``content`` (re-embedded), ``important_keywords``, ``questions`` and ``available`` (false: never
    retrieved); kept over re-parses."""
    return _update_chunk(dataset_id, document_id, chunk_id, body, ctx, principal)


@router.put("/datasets/{dataset_id}/documents/{document_id}/chunks/{chunk_id}", tags=["chunks"],
            summary="Update a chunk (RAGFlow's deprecated alias of PATCH)")
def update_chunk_put(dataset_id: str, document_id: str, chunk_id: str, body: RFChunkUpdate, ctx: ContextDep,
                     principal: PrincipalDep) -> RFCode:
    return _update_chunk(dataset_id, document_id, chunk_id, body, ctx, principal)


@router.patch("/datasets/{dataset_id}/documents/{document_id}/chunks", tags=["chunks"],
              summary="Switch chunks on or off")
def switch_chunks(dataset_id: str, document_id: str, body: RFChunkSwitch, ctx: ContextDep,
                  principal: PrincipalDep) -> RFResult[bool]:
    if not body.chunk_ids:
        fail(DATA_ERROR, "`chunk_ids` is required.")
    if body.available is None and body.available_int is None:
        fail(DATA_ERROR, "`available_int` or `available` is required.")
    on = body.available if body.available is not None else bool(body.available_int)
    kb_id, doc_id = _owned_document(ctx, principal, dataset_id, document_id)
    with ctx.db.session() as s:
        for cid in body.chunk_ids:
            try:
                chunk_edits.update_chunk(ctx, s, principal=principal, kb_id=kb_id, doc_id=doc_id, row_id=cid,
                                         available=on)
            except NotFoundError:
                fail(DATA_ERROR, f"Can't find this chunk {cid}")
    return RFResult(data=True)


@router.delete("/datasets/{dataset_id}/documents/{document_id}/chunks", tags=["chunks"], summary="Delete chunks")
def delete_chunks(dataset_id: str, document_id: str, ctx: ContextDep, principal: PrincipalDep,
                  body: Annotated[RFChunkDelete | None, Body()] = None) -> RFCode:
    req = body or RFChunkDelete()
    kb_id, doc_id = _owned_document(ctx, principal, dataset_id, document_id)
    if req.delete_all:
        ids = [c.chunk_id for c in _chunks(ctx, principal, kb_id, doc_id)]
    elif req.chunk_ids:
        ids = list(dict.fromkeys(req.chunk_ids))
    else:
        return RFCode()
    deleted = 0
    with ctx.db.session() as s:
        for cid in ids:
            try:
                chunk_edits.delete_chunk(ctx, s, principal=principal, kb_id=kb_id, doc_id=doc_id, row_id=cid)
                deleted += 1
            except NotFoundError:
                continue
    if deleted != len(ids):
        fail(DATA_ERROR, f"rm_chunk deleted chunks {deleted}, expect {len(ids)}")
    return RFCode(message=f"deleted {deleted} chunks")


# ---- retrieval


def _metadata_filter(condition: Any) -> dict[str, Any] | None:
    from ragloom.api.dify import metadata_filter

    if condition is None or not condition.conditions:
        return None
    try:
        dify = DifyMetadataConditions.model_validate(
            {"logical_operator": condition.logic,
             "conditions": [c.model_dump() for c in condition.conditions]})
    except ValidationError as exc:
        fail(ARGUMENT_ERROR, "metadata_condition: " + _field_errors(exc))
    return metadata_filter(dify)


def _highlight(text: str, question: str) -> str:
    words = sorted({w for w in re.findall(r"\w+", question.lower()) if len(w) > 2}, key=len, reverse=True)
    if not words:
        return text
    pattern = re.compile(r"\b(" + "|".join(re.escape(w) for w in words) + r")\b", re.IGNORECASE)
    return pattern.sub(r"<em>\1</em>", text)


@router.post("/retrieval", tags=["retrieval"], summary="Retrieve chunks", openapi_extra=READS,
             dependencies=[rate_limited("retrieval")])
def retrieval(body: RFRetrievalRequest, ctx: ContextDep, principal: PrincipalDep) -> RFResult[RFRetrieval]:
    """The chunks of ``dataset_ids`` that best match ``question``, scored as RAGFlow does (ragloom's
    ``weighted`` fusion: ``similarity = w * vector + (1 - w) * term`` with ``vector_similarity_weight``
    and ``similarity_threshold``). ``rerank_id`` and ``keyword`` are ignored (ragloom reranks with the
    workspace's reranker); ``doc_aggs`` counts each document's matches over the threshold (all pages)."""
    if body.question is None:
        fail(DATA_ERROR, "`question` is required.")
    if body.dataset_ids is None:
        fail(DATA_ERROR, "`dataset_ids` is required.")
    if not body.dataset_ids:
        fail(DATA_ERROR, "`dataset_ids` is required.")
    if body.top_k is not None and body.top_k <= 0:
        fail(DATA_ERROR, "`top_k` must be greater than 0")
    page = body.page if body.page and body.page > 0 else 1
    size = body.page_size if body.page_size and body.page_size > 0 else 30
    if size > MAX_PAGE_SIZE:
        fail(ARGUMENT_ERROR, f"page_size must be less than or equal to {MAX_PAGE_SIZE}")
    if not body.question.strip():
        return RFResult(data=RFRetrieval(total=0, chunks=[], doc_aggs=[]))
    with ctx.db.session() as s:
        for kb_id in body.dataset_ids:
            try:
                knowledgebases.get(s, principal=principal, kb_id_or_name=kb_id)
            except NotFoundError:
                fail(DATA_ERROR, f"You don't own the dataset {kb_id}.")
        try:
            check_documents(s, principal=principal, doc_ids=body.document_ids or None)
        except NotFoundError as exc:
            fail(DATA_ERROR, f"The datasets don't own the document: {exc.message}")
    options = RetrievalOptions(
        page=page, page_size=size, fusion="weighted",
        similarity_threshold=body.similarity_threshold if body.similarity_threshold is not None else 0.2,
        vector_similarity_weight=body.vector_similarity_weight if body.vector_similarity_weight is not None else 0.3,
        document_ids=body.document_ids or None, cross_languages=body.cross_languages or [],
        metadata_filter=_metadata_filter(body.metadata_condition), use_kg=bool(body.use_kg),
        toc_enhance=bool(body.toc_enhance))
    raw = search(ctx, principal=principal, kb_ids=body.dataset_ids, question=body.question, options=options)
    result = retrieval_view(raw)
    out = [RFRetrievedChunk(
        id=c.chunk_id, content=c.content, document_id=c.doc_id, document_keyword=c.document_name,
        dataset_id=c.kb_id, important_keywords=list(c.important_keywords), tag_kwd=list(c.tags),
        positions=[[float(x) for x in p] for p in c.positions],
        similarity=float(c.similarity), vector_similarity=float(c.vector_similarity),
        term_similarity=float(c.term_similarity),
        highlight=_highlight(c.content, body.question) if body.highlight else None) for c in result.chunks]
    if raw.documents:
        aggs = [RFDocAgg(doc_name=name, doc_id=d, count=n) for d, name, n in raw.documents]
    else:  # nothing counted beyond the page (a knowledge-graph item alone)
        counts = Counter(c.document_id for c in out)
        names = {c.document_id: c.document_keyword for c in out}
        aggs = [RFDocAgg(doc_name=names[d], doc_id=d, count=n) for d, n in counts.most_common()]
    return RFResult(data=RFRetrieval(total=result.total, chunks=out, doc_aggs=aggs))


# ---- system


@router.get("/system/healthz", tags=["system"], summary="Health (no key needed)",
            responses={500: {"model": RFHealth, "description": "a component failed"}})
def healthz(ctx: ContextDep) -> JSONResponse:
    from ragloom.service.system import worker_health

    state = {"db": "ok", "redis": "ok", "doc_engine": "ok", "storage": "ok"}
    try:
        worker_health(ctx)
    except Exception:  # noqa: BLE001 - any failure of the database is "nok"
        state["db"] = "nok"
    ok = all(v == "ok" for v in state.values())
    body = RFHealth(status="ok" if ok else "nok", **state)
    return JSONResponse(body.model_dump(), status_code=200 if ok else 500)


@router.get("/system/ping", tags=["system"], summary="pong", response_class=PlainTextResponse)
def ping() -> str:
    return "pong"


@router.get("/system/version", tags=["system"], summary="ragloom's version")
def version() -> RFResult[str]:
    return RFResult(data=f"ragloom-{__version__}")


@router.get("/dify/retrieval/health", tags=["system"], summary="Dify's health check of the external knowledge API")
def dify_health() -> RFResult[bool]:
    return RFResult(data=True)


# ---- what ragloom does not have

NOT_IN_RAGLOOM = {
    "agents", "agentbots", "chatbots", "searchbots", "agents_openai", "memories", "messages", "files", "file",
    "documents", "workspace-files", "searches", "connectors", "models", "providers", "llm", "tenants", "users",
    "auth", "tasks", "mcp", "plugin", "langfuse", "chat-channels", "skills", "navigation", "tags",
    "compilation-template", "compilation-templates", "compilation-template-groups", "system", "datasets",
}
# what is left of a dataset's routes: the metadata configuration (auto-metadata)
NOT_YET_DATASET = {"metadata"}
NOT_IN_RAGLOOM_CHAT = ("chat/audio", "chat/mindmap", "chat/recommendation", "chat/recommandation",
                       "sessions/related_questions")


def unsupported(method: str, path: str) -> tuple[int, str] | None:
    """What a RAGFlow route that is not served says: (code, message), or None for a route RAGFlow
    does not have either (404)."""
    parts = [p for p in path.split("/") if p]
    if not parts:
        return None
    shown = f"{method} {API}/{'/'.join(parts)}"
    if path.lstrip("/").startswith(NOT_IN_RAGLOOM_CHAT):
        return DATA_ERROR, f"{shown} is not supported by ragloom"
    if parts[0] == "datasets" and len(parts) >= 3 and parts[2] in NOT_YET_DATASET:
        return DATA_ERROR, f"{shown} is not supported by ragloom yet (the metadata configuration comes later)"
    if parts[0] in NOT_IN_RAGLOOM:
        return DATA_ERROR, f"{shown} is not supported by ragloom"
    return None


@router.api_route("/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"], include_in_schema=False)
def not_supported(path: str, request: Request) -> JSONResponse:
    answer = unsupported(request.method, path)
    if answer is None:
        raise StarletteHTTPException(404)
    return _reply(*answer)
