"""The ``graph`` kind of knowledge build: a knowledge graph per knowledge base (REFERENCE §9), made of
one subgraph per document (:mod:`ragloom.knowledge.graph`).

**Where it lives.** A document's subgraph, and the merged graph with its communities, are JSON objects
in the object store (``ctx.objects``, under the workspace's namespace), named by the
:class:`~ragloom.db.models.KnowledgePart` row of kind ``graph`` (``scope`` = the document's id, or
``"kb"`` for the merged graph) in ``root_ids[0]``. Why objects and not a column: a graph of a large
knowledge base is megabytes that every read of the part row would carry; objects are content-addressed
(an unchanged rebuild writes nothing new and keeps its key, which is also the graph's *version* for the
retrieval cache) and need no migration. :func:`ragloom.service.documents.gc.referenced_keys` counts them.

**Incremental and resumable.** A document whose part was made from its active version with the same
recipe (method, entity types, chat model) is not extracted again; a part is committed as soon as its
document is extracted, so a run that stopped goes on from there. The chat model's replies go through
the LLM cache. The merged graph is then updated from the stored one: documents gone or re-extracted
are removed, new subgraphs merged (``Graph.merge`` replaces a document's earlier contribution, so a
re-run never duplicates), then resolution, PageRank and communities as the settings ask.

**Hooks.** A published document's part is forgotten and, with ``use_graphrag``, a build of it queued.
Deleted documents are removed from the merged graph at once (in the deleting request), and a
knowledge-base refresh is queued when communities are on (their reports described them).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ragloom.context import Context, Principal
from ragloom.dataflow import ChunkKind
from ragloom.db.models import Document, KnowledgeBase, KnowledgePart, utcnow
from ragloom.docstore.base import Filters
from ragloom.errors import InvalidRequestError, NotFoundError, TaskCancelledError
from ragloom.knowledge.graph import (
    Community,
    Graph,
    Subgraph,
    build_communities,
    compute_pagerank,
    estimate_cost,
    make_extractor,
    node_link,
    readable_part,
    resolve_entities,
)
from ragloom.knowledge.graph.llm import LlmRunner
from ragloom.schemas.builds import GraphSettings
from ragloom.schemas.graph import GraphCommunity, GraphEdge, GraphNode, GraphView
from ragloom.service import knowledgebases
from ragloom.service.accounts import access
from ragloom.service.builds import llm_cache
from ragloom.service.builds.jobs import BuildJob, DocumentPart, Estimate, document_parts, enqueue

log = logging.getLogger(__name__)

KIND = "graph"
KB_SCOPE = "kb"
PAGE = 1000
CHUNK_KINDS = (ChunkKind.TEXT, ChunkKind.TABLE, ChunkKind.CODE)  # summaries, parents and TOC rows are left out
SKIPPED_METHODS = ("tag",)


def settings_of(kb: KnowledgeBase) -> GraphSettings:
    return knowledgebases.graph_settings(kb)


Doc = DocumentPart  # a document a graph build considers


def _recipe(settings: GraphSettings, identity: str) -> str:
    shape = {"method": settings.method, "entity_types": settings.entity_types if settings.method == "general" else []}
    return hashlib.sha256(json.dumps([shape, identity], sort_keys=True).encode()).hexdigest()


def _identity(ctx: Context, kb: KnowledgeBase, settings: GraphSettings) -> str:
    return "" if settings.method == "offline" else llm_cache.model_identity(ctx, kb.tenant_id)


def documents(ctx: Context, kb: KnowledgeBase, recipe: str, document_id: str | None) -> list[Doc]:
    return document_parts(ctx, kb_id=kb.id, kind=KIND, recipe=recipe, document_id=document_id,
                          skipped_methods=SKIPPED_METHODS)


def chunks_of(ctx: Context, kb: KnowledgeBase, doc: Doc) -> list[tuple[str, str, str]]:
    """``(chunk_id, doc_id, text)`` of a document's active version in reading order (text, table and code
    chunks; summaries, parents and TOC rows left out)."""
    filters = Filters(kb_ids=[kb.id], doc_ids=[doc.doc_id], version_ids=[doc.version_id])
    rows: list[Any] = []
    while True:
        page, total = ctx.docstore.list_chunks(kb.tenant_id, filters, offset=len(rows), limit=PAGE)
        rows.extend(page)
        if not page or len(rows) >= total:
            break
    return [(r.id, doc.doc_id, r.content) for r in rows if r.kind in CHUNK_KINDS and r.content.strip()]


def _put_json(ctx: Context, tenant_id: str, data: Any) -> str:
    return ctx.objects.put(json.dumps(data, sort_keys=True, ensure_ascii=False).encode("utf-8"), namespace=tenant_id)


def _save_part(session: Session, kb: KnowledgeBase, scope: str, *, key: str, recipe: str, version_id: str | None,
               rows: int, build_id: str | None) -> None:
    part = session.scalar(select(KnowledgePart).where(KnowledgePart.kb_id == kb.id, KnowledgePart.kind == KIND,
                                                      KnowledgePart.scope == scope))
    if part is None:
        part = KnowledgePart(kb_id=kb.id, kind=KIND, scope=scope, recipe=recipe)
        session.add(part)
    part.document_id = None if scope == KB_SCOPE else scope
    part.version_id, part.recipe, part.root_ids, part.rows = version_id, recipe, [key], rows
    part.build_id, part.built_at = build_id, utcnow()


def stored_graph(ctx: Context, session: Session, kb_id: str) -> tuple[str, Graph, list[Community]] | None:
    """The knowledge base's merged graph: (its version, the graph, its communities), or None."""
    part = session.scalar(select(KnowledgePart).where(KnowledgePart.kb_id == kb_id, KnowledgePart.kind == KIND,
                                                      KnowledgePart.scope == KB_SCOPE))
    if part is None or not part.root_ids:
        return None
    data = json.loads(ctx.objects.get(part.root_ids[0]))
    return (part.root_ids[0], Graph.from_dict(data["graph"]),
            [Community.from_dict(c) for c in data.get("communities", [])])


class GraphKind:
    name = KIND

    def estimate(self, ctx: Context, kb: KnowledgeBase, document_id: str | None) -> Estimate:
        settings = settings_of(kb)
        recipe = _recipe(settings, _identity(ctx, kb, settings))
        todo = documents(ctx, kb, recipe, document_id)
        stale = [d for d in todo if not d.current]
        chat = llm_cache.cached_chat(ctx, kb.tenant_id) if settings.method != "offline" else None
        if settings.method != "offline" and chat is None:
            raise InvalidRequestError(f"graphrag.method {settings.method!r} needs a chat model: configure one "
                                      "for the workspace, or use method 'offline'")
        total = None
        chunks = 0
        for d in stale:
            texts = chunks_of(ctx, kb, d)
            chunks += len(texts)
            cost = estimate_cost(texts, method=settings.method)
            total = cost if total is None else total + cost
        calls = total.max_calls if total else 0
        note = ("offline extraction: capitalised noun phrases and co-occurrence (no LLM call)"
                if settings.method == "offline" else
                "at most this many extraction calls (gleaning stops early); description summaries, "
                "resolution and community reports are not counted")
        return Estimate(kind=self.name, mode=settings.method, model=chat.name if chat is not None else None,
                        documents=len(todo), documents_to_build=len(stale), llm_calls=calls, llm_calls_cached=0,
                        prompt_tokens=total.max_prompt_tokens if total else 0, completion_tokens=0, note=note,
                        details={"chunks": chunks, "batches": total.batches if total else 0,
                                 "min_calls": total.min_calls if total else 0,
                                 "resolution": settings.resolution, "community": settings.community})

    def run(self, job: BuildJob) -> str:
        ctx = job.ctx
        kb = job.knowledge_base()
        settings = settings_of(kb)
        chat = None
        if settings.method != "offline":
            chat = llm_cache.cached_chat(ctx, kb.tenant_id)
            if chat is None:
                raise InvalidRequestError(f"graphrag.method {settings.method!r} needs a chat model")
        recipe = _recipe(settings, chat.identity if chat is not None else "")
        if settings.method == "general":
            extractor = make_extractor(settings.method, chat=chat, analyzer=ctx.analyzer,
                                       max_workers=ctx.settings.llm_concurrency, entity_types=settings.entity_types)
        else:
            extractor = make_extractor(settings.method, chat=chat, analyzer=ctx.analyzer,
                                       max_workers=ctx.settings.llm_concurrency)
        todo = documents(ctx, kb, recipe, job.document_id)
        stale = [d for d in todo if not d.current]
        steps = len(stale) + 1
        job.stats.update(mode=settings.method, model=chat.name if chat is not None else None, documents=len(todo),
                         documents_current=len(todo) - len(stale), documents_built=0)

        def counts() -> None:
            if chat is not None:
                job.stats["llm"] = chat.usage.as_dict()

        try:
            for i, doc in enumerate(stale):
                job.progress("document", i / steps, f"{doc.name} ({i + 1}/{len(stale)}): extracting", force=True)

                def report(done: int, total: int, i: int = i, name: str = doc.name) -> None:
                    counts()
                    job.progress("document", (i + done / max(1, total)) / steps,
                                 f"{name} ({i + 1}/{len(stale)}): {done} of {total} parts")

                sub = extractor.extract(chunks_of(ctx, kb, doc), progress=report)
                key = _put_json(ctx, kb.tenant_id, sub.to_dict())
                with ctx.db.session() as s:
                    if s.get(Document, doc.doc_id) is not None:
                        _save_part(s, kb, doc.doc_id, key=key, recipe=recipe, version_id=doc.version_id,
                                   rows=len(sub.entities), build_id=job.build_id)
                job.stored += 1
                job.stats["documents_built"] += 1
            job.progress("graph", len(stale) / steps, "merging the documents' subgraphs", force=True)
            summary = self._merge(job, kb, settings, chat)
        finally:
            counts()
        llm = job.stats.get("llm")
        cost = f"; chat model: {llm['calls']} calls, {llm['cache_hits']} answered from the cache" if llm else ""
        return (f"{job.stats['documents_built']} of {len(todo)} documents extracted, "
                f"{len(todo) - len(stale)} up to date; {summary}{cost}")

    def _merge(self, job: BuildJob, kb: KnowledgeBase, settings: GraphSettings,
               chat: llm_cache.CachedChat | None) -> str:
        ctx = job.ctx
        with ctx.db.session() as s:
            parts = {p.scope: p.root_ids[0] for p in s.scalars(select(KnowledgePart).where(
                KnowledgePart.kb_id == kb.id, KnowledgePart.kind == KIND, KnowledgePart.scope != KB_SCOPE))
                if p.root_ids}
            live = set(s.scalars(select(Document.id).where(Document.kb_id == kb.id)))
            stored = stored_graph(ctx, s, kb.id)
            previous = {} if stored is None else json.loads(ctx.objects.get(stored[0])).get("parts", {})
        graph = stored[1] if stored is not None else Graph()
        parts = {d: k for d, k in parts.items() if d in live}
        for doc_id in list(graph.doc_ids):
            if doc_id not in parts or previous.get(doc_id) != parts[doc_id]:
                graph.remove(doc_id)
        touched: list[str] = []
        for doc_id, key in sorted(parts.items()):
            if previous.get(doc_id) == key and doc_id in graph.doc_ids:
                continue
            sub = Subgraph.from_dict(json.loads(ctx.objects.get(key)))
            if sub.entities or sub.relations:
                touched += graph.merge(sub).touched
        runner = LlmRunner(chat, max_workers=ctx.settings.llm_concurrency) if chat is not None else None
        if settings.resolution and touched:
            resolve_entities(graph, runner=runner, only=touched)
        compute_pagerank(graph)
        communities: list[Community] = []
        if settings.community and len(graph):
            job.progress("communities", 0.95, "communities and their reports", force=True)
            communities, _ = build_communities(graph, runner=runner)
        data = {"graph": graph.to_dict(), "communities": [c.to_dict() for c in communities], "parts": parts}
        with ctx.db.session() as s:
            fresh = s.get(KnowledgeBase, kb.id)
            if fresh is None:
                raise TaskCancelledError("the dataset was deleted")
            key = _put_json(ctx, kb.tenant_id, data)
            _save_part(s, kb, KB_SCOPE, key=key, recipe="", version_id=None, rows=len(graph), build_id=job.build_id)
        job.stats.update(entities=len(graph.entities), relations=len(graph.relations), communities=len(communities))
        return (f"the graph has {len(graph.entities)} entities, {len(graph.relations)} relations, "
                f"{len(communities)} communities")

    def discard(self, job: BuildJob) -> None:
        return None  # parts are committed whole; nothing half-written to drop

    def on_published(self, ctx: Context, kb: KnowledgeBase, doc_id: str) -> None:
        with ctx.db.session() as s:
            s.execute(delete(KnowledgePart).where(KnowledgePart.kb_id == kb.id, KnowledgePart.kind == KIND,
                                                  KnowledgePart.scope == doc_id))
            if settings_of(kb).use_graphrag:
                enqueue(s, kb, kind=self.name, document_id=doc_id, trigger="publish")

    def on_deleted(self, ctx: Context, session: Session, kb: KnowledgeBase, doc_ids: Sequence[str]) -> None:
        session.execute(delete(KnowledgePart).where(KnowledgePart.kb_id == kb.id, KnowledgePart.kind == KIND,
                                                    KnowledgePart.scope.in_(list(doc_ids))))
        stored = stored_graph(ctx, session, kb.id)
        if stored is None:
            return
        key, graph, communities = stored
        data = json.loads(ctx.objects.get(key))
        parts = {d: k for d, k in data.get("parts", {}).items() if d not in set(doc_ids)}
        if not any(d in graph.doc_ids for d in doc_ids):
            return
        for doc_id in doc_ids:
            if doc_id in graph.doc_ids:
                graph.remove(doc_id)
        compute_pagerank(graph)
        kept = [c for c in communities if any(graph.entity(n) is not None for n in c.entities)]
        new = _put_json(ctx, kb.tenant_id, {"graph": graph.to_dict(), "communities": [c.to_dict() for c in kept],
                                             "parts": parts})
        _save_part(session, kb, KB_SCOPE, key=new, recipe="", version_id=None, rows=len(graph), build_id=None)
        if settings_of(kb).community:
            enqueue(session, kb, kind=self.name, document_id=None, trigger="delete")

    def drop(self, ctx: Context, session: Session, kb: KnowledgeBase) -> int:
        """The graph goes whole: the knowledge base's merged graph and each document's part (their stored
        objects are unreferenced from then on: the object store's collection removes them)."""
        entities = session.scalar(select(KnowledgePart.rows).where(
            KnowledgePart.kb_id == kb.id, KnowledgePart.kind == KIND, KnowledgePart.scope == KB_SCOPE))  # its size
        session.execute(delete(KnowledgePart).where(KnowledgePart.kb_id == kb.id, KnowledgePart.kind == KIND))
        session.flush()
        return entities or 0


# --- the graph as the API shows it -------------------------------------------------------------------


def graph_view(ctx: Context, *, principal: Principal, kb_id: str, limit: int | None) -> GraphView:
    """The dataset's graph (:class:`NotFoundError` when none is built)."""
    with ctx.db.session() as s:
        kb = knowledgebases.get(s, principal=principal, kb_id_or_name=kb_id)
        stored = stored_graph(ctx, s, kb.id)
        hidden = access.hidden_documents(s, principal, [kb])
    if stored is None:
        raise NotFoundError(f"dataset {kb.name!r} has no knowledge graph yet: build one with POST "
                            f"/api/v1/datasets/{kb.id}/builds {{\"kind\": \"graph\"}} (ragloom build graph KB)")
    graph, communities = readable_part(stored[1], stored[2], hidden)
    data = node_link(graph, communities, limit=limit)
    summaries = {c.id: c.summary for c in communities}
    return GraphView(entities=len(graph.entities), relations=len(graph.relations),
                     nodes=[GraphNode(**n) for n in data["nodes"]], edges=[GraphEdge(**e) for e in data["links"]],
                     communities=[GraphCommunity(**{k: v for k, v in c.items() if k != "size"}, size=c["size"],
                                                 summary=summaries.get(c["id"], "")) for c in data["communities"]])
