"""The default retrieval path (REFERENCE §5): one function per stage.

scope -> query -> recall (one engine call: filters + full-text gate + KNN)
-> prune (inactive versions, deleted documents) -> score (term + vector)
-> threshold -> page. An empty scope returns nothing.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ragloom.dataflow import Candidate
from ragloom.docstore.base import DocStore, Filters, Hit, SearchRequest
from ragloom.knowledge.toc import TitleScorer, TocEntry
from ragloom.models.embedding import Embedder
from ragloom.models.rerank import Reranker
from ragloom.nlp import Analyzer, QueryAnalysis
from ragloom.nlp.synonyms import synonym_table
from ragloom.retrieval.features import RankFeatures
from ragloom.retrieval.fusion import Sides, fusions
from ragloom.retrieval.parents import swap_in_parents
from ragloom.retrieval.relevance import answerable, is_cjk, score_relevance, spelled_out
from ragloom.retrieval.rerank import rank_key, rerank
from ragloom.retrieval.toc import enhance
from ragloom.retrieval.types import ExplainRow, RetrievalParams, RetrievalResult, Scope

RETRY_MIN_MATCH = 0.1

# (doc_ids) -> {doc_id: active_version_id}; documents missing from the result are deleted
ActiveVersions = Callable[[list[str]], dict[str, str | None]]


@dataclass(slots=True)
class Query:
    analysis: QueryAnalysis
    vector: np.ndarray
    text: str = ""


def window(params: RetrievalParams) -> int:
    """Candidates recalled: the window of REFERENCE §5.2, grown to cover the requested page."""
    size = params.options.page_size if params.options.page_size > 1 else 30
    base = math.ceil(params.candidate_window / size) * size
    return base * math.ceil(params.options.page * params.options.page_size / base)


def build_query(question: str, scope: Scope, *, docstore: DocStore, embedder: Embedder, analyzer: Analyzer) -> Query:
    from ragloom.nlp import TermWeigher, build_fulltext_query

    def doc_freq(terms: list[str]) -> tuple[dict[str, int], int]:
        return docstore.doc_freq(scope.tenant_id, "content_terms", terms)

    weigher = TermWeigher(analyzer, doc_freq=doc_freq)
    analysis = build_fulltext_query(question, analyzer, weigher,
                                    synonyms=synonym_table(analyzer, scope.synonym_groups))
    return Query(analysis=analysis, vector=embedder.embed_query(question), text=question)


def recall(query: Query, scope: Scope, *, docstore: DocStore, size: int, mode: str = "hybrid",
           facts: dict[str, object] | None = None) -> list[Hit]:
    """One engine call (two when a text gate stricter than min-match 0.1 let nothing through: retried at 0.1)."""
    analysis = query.analysis
    filters = Filters(kb_ids=scope.kb_ids, doc_ids=scope.doc_ids, exclude_doc_ids=scope.hidden_doc_ids or None)
    text = None if analysis.is_empty or mode == "vector" else analysis.fulltext
    vector = None if mode == "keyword" else query.vector
    req = SearchRequest(filters=filters, text=text, vector=vector, text_top_k=size, vector_top_k=size)
    hits = docstore.search(scope.tenant_id, req)
    retried = False
    # a gate already at (or under) the retry's lets through every row holding any term: no retry
    if (text is not None and analysis.min_match > RETRY_MIN_MATCH
            and not any(h.text_score is not None for h in hits)):
        req.text = analysis.with_min_match(RETRY_MIN_MATCH).fulltext
        hits = docstore.search(scope.tenant_id, req)
        retried = True
    if facts is not None:
        facts.update(candidate_window=size, mode=mode, gate_retried_at_0_1=retried,
                     minimum_should_match=req.text.minimum_should_match if req.text else None,
                     text_hits=sum(1 for h in hits if h.text_score is not None), vector_only_hits=sum(
                         1 for h in hits if h.text_score is None))
    return hits


def prune(hits: list[Hit], active_versions: ActiveVersions) -> list[Hit]:
    """Keep hits whose (doc, version) is the document's active version."""
    if not hits:
        return []
    active = active_versions(sorted({h.record.doc_id for h in hits}))
    return [h for h in hits if active.get(h.record.doc_id) == h.record.version_id]


def score(hits: list[Hit], query: Query, params: RetrievalParams,
          pageranks: dict[str, int] | None = None, query_tags: dict[str, float] | None = None) -> list[Candidate]:
    """similarity = fusion of term and vector similarity (:mod:`ragloom.retrieval.fusion`: normalized,
    or the reference's weighted ``(1 − vsw)·term + vsw·vector``) + rank feature, where the rank feature is the
    knowledge base's pagerank / 100 plus 0.1 × the cosine of the question's and the chunk's tags
    (:mod:`ragloom.retrieval.features`; the reference adds the raw 0..100 pagerank and 10 × tag_cos)."""
    from ragloom.nlp import token_similarities

    if not hits:
        return []
    tksim = token_similarities(query.analysis.keywords, [h.record for h in hits])
    vsw = params.mode_vector_weight
    features = RankFeatures(pageranks, query_tags)
    cos = np.array([h.vector_score if h.vector_score is not None else float(h.record.vector @ query.vector)
                    for h in hits])
    question_cjk = is_cjk(query.text)
    sides = Sides(term=np.asarray(tksim, dtype=np.float64), cosine=cos,
                  bm25=np.array([h.text_score or 0.0 for h in hits]), chinese=query.analysis.is_chinese,
                  cross_language=np.array([is_cjk(h.record.content) != question_cjk for h in hits], dtype=bool))
    fused = fusions.create(params.fusion).fuse(sides, mode=params.options.mode, weight=vsw)
    out = []
    for h, t, v, f in zip(hits, tksim, cos, fused, strict=True):
        rank = features(h.record)
        out.append(Candidate(record=h.record, term_similarity=float(t), vector_similarity=float(v),
                             similarity=float(f) + rank, text_score=h.text_score, rank_feature=rank))
    return out


def _threshold(params: RetrievalParams) -> float:
    """The fusion's threshold: the reference's applies to its weighted hybrid score only (relative
    scores have none)."""
    return fusions.create(params.fusion).threshold(mode=params.options.mode,
                                                   weight=params.vector_similarity_weight,
                                                   kb_threshold=params.similarity_threshold)


def _relevant(c: Candidate, params: RetrievalParams) -> bool:
    """Not under ``min_relevance`` (a candidate without a relevance, added by TOC enhancement, passes)."""
    return c.relevance is None or c.relevance >= params.min_relevance


def threshold_and_page(cands: list[Candidate], params: RetrievalParams) -> tuple[list[Candidate], list[Candidate]]:
    """The requested page of the candidates over the thresholds, and all of them, best first."""
    thr = _threshold(params)
    kept = sorted((c for c in cands if c.similarity >= thr and _relevant(c, params)), key=rank_key)
    off = (params.options.page - 1) * params.options.page_size
    return kept[off : off + params.options.page_size], kept


@dataclass(slots=True)
class TocSupport:
    """What TOC enhancement needs: a document's TOC entries and a title scorer."""

    tocs: Callable[[str], list[TocEntry]]
    scorer: TitleScorer


def retrieve(question: str, scope: Scope, params: RetrievalParams, *, docstore: DocStore, embedder: Embedder,
             analyzer: Analyzer, active_versions: ActiveVersions, explain: bool = False,
             reranker: Reranker | None = None, toc: TocSupport | None = None) -> RetrievalResult:
    """Run the whole default path. ``scope.kb_ids == []`` returns an empty result.

    With ``explain``, the result also says for every recalled candidate its scores and
    the stage that dropped it, and for the query its scope, terms and gate.
    """
    facts: dict[str, object] | None = {"scope": {"kb_ids": list(scope.kb_ids), "doc_ids": scope.doc_ids}} \
        if explain else None
    if not scope.kb_ids or not question.strip():
        reason = "empty scope: nothing may be searched" if not scope.kb_ids else "empty question"
        return RetrievalResult(chunks=[], total=0, explain=[] if explain else None,
                               explain_query={**(facts or {}), "note": reason} if explain else None)
    query = build_query(question, scope, docstore=docstore, embedder=embedder, analyzer=analyzer)
    hits = recall(query, scope, docstore=docstore, size=window(params), mode=params.options.mode, facts=facts)
    kept = prune(hits, active_versions)
    cands = score(kept, query, params, scope.pageranks, scope.query_tags)
    if reranker is not None and params.rerank_window > 0:
        cands = rerank(cands, question, reranker, vector_similarity_weight=params.mode_vector_weight,
                       window=params.rerank_window)
    score_relevance(cands, question, scope.embedding_model)
    chance = answerable(cands, question, scope.embedding_model)
    cut = chance.cut(params.min_answerable) if chance is not None else 0.0
    gated = (chance is not None and params.min_relevance > 0 and cut > 0 and chance.probability < cut
             and not spelled_out(question, cands))
    if toc is not None:
        cands = enhance(cands, question, toc.tocs, lambda ids: docstore.get(scope.tenant_id, ids), toc.scorer,
                        params.options.page_size)
    if any(c.record.parent_id for c in cands):
        cands = swap_in_parents(cands, lambda ids: docstore.get(scope.tenant_id, ids))
    page, matched = ([], []) if gated else threshold_and_page(cands, params)
    result = RetrievalResult(chunks=page, total=len(matched), keywords=list(query.analysis.keywords),
                             query_vector=query.vector, documents=document_counts(matched))
    if facts is not None:
        facts.update(reranker=getattr(reranker, "name", None), rerank_window=params.rerank_window,
                     keywords=[[t, round(w, 4)] for t, w in query.analysis.keywords],
                     threshold=_threshold(params), min_relevance=params.min_relevance, fusion=params.fusion,
                     vector_similarity_weight=params.vector_similarity_weight,
                     answerable=None if chance is None else round(chance.probability, 4),
                     min_answerable=params.min_answerable, answerable_cut=round(cut, 4), gated=gated)
        result.explain_query = facts
        result.explain = explain_rows(hits, kept, cands, page, params,
                                      gated=(chance.probability, cut) if gated and chance is not None else None)
    return result


def document_counts(matched: list[Candidate]) -> list[tuple[str, str, int]]:
    """(document id, name, matches) of every document with a match, most matches first (then first seen)."""
    names = {c.record.doc_id: c.record.document_name for c in matched}
    return [(d, names[d], n) for d, n in Counter(c.record.doc_id for c in matched).most_common()]


def explain_rows(hits: list[Hit], kept: list[Hit], cands: list[Candidate], page: list[Candidate],
                 params: RetrievalParams, gated: tuple[float, float] | None = None) -> list[ExplainRow]:
    """One row per recalled candidate, best first, with the stage that dropped it (``gated``: the question's
    answerable probability and the cut it fell under: every candidate was dropped by it)."""
    kept_ids = {h.record.id for h in kept}
    on_page = {c.record.id for c in page}
    ranked = sorted(cands, key=rank_key)
    thr = _threshold(params)
    rows: list[ExplainRow] = []
    for rank, c in enumerate(ranked, 1):
        r = c.record
        if r.id in on_page:
            stage, reason = "returned", f"rank {rank}"
        elif gated is not None:
            stage, reason = "answerable", (f"the question's answerable probability {gated[0]:.4f} < {gated[1]:.4f} "
                                           f"(min_answerable {params.min_answerable}): no candidate is on its topic")
        elif c.similarity < thr:
            stage, reason = "threshold", f"similarity {c.similarity:.4f} < threshold {thr}"
        elif not _relevant(c, params):
            stage, reason = "relevance", f"relevance {c.relevance:.4f} < min_relevance {params.min_relevance}"
        else:
            stage, reason = "page", (f"rank {rank} is outside page {params.options.page} "
                                     f"(size {params.options.page_size})")
        rows.append(ExplainRow(chunk_id=r.id, doc_id=r.doc_id, kb_id=r.kb_id, document_name=r.document_name,
                               stage=stage, reason=reason, passed_gate=c.text_score is not None,
                               text_score=c.text_score, term_similarity=c.term_similarity,
                               vector_similarity=c.vector_similarity, rank_feature=c.rank_feature,
                               rerank_score=c.rerank_score, similarity=c.similarity, rank=rank,
                               relevance=c.relevance))
    for h in hits:
        if h.record.id not in kept_ids:
            rows.append(ExplainRow(chunk_id=h.record.id, doc_id=h.record.doc_id, kb_id=h.record.kb_id,
                                   document_name=h.record.document_name, stage="prune",
                                   reason="document deleted or not its active version",
                                   passed_gate=h.text_score is not None, text_score=h.text_score,
                                   vector_similarity=h.vector_score))
    return rows
