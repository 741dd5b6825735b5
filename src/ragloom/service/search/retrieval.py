"""Search and answer use cases: resolve the caller's scope, retrieve, answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ragloom.config import Settings
from ragloom.context import Context, Principal
from ragloom.db.models import Document, KnowledgeBase
from ragloom.errors import InvalidRequestError, ModelError, NotFoundError
from ragloom.knowledge.toc import TocEntry
from ragloom.retrieval.fusion import fusions
from ragloom.retrieval.retriever import TocSupport, retrieve
from ragloom.retrieval.types import RetrievalParams, RetrievalResult, Scope
from ragloom.schemas.options import RetrievalOptions
from ragloom.service import knowledgebases
from ragloom.service.accounts import access, workspace_models
from ragloom.service.search.tags import question_tags


def term_similarity_fn(ctx: Context) -> Callable[[str, str], float]:
    """Term similarity of two texts, analysed as the answer being written reads its language (the
    extractive answerer's, :func:`ragloom.generation.keyterms.analysis_for`), else as Chinese and English."""
    from ragloom.generation.keyterms import current_analyzer
    from ragloom.nlp import text_similarity

    analyzer = ctx.analyzer

    def sim(a: str, b: str) -> float:
        return text_similarity(current_analyzer() or analyzer, a, b)

    return sim


def resolve_scope(ctx: Context, *, principal: Principal, kb_ids: list[str], doc_ids: list[str] | None = None,
                  metadata_filter: dict[str, Any] | None = None) -> tuple[Scope, list[KnowledgeBase]]:
    """The KBs (and documents) the caller may search. Unknown or foreign ids are a 404.

    A metadata filter narrows the scope to the documents it matches (possibly none). The documents the
    caller may not read (source permissions, :mod:`ragloom.service.accounts.access`) are left out.
    """
    with ctx.db.session() as s:
        kbs = [knowledgebases.get(s, principal=principal, kb_id_or_name=k) for k in kb_ids]
        models = {kb.embedding_model for kb in kbs}
        if len(models) > 1:
            raise InvalidRequestError(
                f"the knowledge bases use different embedding models ({sorted(models)}); search them separately"
            )
        ids = [kb.id for kb in kbs]
        scoped_docs = None
        if doc_ids is not None:
            scoped_docs = list(s.scalars(select(Document.id).where(Document.kb_id.in_(ids), Document.id.in_(doc_ids))))
        if metadata_filter is not None:
            from ragloom.retrieval.metadata import matching_ids

            query = select(Document.id, Document.meta).where(Document.kb_id.in_(ids))
            if scoped_docs is not None:
                query = query.where(Document.id.in_(scoped_docs))
            scoped_docs = matching_ids(metadata_filter, {d: m for d, m in s.execute(query)})
        hidden = access.hidden_documents(s, principal, kbs)
        if hidden:  # the summary tree over every document of a knowledge base: not for one who may not read all
            from ragloom.service.builds.raptor_trees import KB_TREE_DOC

            hidden.append(KB_TREE_DOC)
    model = models.pop() if models else ctx.settings.embedding_model
    scope = Scope(tenant_id=principal.tenant_id, kb_ids=ids, embedding_model=model, doc_ids=scoped_docs,
                  hidden_doc_ids=hidden,
                  pageranks={kb.id: kb.pagerank for kb in kbs if kb.pagerank},
                  synonym_groups=[g for kb in kbs for g in (kb.synonyms or [])],
                  languages=list(dict.fromkeys(kb.language for kb in kbs)))
    return scope, kbs


def check_documents(session: Session, *, principal: Principal, doc_ids: list[str] | None) -> None:
    """A request's ``document_ids``: each must be a document the caller can see and read, else NotFoundError (a
    404, as for a knowledge base) — another workspace's id never just narrows the search to nothing.
    (A visible document outside the searched knowledge bases still only narrows it.)"""
    if not doc_ids:
        return
    rows: list[tuple[Document, KnowledgeBase]] = [
        (doc, kb) for doc, kb in session.execute(
            select(Document, KnowledgeBase).join(KnowledgeBase, KnowledgeBase.id == Document.kb_id)
            .where(knowledgebases.visible_clause(principal), Document.id.in_(doc_ids)))]
    restricted = any(doc.restricted and not access.sees_all(kb, principal) for doc, kb in rows)
    mine = access.caller_principals(session, principal) if restricted else set()
    found = {doc.id for doc, kb in rows if access.can_read(session, principal, kb, doc, mine)}
    missing = next((d for d in doc_ids if d not in found), None)
    if missing is not None:
        raise NotFoundError(f"document {missing!r} not found")


def active_versions_fn(ctx: Context) -> Callable[[list[str]], dict[str, str | None]]:
    from ragloom.service.builds.raptor_trees import KB_TREE_DOC, KB_TREE_VERSION

    def active_versions(doc_ids: list[str]) -> dict[str, str | None]:
        with ctx.db.session() as s:
            rows = s.execute(select(Document.id, Document.active_version_id).where(Document.id.in_(doc_ids)))
            found: dict[str, str | None] = {d: v for d, v in rows}
        if KB_TREE_DOC in doc_ids:  # a knowledge base's RAPTOR tree over all its documents: always current
            found[KB_TREE_DOC] = KB_TREE_VERSION
        return found

    return active_versions


def search(ctx: Context, *, principal: Principal, kb_ids: list[str], question: str,
           options: RetrievalOptions | None = None, rerank: bool = True) -> RetrievalResult:
    """The chunks that best match ``question`` in the caller's scope. The configured reranker, if any, is
    used unless ``rerank`` (``ragloom eval`` measures with and without it) or ``options.rerank`` is false."""
    opts = options or RetrievalOptions()
    check_result_window(ctx.settings, opts.page, opts.page_size)
    crossed = cross_language_query(ctx, principal, question, opts.cross_languages) if opts.cross_languages else None
    if crossed is not None:
        question = crossed["search_query"]
    routing = None
    if opts.route:
        kb_ids, routing = route_knowledge_bases(ctx, principal=principal, kb_ids=kb_ids, question=question)
    fusion = opts.fusion or ctx.settings.fusion
    scope, kbs = resolve_scope(ctx, principal=principal, kb_ids=kb_ids, doc_ids=opts.document_ids,
                               metadata_filter=opts.metadata_filter)
    if scope.doc_ids is not None and not scope.doc_ids:
        return RetrievalResult(chunks=[], total=0, embedding_model=scope.embedding_model, routing=routing)
    scope.query_tags = question_tags(ctx, kbs, question)
    first = kbs[0] if kbs else None
    kb_threshold = first.similarity_threshold if first else None
    params = RetrievalParams(
        options=opts,
        similarity_threshold=_pick(opts.similarity_threshold, kb_threshold, default=0.2),
        vector_similarity_weight=vector_weight(ctx.settings, fusion, opts.vector_similarity_weight, first),
        rerank_window=ctx.settings.rerank_window,
        fusion=fusion,
        min_relevance=min_relevance(ctx.settings, fusion, opts, first),
        min_answerable=opts.min_answerable if opts.min_answerable is not None else ctx.settings.min_answerable,
    )
    embedder = workspace_models.embedder(ctx, scope.embedding_model)
    result = retrieve(question, scope, params, docstore=ctx.docstore, embedder=embedder,
                      analyzer=ctx.analyzers.for_query(question, scope.languages),
                      active_versions=active_versions_fn(ctx), explain=opts.explain,
                      reranker=workspace_models.reranker(ctx, principal.tenant_id) if rerank and opts.rerank else None,
                      toc=toc_support(ctx, scope.tenant_id, scope.embedding_model) if opts.toc_enhance else None)
    result.embedding_model = scope.embedding_model
    result.languages = list(scope.languages)
    result.routing = routing
    if opts.use_kg and opts.page == 1:
        from ragloom.retrieval.graph_evidence import put_first
        from ragloom.service.search.graph import kg_candidates

        put_first(result, kg_candidates(ctx, kbs, question, embedder, scope.hidden_doc_ids))
    if routing is not None and result.explain_query is not None:
        result.explain_query["routing"] = routing
    if result.explain_query is not None:
        result.explain_query["query_tags"] = scope.query_tags
        if crossed is not None:
            result.explain_query["cross_languages"] = crossed
    return result


def cross_language_query(ctx: Context, principal: Principal, question: str, languages: list[str]) -> dict[str, Any]:
    """The question and its translations into ``languages`` by the workspace's chat model, one per line (what
    is searched), with the translations and a note for explain; without a chat model, the question alone."""
    from ragloom.generation.expansion import translate_question

    model = workspace_models.chat_model(ctx, principal.tenant_id)
    try:
        translations = translate_question(question, list(languages), model)
        note = (f"translated by {model.name}" if model is not None else
                "no chat model is configured: the question was searched as asked, untranslated")
    except ModelError as exc:  # a search does not fail for want of a translation
        translations, note = [], f"the chat model could not translate the question ({exc.message}): searched as asked"
    return {"languages": list(languages), "translations": translations, "note": note,
            "search_query": "\n".join([question, *translations])}


def check_result_window(settings: Settings, page: int, page_size: int) -> None:
    """Refuse a page the engines would have to recall too many candidates for: ``page × page_size``
    may not exceed ``settings.max_result_window`` (the candidate window grows with it)."""
    limit = settings.max_result_window
    if page * page_size > limit:
        raise InvalidRequestError(
            f"page x page_size = {page * page_size} is over the result window limit of {limit} "
            f"(RAGLOOM_MAX_RESULT_WINDOW): ask for an earlier page or a smaller page_size"
        )


def min_relevance(settings: Settings, fusion: str, opts: RetrievalOptions, kb: KnowledgeBase | None) -> float:
    """The relevance under which chunks are dropped: the request's ``min_relevance``; else its
    ``similarity_threshold`` when the fusion is relative (normalized: the threshold has no similarity to cut,
    so it cuts the relevance, as RAGFlow's and Dify's clients mean it); else the knowledge base's; else the
    server's (``settings.min_relevance``)."""
    if opts.min_relevance is not None:
        return opts.min_relevance
    if opts.similarity_threshold is not None and fusions.create(fusion).threshold(
            mode="hybrid", weight=1.0, kb_threshold=1.0) == 0.0:
        return opts.similarity_threshold
    if kb is not None and kb.min_relevance is not None:
        return kb.min_relevance
    return settings.min_relevance


def vector_weight(settings: Settings, fusion: str, requested: float | None, kb: KnowledgeBase | None) -> float:
    """The vector side's weight: the request's, else the fusion's default (normalized:
    ``settings.fusion_vector_weight``; weighted: the knowledge base's ``vector_similarity_weight``, 0.3)."""
    if requested is not None:
        return requested
    return fusions.create(fusion).default_weight(settings_weight=settings.fusion_vector_weight,
                                             kb_weight=kb.vector_similarity_weight if kb is not None else None)


def route_knowledge_bases(ctx: Context, *, principal: Principal, kb_ids: list[str],
                          question: str) -> tuple[list[str], list[dict[str, object]]]:
    """The visible knowledge bases (all of them when ``kb_ids`` is empty) that fit the question, and
    why: ``{"kb_id", "name", "score", "chosen"}`` per candidate, best first. With one candidate, or
    candidates of different embedding models, nothing is scored (``score`` None) and all are kept."""
    from ragloom.retrieval.router import route

    with ctx.db.session() as s:
        kbs = ([knowledgebases.get(s, principal=principal, kb_id_or_name=k) for k in kb_ids] if kb_ids
               else knowledgebases.list_visible(s, principal=principal))
        described = [(kb.id, f"{kb.name}. {kb.description}".strip()) for kb in kbs]
        names = {kb.id: kb.name for kb in kbs}
        models = {kb.embedding_model for kb in kbs}
    if len(described) <= 1 or len(models) != 1:
        return [k for k, _ in described], [{"kb_id": k, "name": names[k], "score": None, "chosen": True}
                                           for k, _ in described]
    embedder = workspace_models.embedder(ctx, models.pop())
    choices = route(question, described, embed_query=embedder.embed_query,
                    embed_passages=lambda ts: embedder.embed_passages(ts), term_similarity=term_similarity_fn(ctx))
    return ([c.kb_id for c in choices if c.chosen],
            [{"kb_id": c.kb_id, "name": names[c.kb_id], "score": round(c.score, 4), "chosen": c.chosen}
             for c in choices])


def toc_support(ctx: Context, tenant_id: str, embedding_model: str) -> TocSupport:
    """TOC enhancement over this tenant's index: titles scored by the chat model, else by similarity."""
    from ragloom.db.models import Task
    from ragloom.docstore.ids import toc_id
    from ragloom.knowledge.toc import llm_title_scorer, load_toc, similarity_title_scorer

    def tocs(doc_id: str) -> list[TocEntry]:
        with ctx.db.session() as s:
            version = s.scalar(select(Document.active_version_id).where(Document.id == doc_id))
            pages = sorted(set(s.scalars(select(Task.from_page).where(Task.version_id == version)))) if version else []
        if not version:
            return []
        rows = ctx.docstore.get(tenant_id, [toc_id(version, p) for p in pages])
        return [e for r in rows for e in load_toc(r.content)]

    chat = workspace_models.chat_model(ctx, tenant_id)
    if chat is not None:
        return TocSupport(tocs=tocs, scorer=llm_title_scorer(chat))
    embedder = workspace_models.embedder(ctx, embedding_model)
    return TocSupport(tocs=tocs, scorer=similarity_title_scorer(
        embedder.embed_query, lambda ts: embedder.embed_passages(ts), term_similarity_fn(ctx)))


def _pick(*values: float | None, default: float) -> float:
    """The first value that is set, else ``default``."""
    return next((v for v in values if v is not None), default)
