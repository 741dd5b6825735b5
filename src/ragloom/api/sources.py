"""/datasets/{id}/sources: where a dataset's documents come from and stay in sync with (a folder of the
server's disk, a web site, ...): add, list, change (pause, resume), remove, test, sync now, and the
history of syncs with their counts and errors."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from ragloom.api.deps import ContextDep, PrincipalDep
from ragloom.api.responses import CALLER_ERRORS, error_responses
from ragloom.schemas.sources import Source, SourceCheck, SourceCreate, SourceList, SourceUpdate, Sync, SyncList
from ragloom.service.sources import manage
from ragloom.service.sources.views import one_source_view, source_views, sync_view

router = APIRouter(prefix="/datasets/{dataset_id}/sources", tags=["sources"], responses=CALLER_ERRORS)

MAX_LIST_PAGE = 1_000_000


@router.post("", status_code=201, responses=error_responses(409))
def add_source(dataset_id: str, body: SourceCreate, ctx: ContextDep, principal: PrincipalDep) -> Source:
    """Add a source: its settings are checked by its connector (a folder must lie inside the folders the
    server allows, RAGLOOM_SOURCE_ROOTS); its credentials are stored encrypted and never shown. Nothing
    is synced until a sync is asked for or its schedule is due."""
    with ctx.db.session() as s:
        return one_source_view(s, manage.add(ctx, s, principal=principal, kb_id=dataset_id, spec=body))


@router.get("")
def list_sources(dataset_id: str, ctx: ContextDep, principal: PrincipalDep) -> SourceList:
    """The dataset's sources by name, each with its latest sync."""
    with ctx.db.session() as s:
        rows = manage.list_sources(s, principal=principal, kb_id=dataset_id)
        return SourceList(sources=source_views(s, rows), total=len(rows))


@router.get("/{source_id}")
def get_source(dataset_id: str, source_id: str, ctx: ContextDep, principal: PrincipalDep) -> Source:
    with ctx.db.session() as s:
        return one_source_view(s, manage.get(s, principal=principal, kb_id=dataset_id, source_id=source_id))


@router.patch("/{source_id}", responses=error_responses(409))
def update_source(dataset_id: str, source_id: str, body: SourceUpdate, ctx: ContextDep,
                  principal: PrincipalDep) -> Source:
    """Change a source (``paused`` pauses or resumes its schedule; ``schedule_minutes: null`` makes it manual)."""
    with ctx.db.session() as s:
        row = manage.update(ctx, s, principal=principal, kb_id=dataset_id, source_id=source_id, spec=body)
        return one_source_view(s, row)


@router.delete("/{source_id}", status_code=204, response_class=Response)
def remove_source(dataset_id: str, source_id: str, ctx: ContextDep, principal: PrincipalDep,
                  keep_documents: Annotated[bool, Query(description="keep the documents it made, as ordinary "
                                                        "documents")] = False) -> Response:
    """Remove a source and (unless ``keep_documents``) the documents it made."""
    with ctx.db.session() as s:
        manage.remove(ctx, s, principal=principal, kb_id=dataset_id, source_id=source_id,
                       keep_documents=keep_documents)
    return Response(status_code=204)


@router.post("/{source_id}/check")
def check_source(dataset_id: str, source_id: str, ctx: ContextDep, principal: PrincipalDep) -> SourceCheck:
    """Test the source's connection: reach it and read a little."""
    with ctx.db.session() as s:
        ok, message = manage.check(ctx, s, principal=principal, kb_id=dataset_id, source_id=source_id)
    return SourceCheck(ok=ok, message=message)


@router.post("/{source_id}/sync", status_code=202)
def sync_source(dataset_id: str, source_id: str, ctx: ContextDep, principal: PrincipalDep) -> Sync:
    """Sync the source now (the sync already waiting, if one is): the workers run it."""
    with ctx.db.session() as s:
        return sync_view(manage.request_sync(s, principal=principal, kb_id=dataset_id, source_id=source_id))


@router.get("/{source_id}/syncs")
def list_syncs(dataset_id: str, source_id: str, ctx: ContextDep, principal: PrincipalDep,
               page: Annotated[int, Query(ge=1, le=MAX_LIST_PAGE)] = 1,
               page_size: Annotated[int, Query(ge=1, le=1000)] = 20) -> SyncList:
    """The source's syncs, newest first, with their counts and errors."""
    with ctx.db.session() as s:
        rows, total = manage.list_syncs(s, principal=principal, kb_id=dataset_id, source_id=source_id,
                                         offset=(page - 1) * page_size, limit=page_size)
        return SyncList(syncs=[sync_view(r) for r in rows], total=total)


@router.get("/{source_id}/syncs/{sync_id}")
def get_sync(dataset_id: str, source_id: str, sync_id: str, ctx: ContextDep, principal: PrincipalDep) -> Sync:
    with ctx.db.session() as s:
        return sync_view(manage.get_sync(s, principal=principal, kb_id=dataset_id, source_id=source_id,
                                          sync_id=sync_id))


@router.post("/{source_id}/syncs/{sync_id}/cancel")
def cancel_sync(dataset_id: str, source_id: str, sync_id: str, ctx: ContextDep, principal: PrincipalDep) -> Sync:
    """Cancel a sync: a queued one at once, a running one after its current item (what it did stays)."""
    with ctx.db.session() as s:
        return sync_view(manage.cancel_sync(s, principal=principal, kb_id=dataset_id, source_id=source_id,
                                             sync_id=sync_id))
