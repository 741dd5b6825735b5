"""``ragloom eval --enrich``: is an enrichment worth its cost? The same queries with and without it.

After the plain modes, each enrichment asked for is built over the evaluated knowledge base (or, for
keywords and questions, over a second scratch copy of the corpus ingested with them) and the
``hybrid`` mode is measured again, beside its build time and chat-model calls:

* ``kg`` — the knowledge graph (the knowledge base's ``graphrag`` method; ``offline`` unless set),
  searched with ``use_kg``: its evidence item goes first and counts as the documents of its source
  chunks (:func:`ragloom.evaluation.runner.rank_ids`);
* ``raptor`` — RAPTOR summary trees (by the chat model, or extractive without one): the summaries are
  searchable rows; a summary counts as its document. With ``kg`` as well, ``raptor+kg`` is measured too;
* ``keywords`` — keywords and questions written by the chat model for every chunk at ingestion
  (``auto_keywords``, ``auto_questions``); skipped, with a note, when no chat model is configured.

Chat-model calls are the calls the builds report, or for ``keywords`` the new entries of the
workspace's LLM cache (one per call that was not answered from the cache).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol

from sqlalchemy import func, select

from ragloom.context import Context, Principal
from ragloom.db.models import KnowledgeBuild, LlmCacheEntry
from ragloom.errors import InvalidRequestError
from ragloom.evaluation.dataset import Dataset
from ragloom.evaluation.ingest import IngestResult, Progress, drop_kb, ingest, no_progress, open_kb
from ragloom.evaluation.report import EnrichmentResult, ModeResult
from ragloom.models.rerank import Reranker
from ragloom.schemas.builds import BuildRequest
from ragloom.schemas.datasets import KBUpdate
from ragloom.service import knowledgebases
from ragloom.service.builds import lifecycle, llm_cache
from ragloom.states import TaskStatus
from ragloom.worker import run_until

ENRICHMENTS = ("kg", "raptor", "keywords")


class Evaluate(Protocol):
    def __call__(self, ctx: Context, principal: Principal, dataset: Dataset, kb_id: str, *, modes: Sequence[str],
                 top_k: int, reranker: Reranker | None, progress: Progress = ...,
                 use_kg: bool = ...) -> tuple[list[ModeResult], int]: ...


MODE = "hybrid"
AUTO_KEYWORDS, AUTO_QUESTIONS = 5, 3  # what the keywords variant asks of the chat model per chunk


def check_enrichments(names: Sequence[str]) -> list[str]:
    unknown = [n for n in names if n not in ENRICHMENTS]
    if unknown:
        raise InvalidRequestError(f"unknown enrichment(s) {unknown}; known: {list(ENRICHMENTS)}")
    return [n for n in ENRICHMENTS if n in names]


def evaluate_enrichments(ctx: Context, principal: Principal, dataset: Dataset, target: IngestResult,
                         names: Sequence[str], *, evaluate: Evaluate, top_k: int, language: str | None = None,
                         progress: Progress = no_progress) -> tuple[list[EnrichmentResult], list[str]]:
    """Build each enrichment of ``names`` and measure ``hybrid`` with it (by ``evaluate``: the runner's
    :func:`~ragloom.evaluation.runner.evaluate`); returns (results, notes)."""
    wanted = check_enrichments(names)
    results: list[EnrichmentResult] = []
    notes: list[str] = []

    def measure(name: str, kb_id: str, seconds: float, calls: int, how: str, use_kg: bool = False) -> None:
        modes, _ = evaluate(ctx, principal, dataset, kb_id, modes=[MODE], top_k=top_k, reranker=None,
                            progress=progress, use_kg=use_kg)
        modes[0].name = f"{MODE} +{name}"
        results.append(EnrichmentResult(name, modes[0], seconds, calls, how))

    graph: tuple[float, int, str] | None = None
    if "kg" in wanted:
        graph = _build(ctx, principal, target.kb_id, "graph", progress)
        measure("kg", target.kb_id, *graph, use_kg=True)
    if "raptor" in wanted:
        raptor = _build(ctx, principal, target.kb_id, "raptor", progress)
        measure("raptor", target.kb_id, *raptor)
        if graph is not None:
            measure("raptor+kg", target.kb_id, raptor[0] + graph[0], raptor[1] + graph[1],
                    f"{raptor[2]} + {graph[2]}", use_kg=True)
    if "keywords" in wanted:
        chat = llm_cache.cached_chat(ctx, principal.tenant_id)
        if chat is None:
            notes.append("keywords skipped: keywords and questions are written by a chat model and none is "
                         "configured")
        else:
            seconds, calls, copy = _ingest_with_keywords(ctx, principal, dataset, language, progress)
            try:
                measure("keywords", copy.kb_id, seconds, calls, f"chat model {chat.name}: {AUTO_KEYWORDS} keywords "
                        f"and {AUTO_QUESTIONS} questions per chunk; time = the whole ingestion")
            finally:
                drop_kb(ctx, principal, copy)
    return results, notes


def _build(ctx: Context, principal: Principal, kb_id: str, kind: str, progress: Progress) -> tuple[float, int, str]:
    """Run a build of ``kind`` over the whole knowledge base in this process; (seconds, LLM calls, how)."""
    started = time.perf_counter()
    queued = lifecycle.start(ctx, principal=principal, kb_id=kb_id, request=BuildRequest(kind=kind))
    ids = [b.id for b in queued.builds]
    terminal = (TaskStatus.DONE, TaskStatus.FAILED, TaskStatus.CANCELLED)

    def done() -> bool:
        with ctx.db.session() as s:
            statuses = s.scalars(select(KnowledgeBuild.status).where(KnowledgeBuild.id.in_(ids))).all()
        progress(f"build {kind}", sum(st in terminal for st in statuses), len(ids))
        return all(st in terminal for st in statuses)

    run_until(ctx, done, poll=0.01)
    seconds = time.perf_counter() - started
    with ctx.db.session() as s:
        rows = s.scalars(select(KnowledgeBuild).where(KnowledgeBuild.id.in_(ids))).all()
        failed = [r.message for r in rows if r.status != TaskStatus.DONE]
        if failed:
            raise InvalidRequestError(f"the {kind} build failed: {failed[0]}")
        stats = [dict(r.stats or {}) for r in rows]
    calls = sum(int((st.get("llm") or {}).get("calls", 0)) for st in stats)
    modes = sorted({str(st.get("mode")) for st in stats if st.get("mode")})
    return seconds, calls, ", ".join(modes) or kind


def _ingest_with_keywords(ctx: Context, principal: Principal, dataset: Dataset, language: str | None,
                          progress: Progress) -> tuple[float, int, IngestResult]:
    """A second scratch copy of the corpus, ingested with chat-model keywords and questions."""
    copy = open_kb(ctx, principal, dataset, language=language)
    with ctx.db.session() as s:
        kb = knowledgebases.get(s, principal=principal, kb_id_or_name=copy.kb_id)
        config = {**dict(kb.parser_config or {}), "auto_keywords": AUTO_KEYWORDS, "auto_questions": AUTO_QUESTIONS}
        knowledgebases.update(s, principal=principal, kb_id_or_name=copy.kb_id,
                              spec=KBUpdate(parser_config=config))
    before = _cached_calls(ctx, principal.tenant_id)
    started = time.perf_counter()
    try:
        ingest(ctx, principal, dataset, copy, progress)
    except BaseException:
        drop_kb(ctx, principal, copy)
        raise
    return time.perf_counter() - started, _cached_calls(ctx, principal.tenant_id) - before, copy


def _cached_calls(ctx: Context, tenant_id: str) -> int:
    with ctx.db.session() as s:
        return s.scalar(select(func.count()).select_from(LlmCacheEntry)
                        .where(LlmCacheEntry.tenant_id == tenant_id)) or 0
