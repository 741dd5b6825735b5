"""/datasets/{id}/graph: a dataset's knowledge graph (nodes, edges, communities) for a UI to draw."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from ragloom.api.deps import ContextDep, PrincipalDep
from ragloom.api.responses import CALLER_ERRORS
from ragloom.schemas.graph import GraphView
from ragloom.service.builds import graph

router = APIRouter(prefix="/datasets/{dataset_id}/graph", tags=["builds"], responses=CALLER_ERRORS)


@router.get("")
def get_graph(dataset_id: str, ctx: ContextDep, principal: PrincipalDep,
              limit: Annotated[int, Query(ge=1, le=10_000, description="the entities of highest PageRank")] = 200,
              ) -> GraphView:
    """The dataset's knowledge graph: its ``limit`` entities of highest PageRank with their type and
    community, the relations among them (weight, description), and the communities (title, summary).
    404 when no graph is built yet (POST .../builds with kind ``graph``)."""
    return graph.graph_view(ctx, principal=principal, kb_id=dataset_id, limit=limit)
