"""The chunk methods and their parameters (for forms), and a preview of how a sample file is chunked."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, UploadFile

from ragloom.api.deps import ContextDep, PrincipalDep, rate_limited
from ragloom.api.responses import CALLER_ERRORS, error_responses
from ragloom.errors import PayloadTooLargeError
from ragloom.schemas.base import parse_json_object
from ragloom.schemas.chunking import PREVIEW_CHUNKS, ChunkingPreview, ChunkMethodList
from ragloom.service.documents import chunking_preview
from ragloom.service.documents.chunking_preview import Sample

router = APIRouter(tags=["datasets"], responses=CALLER_ERRORS)


@router.get("/chunk-methods")
def chunk_methods(principal: PrincipalDep) -> ChunkMethodList:
    """Every chunk method, what it does, and the parameters it reads with their types, defaults and
    bounds (the ones ``parser_config`` is validated against)."""
    return chunking_preview.methods()


@router.post("/datasets/{dataset_id}/chunking-preview", dependencies=[rate_limited("reparse")],
             responses=error_responses(413, 422, 429),
             description="Chunk a sample with a method and parameters, storing nothing: a PDF's first "
                         f"{chunking_preview.PREVIEW_PAGES} pages are read and the first "
                         f"{PREVIEW_CHUNKS} chunks shown (their count is of all).")
def chunking_preview_route(
    dataset_id: str, ctx: ContextDep, principal: PrincipalDep,
    file: Annotated[UploadFile | None, File(description="a sample file")] = None,
    document_id: Annotated[str | None, Form(description="or: a document of the dataset (its shown version)")] = None,
    chunk_method: Annotated[str | None, Form(description="default: the dataset's")] = None,
    parser_config: Annotated[str | None, Form(description="JSON object; default: the dataset's")] = None,
) -> ChunkingPreview:
    config = parse_json_object(parser_config) if parser_config else None
    sample = Sample(document_id=document_id or None)
    if file is not None and not sample.document_id:
        limit = ctx.settings.max_upload_mb * 1024 * 1024
        data = file.file.read(limit + 1)
        if len(data) > limit:
            raise PayloadTooLargeError(f"{file.filename!r} is larger than the limit of {ctx.settings.max_upload_mb} "
                                       "MiB per file (RAGLOOM_MAX_UPLOAD_MB)")
        sample = Sample(filename=file.filename or "", data=data)
    with ctx.db.session() as s:
        return chunking_preview.preview(ctx, s, principal=principal, kb_id=dataset_id, sample=sample,
                                        chunk_method=chunk_method, parser_config=config)

