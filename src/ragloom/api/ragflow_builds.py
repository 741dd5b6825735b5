"""RAGFlow's knowledge-graph and RAPTOR triggers under ``/ragflow/api/v1`` (part of
:mod:`ragloom.api.ragflow`'s sub-application): ragloom's knowledge builds
(:mod:`ragloom.service.builds`, kinds ``graph`` and ``raptor``) in RAGFlow's shapes.

``run_graphrag`` / ``run_raptor`` (and ``POST /datasets/{id}/index?type=graph|raptor``) queue a build over
the whole dataset and answer its id as ``task_id``; a build already waiting is answered again, not
queued twice (RAGFlow refuses it). ``trace_*`` (and ``GET .../index``) answer the latest build as
RAGFlow's task row (``progress`` -1 when it failed), ``{}`` when none ran. ``GET .../knowledge_graph``
(and ``.../graph``) answer the graph's entities and relations. ``DELETE .../knowledge_graph`` (and
``DELETE .../index?type=graph|raptor``) delete what the builds made (ragloom's
``DELETE /api/v1/datasets/{id}/knowledge/{kind}``), refused while a build of that kind waits or runs."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from ragloom.api.deps import ContextDep, PrincipalDep
from ragloom.api.ragflow import API, _kb_method, _time, fail
from ragloom.context import Context, Principal
from ragloom.errors import ConflictError, NotFoundError
from ragloom.schemas.builds import Build, BuildRequest
from ragloom.schemas.ragflow import DATA_ERROR, RFResult
from ragloom.service.builds import graph, lifecycle
from ragloom.service.builds.views import build_view

router = APIRouter(prefix=API, tags=["knowledge builds"])

KINDS = {"graph": "graph", "graphrag": "graph", "raptor": "raptor"}
TASK_TYPE = {"graph": "graphrag", "raptor": "raptor"}


def _kind(index_type: str) -> str:
    if index_type not in KINDS:
        fail(DATA_ERROR, f"Invalid index type '{index_type}'. Must be one of ['graph', 'raptor']")
    return KINDS[index_type]


def _run(ctx: Context, principal: Principal, dataset_id: str, kind: str) -> dict[str, str]:
    kb_id, _ = _kb_method(ctx, principal, dataset_id, missing="Invalid Dataset ID")
    with ctx.db.session() as s:
        from ragloom.service.documents import catalog

        _, total = catalog.list_documents(s, principal=principal, kb_id=kb_id, limit=1)
    if not total:
        fail(DATA_ERROR, f"No documents in Dataset {dataset_id}")
    started = lifecycle.start(ctx, principal=principal, kb_id=kb_id, request=BuildRequest(kind=kind))
    task = started.builds[0].id
    return {"task_id": task, f"{TASK_TYPE[kind]}_task_id": task}


def _task(b: Build) -> dict[str, Any]:
    created, _ = _time(b.created_at)
    finished, _ = _time(b.finished_at)
    begun, _ = _time(b.started_at)
    duration = (finished - begun) / 1000 if finished and begun else 0.0
    progress = -1.0 if b.status == "failed" else 1.0 if b.status == "done" else min(float(b.progress), 0.99)
    return {"id": b.id, "doc_id": b.document_id or "", "task_type": TASK_TYPE.get(b.kind, b.kind),
            "progress": progress, "progress_msg": b.message or b.stage, "begin_at": b.started_at,
            "process_duration": duration, "create_time": created, "update_time": finished or begun or created,
            "status": b.status}


def _trace(ctx: Context, principal: Principal, dataset_id: str, kind: str) -> dict[str, Any]:
    kb_id, _ = _kb_method(ctx, principal, dataset_id, missing="Invalid Dataset ID")
    with ctx.db.session() as s:
        rows, _ = lifecycle.list_builds(s, principal=principal, kb_id=kb_id, kind=kind, limit=1)
        return _task(build_view(rows[0])) if rows else {}


@router.post("/datasets/{dataset_id}/run_graphrag", summary="Build the knowledge graph")
def run_graphrag(dataset_id: str, ctx: ContextDep, principal: PrincipalDep) -> RFResult[dict[str, str]]:
    return RFResult(data=_run(ctx, principal, dataset_id, "graph"))


@router.get("/datasets/{dataset_id}/trace_graphrag", summary="The knowledge graph's latest build")
def trace_graphrag(dataset_id: str, ctx: ContextDep, principal: PrincipalDep) -> RFResult[dict[str, Any]]:
    return RFResult(data=_trace(ctx, principal, dataset_id, "graph"))


@router.post("/datasets/{dataset_id}/run_raptor", summary="Build the RAPTOR summary tree")
def run_raptor(dataset_id: str, ctx: ContextDep, principal: PrincipalDep) -> RFResult[dict[str, str]]:
    return RFResult(data=_run(ctx, principal, dataset_id, "raptor"))


@router.get("/datasets/{dataset_id}/trace_raptor", summary="The RAPTOR tree's latest build")
def trace_raptor(dataset_id: str, ctx: ContextDep, principal: PrincipalDep) -> RFResult[dict[str, Any]]:
    return RFResult(data=_trace(ctx, principal, dataset_id, "raptor"))


TypeArg = Annotated[str, Query(description="graph or raptor (mindmap is not supported by ragloom)")]


@router.post("/datasets/{dataset_id}/index", summary="Build an index: graph or raptor")
def run_index(dataset_id: str, ctx: ContextDep, principal: PrincipalDep, type: TypeArg) -> RFResult[dict[str, str]]:
    return RFResult(data=_run(ctx, principal, dataset_id, _kind(type)))


@router.get("/datasets/{dataset_id}/index", summary="An index's latest build: graph or raptor")
def trace_index(dataset_id: str, ctx: ContextDep, principal: PrincipalDep, type: TypeArg) -> RFResult[dict[str, Any]]:
    return RFResult(data=_trace(ctx, principal, dataset_id, _kind(type)))


def _graph(ctx: Context, principal: Principal, dataset_id: str) -> dict[str, Any]:
    kb_id, _ = _kb_method(ctx, principal, dataset_id, missing="Invalid Dataset ID")
    try:
        view = graph.graph_view(ctx, principal=principal, kb_id=kb_id, limit=None)
    except NotFoundError:  # the dataset is the caller's: no graph was built
        return {"graph": {}, "mind_map": {}}
    nodes = [{"id": n.id, "entity_name": n.name, "entity_type": n.type, "description": n.description,
              "pagerank": n.pagerank} for n in view.nodes]
    edges = [{"source": e.source, "target": e.target, "weight": e.weight, "description": e.description}
             for e in view.edges]
    return {"graph": {"nodes": nodes, "edges": edges}, "mind_map": {}}


@router.get("/datasets/{dataset_id}/knowledge_graph", summary="The knowledge graph")
def knowledge_graph(dataset_id: str, ctx: ContextDep, principal: PrincipalDep) -> RFResult[dict[str, Any]]:
    return RFResult(data=_graph(ctx, principal, dataset_id))


def _drop(ctx: Context, principal: Principal, dataset_id: str, kind: str) -> RFResult[bool]:
    kb_id, _ = _kb_method(ctx, principal, dataset_id, missing="Invalid Dataset ID")
    try:
        lifecycle.drop(ctx, principal=principal, kb_id=kb_id, kind=kind)
    except ConflictError as exc:
        fail(DATA_ERROR, exc.message)
    return RFResult(data=True)


@router.delete("/datasets/{dataset_id}/knowledge_graph", summary="Delete the knowledge graph")
def delete_knowledge_graph(dataset_id: str, ctx: ContextDep, principal: PrincipalDep) -> RFResult[bool]:
    return _drop(ctx, principal, dataset_id, "graph")


@router.delete("/datasets/{dataset_id}/index", summary="Delete an index: graph or raptor")
def delete_index(dataset_id: str, ctx: ContextDep, principal: PrincipalDep, type: TypeArg) -> RFResult[bool]:
    return _drop(ctx, principal, dataset_id, _kind(type))


@router.get("/datasets/{dataset_id}/graph", summary="The knowledge graph (RAGFlow's newer route)")
def dataset_graph(dataset_id: str, ctx: ContextDep, principal: PrincipalDep) -> RFResult[dict[str, Any]]:
    return RFResult(data=_graph(ctx, principal, dataset_id))
