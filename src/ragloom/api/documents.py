"""/datasets/{id}/documents: upload, list, inspect, delete, re-parse, cancel."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, File, Query, UploadFile

from ragloom.api.deps import ContextDep, PrincipalDep
from ragloom.api.schemas import DocumentIds
from ragloom.errors import InvalidRequestError
from ragloom.service import documents
from ragloom.service.views import document_view

router = APIRouter(prefix="/datasets/{dataset_id}/documents", tags=["documents"])


@router.post("", status_code=201)
def upload_documents(
    dataset_id: str, ctx: ContextDep, principal: PrincipalDep,
    file: Annotated[list[UploadFile], File(description="One or more files")],
) -> dict[str, Any]:
    limit = ctx.settings.max_upload_mb * 1024 * 1024
    uploads = []
    for f in file:
        data = f.file.read(limit + 1)
        if len(data) > limit:
            raise InvalidRequestError(f"{f.filename}: file is larger than {ctx.settings.max_upload_mb} MiB")
        uploads.append(documents.Upload(filename=f.filename or "", data=data, content_type=f.content_type or ""))
    with ctx.db.session() as s:
        docs = documents.add_documents(ctx, s, principal=principal, kb_id=dataset_id, uploads=uploads)
        return {"documents": [document_view(d) for d in docs]}


@router.get("")
def list_documents(
    dataset_id: str, ctx: ContextDep, principal: PrincipalDep,
    page: Annotated[int, Query(ge=1)] = 1, page_size: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    with ctx.db.session() as s:
        docs, total = documents.list_documents(
            s, principal=principal, kb_id=dataset_id, offset=(page - 1) * page_size, limit=page_size
        )
        return {"documents": [document_view(d) for d in docs], "total": total}


@router.get("/{document_id}")
def get_document(dataset_id: str, document_id: str, ctx: ContextDep, principal: PrincipalDep) -> dict[str, Any]:
    with ctx.db.session() as s:
        return document_view(documents.get(s, principal=principal, kb_id=dataset_id, doc_id=document_id))


@router.delete("")
def delete_documents(dataset_id: str, body: DocumentIds, ctx: ContextDep, principal: PrincipalDep) -> dict[str, int]:
    with ctx.db.session() as s:
        n = documents.delete_documents(ctx, s, principal=principal, kb_id=dataset_id, doc_ids=body.ids)
    return {"deleted": n}


@router.post("/{document_id}/reparse", status_code=202)
def reparse_document(dataset_id: str, document_id: str, ctx: ContextDep, principal: PrincipalDep) -> dict[str, Any]:
    with ctx.db.session() as s:
        return document_view(documents.reparse(ctx, s, principal=principal, kb_id=dataset_id, doc_id=document_id))


@router.post("/{document_id}/cancel")
def cancel_document(dataset_id: str, document_id: str, ctx: ContextDep, principal: PrincipalDep) -> dict[str, Any]:
    with ctx.db.session() as s:
        return document_view(documents.cancel(s, principal=principal, kb_id=dataset_id, doc_id=document_id))
