"""/datasets/{id}/builds: knowledge built over a dataset's documents (RAPTOR summaries, the knowledge
graph): estimate, start, follow, cancel; and /datasets/{id}/knowledge/{kind}: delete what they built."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from ragloom.api.deps import ContextDep, PrincipalDep
from ragloom.api.responses import CALLER_ERRORS, error_responses
from ragloom.schemas.builds import Build, BuildList, BuildRequest, BuildsStarted, KnowledgeDropped
from ragloom.service.builds import lifecycle
from ragloom.service.builds.views import build_view

router = APIRouter(prefix="/datasets/{dataset_id}", tags=["builds"], responses=CALLER_ERRORS)

MAX_LIST_PAGE = 1_000_000


@router.post("/builds", status_code=202, responses=error_responses(502))
def start_build(dataset_id: str, body: BuildRequest, ctx: ContextDep, principal: PrincipalDep) -> BuildsStarted:
    """Estimate a build (chat-model calls and prompt tokens, from the chunks and the method) and, unless
    ``dry_run``, queue it: one for the dataset (its documents whose part is up to date are skipped) or one
    per document of ``document_ids``. Workers run builds when no document waits to be parsed."""
    return lifecycle.start(ctx, principal=principal, kb_id=dataset_id, request=body)


@router.get("/builds")
def list_builds(
    dataset_id: str, ctx: ContextDep, principal: PrincipalDep,
    page: Annotated[int, Query(ge=1, le=MAX_LIST_PAGE)] = 1, page_size: Annotated[int, Query(ge=1, le=1000)] = 50,
    kind: Annotated[str | None, Query(max_length=16, description="only builds of this kind: raptor or graph")] = None,
    status: Annotated[str | None, Query(description="queued, running, done, failed or cancelled")] = None,
) -> BuildList:
    """The dataset's builds, newest first, with their stage, progress, estimate and costs."""
    with ctx.db.session() as s:
        rows, total = lifecycle.list_builds(s, principal=principal, kb_id=dataset_id, kind=kind, status=status,
                                         offset=(page - 1) * page_size, limit=page_size)
        return BuildList(builds=[build_view(r) for r in rows], total=total)


@router.get("/builds/{build_id}")
def get_build(dataset_id: str, build_id: str, ctx: ContextDep, principal: PrincipalDep) -> Build:
    with ctx.db.session() as s:
        return build_view(lifecycle.get_build(s, principal=principal, kb_id=dataset_id, build_id=build_id))


@router.post("/builds/{build_id}/cancel")
def cancel_build(dataset_id: str, build_id: str, ctx: ContextDep, principal: PrincipalDep) -> Build:
    """Cancel a build: a queued one at once, a running one at its next step (what it stored unfinished is
    deleted; what earlier builds published stays)."""
    with ctx.db.session() as s:
        return build_view(lifecycle.cancel(s, principal=principal, kb_id=dataset_id, build_id=build_id))


@router.delete("/knowledge/{kind}", responses=error_responses(409))
def delete_knowledge(dataset_id: str, kind: str, ctx: ContextDep, principal: PrincipalDep) -> KnowledgeDropped:
    """Delete all builds of ``kind`` made over the dataset: every RAPTOR summary (``raptor``), or the
    knowledge graph (``graph``). Searches stop finding it at once; 409 while a build of that kind waits or
    runs (cancel it first). The dataset's settings are left as they are."""
    return lifecycle.drop(ctx, principal=principal, kb_id=dataset_id, kind=kind)
