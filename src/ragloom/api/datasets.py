"""/datasets: knowledge bases."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Query, Response

from ragloom.api.deps import ContextDep, PrincipalDep, rate_limited
from ragloom.api.responses import CALLER_ERRORS, error_responses
from ragloom.schemas.datasets import Dataset, DatasetList, DatasetTags, KBCreate, KBUpdate, Reindexed, ReindexRequest
from ragloom.service import knowledgebases
from ragloom.service.accounts import workspace_models
from ragloom.service.documents.reindex import reindex
from ragloom.service.knowledgebases import kb_view

router = APIRouter(prefix="/datasets", tags=["datasets"], responses=CALLER_ERRORS)


@router.post("", status_code=201, responses=error_responses(409))
def create_dataset(body: KBCreate, ctx: ContextDep, principal: PrincipalDep) -> Dataset:
    with ctx.db.session() as s:
        kb = knowledgebases.create(ctx, s, principal=principal, spec=body)
        return kb_view(kb, 0, fusion=ctx.settings.fusion)


MAX_LIST_PAGE = 1_000_000  # as the documents listing's
PageQuery = Annotated[int, Query(ge=1, le=MAX_LIST_PAGE)]
PageSizeQuery = Annotated[int, Query(ge=1, le=1000)]


@router.get("")
def list_datasets(ctx: ContextDep, principal: PrincipalDep, page: PageQuery = 1,
                  page_size: PageSizeQuery = 100) -> DatasetList:
    """The knowledge bases you can read, by name, one page at a time; ``total`` counts them all."""
    with ctx.db.session() as s:
        every = knowledgebases.list_visible(s, principal=principal)
        kbs = every[(page - 1) * page_size:page * page_size]
        counts = knowledgebases.document_counts(s, kbs, principal=principal)
        current = workspace_models.default_embedding_model(ctx, s, principal.tenant_id)
        views = [kb_view(kb, counts.get(kb.id, 0), fusion=ctx.settings.fusion, workspace_embedding_model=current)
                 for kb in kbs]
        return DatasetList(datasets=views, total=len(every))


@router.get("/{dataset_id}")
def get_dataset(dataset_id: str, ctx: ContextDep, principal: PrincipalDep) -> Dataset:
    with ctx.db.session() as s:
        kb = knowledgebases.get(s, principal=principal, kb_id_or_name=dataset_id)
        count = knowledgebases.document_counts(s, [kb], principal=principal).get(kb.id, 0)
        return kb_view(kb, count, fusion=ctx.settings.fusion,
                       workspace_embedding_model=workspace_models.default_embedding_model(ctx, s, principal.tenant_id))


@router.post("/{dataset_id}/reindex", status_code=202, dependencies=[rate_limited("reparse")],
             responses=error_responses(409, 429, 502))
def reindex_dataset(dataset_id: str, ctx: ContextDep, principal: PrincipalDep,
                    body: Annotated[ReindexRequest | None, Body()] = None) -> Reindexed:
    """Switch the dataset to another embedding model (default: the one the workspace's new datasets get)
    and re-embed every document. A dataset keeps the model its vectors were made with, so this is the
    only way to change it; each document answers from its current version until its new one is ready."""
    with ctx.db.session() as s:
        return reindex(ctx, s, principal=principal, kb_id_or_name=dataset_id,
                       embedding_model=body.embedding_model if body else None, fusion=ctx.settings.fusion)


@router.get("/{dataset_id}/tags")
def dataset_tags(dataset_id: str, ctx: ContextDep, principal: PrincipalDep) -> DatasetTags:
    """How many chunks carry each tag: a tag set's own tags, or the tags another dataset's chunks got."""
    from ragloom.service.search.tags import kb_tags

    with ctx.db.session() as s:
        return kb_tags(ctx, s, principal=principal, kb_id_or_name=dataset_id)


@router.patch("/{dataset_id}", responses=error_responses(409))
def update_dataset(dataset_id: str, body: KBUpdate, ctx: ContextDep,
                   principal: PrincipalDep) -> Dataset:
    with ctx.db.session() as s:
        kb = knowledgebases.update(s, principal=principal, kb_id_or_name=dataset_id, spec=body)
        count = knowledgebases.document_counts(s, [kb], principal=principal).get(kb.id, 0)
        return kb_view(kb, count, fusion=ctx.settings.fusion)


@router.delete("/{dataset_id}", status_code=204, response_class=Response)
def delete_dataset(dataset_id: str, ctx: ContextDep, principal: PrincipalDep) -> Response:
    with ctx.db.session() as s:
        knowledgebases.delete(ctx, s, principal=principal, kb_id_or_name=dataset_id)
    return Response(status_code=204)
