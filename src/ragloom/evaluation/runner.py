"""``ragloom eval``: ingest a labelled set, run every retrieval mode over its queries, score them.

Every mode recalls the same candidate window (the one a page of ``top_k`` gets,
REFERENCE §5.2) and ranks all of it; the ranked chunks become a ranked list of
corpus ids (several chunks of one document count once, at their best rank),
cut to ``top_k``. ``hybrid`` uses the configured fusion (``settings.fusion``,
normalized by default), ``hybrid-weighted`` the reference's weighted fusion. The
plain modes never rerank. ``hybrid+rerank`` sends the hybrid candidates through
the rerank stage (:func:`ragloom.retrieval.rerank.rerank`, the vector weight of
that fusion, ``settings.rerank_window``) with the given
reranker or the configured one, and is skipped, with a note, when there is none.
Latency is the wall time of one search call (query embedding included) or, for
the reranker mode, of the hybrid call plus the rerank.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ragloom.context import Context, Principal
from ragloom.dataflow import Candidate
from ragloom.errors import InvalidRequestError
from ragloom.evaluation import metrics as M
from ragloom.evaluation.answers import DEFAULT_TOP_N, AnswerReport, check_answers, evaluate_answers
from ragloom.evaluation.dataset import Dataset, LabelledQuery, load_dataset
from ragloom.evaluation.enrichment import check_enrichments, evaluate_enrichments
from ragloom.evaluation.ingest import (
    IngestResult,
    Progress,
    drop_kb,
    existing_kb_notes,
    ingest,
    no_progress,
    open_kb,
)
from ragloom.evaluation.report import EnrichmentResult, EvalReport, ModeResult, QueryOutcome, require_matplotlib
from ragloom.models.rerank import Reranker
from ragloom.retrieval.rerank import rerank
from ragloom.retrieval.retriever import window
from ragloom.retrieval.types import RetrievalParams
from ragloom.schemas.options import RetrievalOptions
from ragloom.service import knowledgebases
from ragloom.service.search.retrieval import search, vector_weight

log = logging.getLogger(__name__)

SEARCH_MODES = ("keyword", "vector", "hybrid", "hybrid-weighted")
RERANK_MODE = "hybrid+rerank"
DEFAULT_MODES = (*SEARCH_MODES, RERANK_MODE)

def _check_modes(modes: Sequence[str], top_k: int) -> None:
    if not modes:
        raise InvalidRequestError("give at least one mode")
    unknown = [m for m in modes if m not in DEFAULT_MODES]
    if unknown:
        raise InvalidRequestError(f"unknown mode(s) {unknown}; known: {list(DEFAULT_MODES)}")
    if not 1 <= top_k <= 100:
        raise InvalidRequestError("top_k must be between 1 and 100")


def rank_ids(cands: list[Candidate], names: dict[str, str], k: int,
             sources: Callable[[Candidate], list[str]] | None = None) -> list[str | None]:
    """Corpus ids of the candidates, first rank wins, cut to ``k``. ``None`` for a non-corpus chunk.

    With ``sources``, a candidate that is no corpus document's chunk (a knowledge-graph item, a summary
    over several documents) counts as the corpus documents of the rows it was built from, in their
    order (``sources`` gives their document names)."""
    out: list[str | None] = []
    seen: set[str] = set()
    for c in cands:
        cid = names.get(c.record.document_name)
        expanded = [cid] if cid is not None or sources is None else [names.get(n) for n in sources(c)] or [None]
        for one in expanded:
            if one is None:
                out.append(None)
            elif one not in seen:
                seen.add(one)
                out.append(one)
            if len(out) >= k:
                return out
    return out


def source_names(ctx: Context, tenant_id: str) -> Callable[[Candidate], list[str]]:
    """The document names of the rows a summary or knowledge-graph item was built from, followed down
    through summaries of summaries (:func:`rank_ids`'s ``sources``)."""

    def names(c: Candidate) -> list[str]:
        out: list[str] = []
        ids, depth = list(c.record.source_ids), 0
        while ids and depth < 16:
            rows = ctx.docstore.get(tenant_id, ids)
            out.extend(r.document_name for r in rows if not r.source_ids)
            ids, depth = [i for r in rows if r.source_ids for i in r.source_ids], depth + 1
        return list(dict.fromkeys(out))

    return names


def _summarise(name: str, queries: list[LabelledQuery], ranked: dict[str, list[str | None]],
               latencies: dict[str, float], k: int, graded: bool) -> ModeResult:
    sums = dict.fromkeys(("hit@1", "hit@5", f"MRR@{k}", f"nDCG@{k}", f"Recall@{k}"), 0.0)
    outcomes = []
    for q in queries:
        r = ranked[q.id]
        nd = M.ndcg_at(r, q.relevant, k, q.gain if graded else None)
        sums["hit@1"] += M.hit_at(r, q.relevant, 1)
        sums["hit@5"] += M.hit_at(r, q.relevant, 5)
        sums[f"MRR@{k}"] += M.mrr_at(r, q.relevant, k)
        sums[f"nDCG@{k}"] += nd
        sums[f"Recall@{k}"] += M.recall_at(r, q.relevant, k)
        outcomes.append(QueryOutcome(query_id=q.id, ranked=r, latency_ms=latencies[q.id], ndcg=nd))
    n = max(len(queries), 1)
    lat = list(latencies.values())
    return ModeResult(name=name, metrics={key: v / n for key, v in sums.items()},
                      latency_p50_ms=M.percentile(lat, 50), latency_p95_ms=M.percentile(lat, 95),
                      queries=len(queries), outcomes=outcomes)


class _Run:
    """The query loop of one evaluation: every query through every mode."""

    def __init__(self, ctx: Context, principal: Principal, kb_id: str, dataset: Dataset, top_k: int,
                 reranker: Reranker | None, use_kg: bool = False) -> None:
        self.ctx, self.principal, self.kb_id, self.top_k, self.reranker = ctx, principal, kb_id, top_k, reranker
        self.use_kg = use_kg
        self.names = dataset.by_document_name()
        self.sources = source_names(ctx, principal.tenant_id)
        self.window = window(RetrievalParams(RetrievalOptions(page_size=top_k)))
        with ctx.db.session() as s:  # the weight the hybrid mode's fusion uses
            kb = knowledgebases.get(s, principal=principal, kb_id_or_name=kb_id)
            self.vsw = vector_weight(ctx.settings, ctx.settings.fusion, None, kb)

    def search(self, mode: str, question: str) -> tuple[list[Candidate], float]:
        fusion = "weighted" if mode == "hybrid-weighted" else None  # None: the configured default
        opts = RetrievalOptions(mode=mode.removesuffix("-weighted"), page_size=self.window, similarity_threshold=0.0,
                                fusion=fusion, use_kg=self.use_kg)
        start = time.perf_counter()
        res = search(self.ctx, principal=self.principal, kb_ids=[self.kb_id], question=question, options=opts,
                     rerank=False)
        return res.chunks, (time.perf_counter() - start) * 1000

    def rerank(self, question: str, cands: list[Candidate]) -> list[Candidate]:
        assert self.reranker is not None  # run_eval drops the mode when there is no reranker
        return rerank(cands, question, self.reranker, vector_similarity_weight=self.vsw,
                      window=self.ctx.settings.rerank_window)

    def warm_up(self, question: str, modes: Sequence[str]) -> None:
        """One unmeasured run per mode: loading dictionaries and models is not query latency."""
        for mode in modes:
            cands, _ = self.search(mode if mode in SEARCH_MODES else "hybrid", question)
            if mode == RERANK_MODE:
                self.rerank(question, cands)

    def one_query(self, q: LabelledQuery, modes: Sequence[str]) -> dict[str, tuple[list[str | None], float]]:
        out: dict[str, tuple[list[str | None], float]] = {}
        hybrid: tuple[list[Candidate], float] | None = None
        for mode in modes:
            if mode in SEARCH_MODES:
                cands, ms = self.search(mode, q.query)
                if mode == "hybrid":
                    hybrid = (cands, ms)
            else:  # the reranker mode: reorder the hybrid candidates
                cands, ms = hybrid or self.search("hybrid", q.query)
                start = time.perf_counter()
                cands = self.rerank(q.query, cands)
                ms += (time.perf_counter() - start) * 1000
            out[mode] = (rank_ids(cands, self.names, self.top_k, self.sources), ms)
        return out


def evaluate(ctx: Context, principal: Principal, dataset: Dataset, kb_id: str, *, modes: Sequence[str],
             top_k: int, reranker: Reranker | None, progress: Progress = no_progress,
             use_kg: bool = False) -> tuple[list[ModeResult], int]:
    """Run the queries of ``dataset`` against an already ingested knowledge base; returns (results, window).
    ``use_kg``: every search puts the knowledge graph's evidence first (retrieval's ``use_kg``)."""
    run = _Run(ctx, principal, kb_id, dataset, top_k, reranker, use_kg)
    ranked: dict[str, dict[str, list[str | None]]] = {m: {} for m in modes}
    latencies: dict[str, dict[str, float]] = {m: {} for m in modes}
    queries = [q for q in dataset.queries if not q.unanswerable]  # nothing relevant to rank
    if queries:
        run.warm_up(queries[0].query, modes)
    for i, q in enumerate(queries, 1):
        for mode, (ids, ms) in run.one_query(q, modes).items():
            ranked[mode][q.id], latencies[mode][q.id] = ids, ms
        progress("query", i, len(queries))
    graded = any(q.grades for q in queries)
    results = [_summarise(m, queries, ranked[m], latencies[m], top_k, graded) for m in modes]
    return results, run.window


def run_eval(ctx: Context, principal: Principal, directory: Path | str, *, kb: str | None = None,
             modes: Sequence[str] = DEFAULT_MODES, top_k: int = 10, plot: Path | str | None = None,
             progress: Progress = no_progress, reranker: Reranker | None = None, keep: bool = False,
             max_queries: int | None = None, language: str | None = None, answers: bool = False,
             answer_top_n: int = DEFAULT_TOP_N, max_corpus: int | None = None,
             grade_order: str = "higher", enrich: Sequence[str] = (),
             corpus_root: Path | str | None = None) -> EvalReport:
    """Evaluate retrieval on the labelled set in ``directory`` (see :mod:`ragloom.evaluation.dataset`).

    The corpus goes into a new scratch knowledge base, deleted afterwards unless ``keep``; with
    ``kb`` (an existing knowledge base, by id or name) nothing is uploaded or built: the knowledge
    base is measured as it stands (its documents named as the corpus names them; a note counts the
    corpus documents it lacks), and ``enrich`` is refused. ``hybrid+rerank`` uses ``reranker`` or
    else the configured one (``ctx.reranker``); with neither it is left out and a note says so.
    ``plot`` writes a PNG chart (needs matplotlib: checked first, before any work). ``answers`` also
    answers every query that has gold answers (extractively, and with the configured chat model when
    there is one) and scores the answers (:mod:`ragloom.evaluation.answers`; ``answer_top_n`` chunks of evidence each).
    ``max_corpus`` keeps the first N corpus items and the queries they answer, ``max_queries`` the
    first N queries (a sample of a large set; ``corpus_size`` and ``query_count`` say what was run).
    ``grade_order``: ``lower`` when the set's grade 1 is the most relevant (Cranfield's codes).
    ``enrich``: also measure ``hybrid`` with each of these enrichments built (``kg``, ``raptor``,
    ``keywords``; :mod:`ragloom.evaluation.enrichment`), beside its build time and chat-model calls.
    ``corpus_root``: the directory the corpus's ``path`` entries are relative to (default: ``directory``).
    Unanswerable queries are left out of the retrieval scores (a note counts them).
    Raises :class:`InvalidRequestError` for a malformed set or bad arguments.
    """
    if plot is not None:
        require_matplotlib()
    _check_modes(modes, top_k)
    enrich = check_enrichments(enrich)
    if enrich and kb is not None:
        raise InvalidRequestError("enrichments are built over a scratch knowledge base only: leave out the "
                                  "knowledge base (kb) to measure them")
    dataset = load_dataset(directory, max_queries=max_queries, max_corpus=max_corpus, grade_order=grade_order,
                           corpus_root=corpus_root)
    if answers:
        check_answers(dataset, answer_top_n)  # before the corpus is ingested
    notes: list[str] = []
    absent = sum(1 for q in dataset.queries if q.unanswerable)
    if absent:
        notes.append(f"{absent} unanswerable queries not in the retrieval scores")
    run_modes = list(dict.fromkeys(modes))
    reranker = reranker if reranker is not None else ctx.reranker
    if RERANK_MODE in run_modes and reranker is None:
        run_modes.remove(RERANK_MODE)
        notes.append(f"{RERANK_MODE} skipped: no reranker configured")
    if not run_modes:
        raise InvalidRequestError("no mode left to run (hybrid+rerank needs a reranker)")
    target = open_kb(ctx, principal, dataset, kb=kb, language=language)
    try:
        started = time.perf_counter()
        if target.scratch:
            ingest(ctx, principal, dataset, target, progress)
        else:
            notes.extend(existing_kb_notes(ctx, dataset, target))
        ingest_seconds = time.perf_counter() - started
        results, cand_window = evaluate(ctx, principal, dataset, target.kb_id, modes=run_modes, top_k=top_k,
                                        reranker=reranker, progress=progress)
        enriched: list[EnrichmentResult] = []
        if enrich:
            enriched, enrich_notes = evaluate_enrichments(ctx, principal, dataset, target, enrich, evaluate=evaluate,
                                                          top_k=top_k, language=language, progress=progress)
            notes.extend(enrich_notes)
        answer_report: AnswerReport | None = None
        if answers:
            answer_report = evaluate_answers(ctx, principal, dataset, target.kb_id, top_n=answer_top_n,
                                             progress=progress)
    finally:
        if not keep:
            drop_kb(ctx, principal, target)
    notes.extend(_ingest_notes(target, keep))
    report = EvalReport(dataset=dataset.directory.name or str(dataset.directory), knowledge_base=target.kb_name,
                        scratch=target.scratch and not keep, corpus_size=len(dataset.corpus),
                        query_count=len(dataset.queries), top_k=top_k, candidate_window=cand_window,
                        graded=any(q.grades for q in dataset.queries), modes=results, notes=notes,
                        ingest_seconds=ingest_seconds, answers=answer_report, enrichments=enriched)
    if plot is not None:
        report.plot(plot)
    return report


def _ingest_notes(target: IngestResult, keep: bool) -> list[str]:
    notes = []
    if target.failed:
        shown = ", ".join(target.failed[:5]) + (" ..." if len(target.failed) > 5 else "")
        notes.append(f"{len(target.failed)} corpus documents failed to parse and can never be found: {shown}")
    if target.empty:
        notes.append(f"{len(target.empty)} empty corpus passages not ingested: {', '.join(target.empty[:5])}")
    if target.scratch and keep:
        notes.append(f"scratch knowledge base kept: {target.kb_name}")
    return notes
