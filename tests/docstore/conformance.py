"""The DocStore conformance suite: every search store engine's tests inherit it.

Usage::

    class TestMyStore(DocStoreConformance):
        @pytest.fixture
        def store(self, tmp_path):
            s = MyStore(...)          # a fresh, empty store
            yield s
            s.close()

Each test states one clause of the contract in ``ragloom.docstore.base`` and checks it
against a real engine with small, hand-built rows (8-d vectors).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import pickle
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from ragloom.docstore.base import (
    ChunkRecord,
    Clause,
    DocStore,
    Filters,
    FullTextQuery,
    SearchRequest,
)
from ragloom.errors import InvalidRequestError, NotFoundError, StoreError

DIM = 8
T = "tenant_a"


def unit(seed: int | np.ndarray, dim: int = DIM) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=dim) if isinstance(seed, int) else seed
    v = np.asarray(v, dtype=np.float32)
    return v / np.linalg.norm(v)


def rec(
    id_: str,
    terms: str = "",
    *,
    kb: str = "kb1",
    doc: str = "d1",
    version: str = "v1",
    vector: np.ndarray | None = None,
    **kw: object,
) -> ChunkRecord:
    """A row whose ``content_terms`` are the words of ``terms``."""
    vec = vector if vector is not None else unit(zlib.crc32(id_.encode()))
    return ChunkRecord(
        id=id_,
        kb_id=kb,
        doc_id=doc,
        version_id=version,
        content=terms or id_,
        vector=vec,
        content_terms=terms.split(),
        **kw,
    )  # type: ignore[arg-type]


def terms_query(
    *terms: str, msm: float = 0.3, phrases: tuple[Clause, ...] = (), fields: dict[str, float] | None = None
) -> FullTextQuery:
    q = FullTextQuery([Clause((t,)) for t in terms] + list(phrases), minimum_should_match=msm)
    if fields is not None:
        q.fields = fields
    return q


def text_ids(store: DocStore, query: FullTextQuery, kbs: tuple[str, ...] = ("kb1",), **kw: object) -> list[str]:
    req = SearchRequest(Filters(list(kbs), **kw), text=query)  # type: ignore[arg-type]
    return [h.record.id for h in store.search(T, req)]


def scores_by_id(store: DocStore, query: FullTextQuery) -> dict[str, float]:
    hits = store.search(T, SearchRequest(Filters(["kb1"]), text=query, text_top_k=1000))
    return {h.record.id: h.text_score for h in hits}  # type: ignore[misc]


class DocStoreConformance:
    """The contract of :class:`ragloom.docstore.base.DocStore`; needs a ``store`` fixture."""

    # -- threads ---------------------------------------------------------------------

    def test_threads_share_one_store(self, store: DocStore) -> None:
        store.upsert(T, [rec("seed", "common")])
        req = SearchRequest(Filters(["kb1"]), text=terms_query("common"), vector=unit(1), text_top_k=500)

        def work(k: int) -> int:
            for b in range(5):
                store.upsert(T, [rec(f"t{k}_{b}_{i}", "common") for i in range(10)])
                store.search(T, req)
            return k

        with ThreadPoolExecutor(max_workers=4) as pool:
            assert sorted(pool.map(work, range(4))) == [0, 1, 2, 3]
        assert store.count(T, Filters(["kb1"])) == 201
        assert len(store.search(T, req)) == 201

    # -- lifecycle ------------------------------------------------------------------

    def test_create_exists_drop(self, store: DocStore) -> None:
        assert not store.index_exists(T)
        store.create_index(T, DIM)
        store.create_index(T, DIM)  # same size: no-op
        assert store.index_exists(T)
        with pytest.raises(StoreError):
            store.create_index(T, DIM + 1)
        store.drop_index(T)
        assert not store.index_exists(T)
        with pytest.raises(NotFoundError):
            store.drop_index(T)

    def test_drop_removes_rows(self, store: DocStore) -> None:
        store.upsert(T, [rec("a", "x")])
        store.drop_index(T)
        store.create_index(T, DIM)
        assert store.get(T, ["a"]) == []
        assert store.count(T, Filters(["kb1"])) == 0

    def test_missing_index_reads_as_empty(self, store: DocStore) -> None:
        f = Filters(["kb1"])
        assert store.search(T, SearchRequest(f, text=terms_query("x"), vector=unit(1))) == []
        assert store.get(T, ["a"]) == []
        assert store.count(T, f) == 0
        assert store.delete(T, f) == 0
        assert store.list_chunks(T, f) == ([], 0)
        assert store.doc_freq(T, "content_terms", ["x"]) == ({"x": 0}, 0)

    def test_upsert_creates_index(self, store: DocStore) -> None:
        assert store.upsert(T, [rec("a", "x"), rec("b", "y")]) == 2
        assert store.index_exists(T)
        assert store.count(T, Filters(["kb1"])) == 2

    def test_wrong_vector_size(self, store: DocStore) -> None:
        store.create_index(T, DIM)
        with pytest.raises(InvalidRequestError):
            store.upsert(T, [rec("a", "x"), rec("b", "y", vector=unit(2, DIM + 1))])
        assert store.get(T, ["a", "b"]) == []  # the batch is atomic
        store.upsert(T, [rec("a", "x")])
        with pytest.raises(InvalidRequestError):
            store.search(T, SearchRequest(Filters(["kb1"]), vector=unit(3, DIM - 1)))

    # -- writes ---------------------------------------------------------------------

    def test_round_trip_every_field(self, store: DocStore) -> None:
        full = ChunkRecord(
            id="r1",
            kb_id="kb1",
            doc_id="d1",
            version_id="v2",
            content="Héllo <b>wörld</b>",
            vector=unit(7),
            document_name="report.pdf",
            content_terms=["héllo", "wörld"],
            content_fine_terms=["hé", "llo"],
            title_terms=["title"],
            title_fine_terms=["ti"],
            important_keywords=["kw"],
            important_terms=["imp"],
            question_terms=["what"],
            available=False,
            order=42,
            kind="table",
            positions=[(1, 10.5, 200.0, 30.25, 40.0), (2, 0.0, 1.0, 2.0, 3.0)],
            heading_path=["Chapter 1", "Section 1.2"],
            parent_id="p9",
            html="<table></table>",
            table={"header_paths": [["State"], ["Pre-Pawn", "Handgun"]], "stub_columns": 1,
                   "rows": [["Kentucky", "12,155"]], "caption": "NICS", "notes": ["*Refers to frames"]},
        )
        store.upsert(T, [full])
        (got,) = store.get(T, ["r1"])
        for name in ChunkRecord.__slots__:  # type: ignore[attr-defined]
            if name == "vector":
                assert got.vector.dtype == np.float32
                assert np.array_equal(got.vector, full.vector)
            else:
                assert getattr(got, name) == getattr(full, name), name

    def test_returned_records_behave_as_plain_records(self, store: DocStore) -> None:
        """An engine may decode stored fields lazily; copies, pickles, assignment and
        ``dataclasses`` helpers still see every field."""
        full = rec("r1", "alpha beta", document_name="doc.pdf", positions=[(1, 1.0, 2.0, 3.0, 4.0)],
                   heading_path=["H"], parent_id="p1", title_terms=["title"])
        store.upsert(T, [full])
        hit = store.search(T, SearchRequest(Filters(["kb1"]), text=terms_query("alpha")))[0]
        (got,) = store.get(T, ["r1"])
        for r in (hit.record, got):
            assert isinstance(r, ChunkRecord)
            plain = dataclasses.asdict(copy.copy(r))
            assert plain["content"] == "alpha beta" and plain["positions"] == [(1, 1.0, 2.0, 3.0, 4.0)]
            assert pickle.loads(pickle.dumps(r)).heading_path == ["H"]
            changed = dataclasses.replace(r, content="new")
            assert (changed.content, changed.parent_id, changed.content_terms) == ("new", "p1", ["alpha", "beta"])
        got.content_terms = ["mine"]
        got.parent_id = None
        assert (got.content_terms, got.parent_id, got.title_terms, got.document_name) == (
            ["mine"], None, ["title"], "doc.pdf")

    def test_upsert_replaces_by_id(self, store: DocStore) -> None:
        store.upsert(T, [rec("a", "old words"), rec("b", "other")])
        store.upsert(T, [rec("a", "new words", doc="d2")])
        assert store.count(T, Filters(["kb1"])) == 2
        assert store.get(T, ["a"])[0].content == "new words"
        assert text_ids(store, terms_query("old")) == []
        assert text_ids(store, terms_query("new")) == ["a"]
        assert store.count(T, Filters(["kb1"], doc_ids=["d1"])) == 1

    def test_duplicate_ids_in_one_batch_last_wins(self, store: DocStore) -> None:
        store.upsert(T, [rec("a", "first"), rec("a", "second")])
        assert store.count(T, Filters(["kb1"])) == 1
        assert store.get(T, ["a"])[0].content == "second"

    @pytest.mark.parametrize(
        ("filters", "left"),
        [
            (Filters(["kb2"]), {"a", "b", "c"}),
            (Filters(["kb1", "kb2"], doc_ids=["d1"]), {"c", "d"}),
            (Filters(["kb1", "kb2"], version_ids=["v2"]), {"a", "b", "d"}),
            (Filters(["kb1", "kb2"], ids=["a", "d"]), {"b", "c"}),
            (Filters(["kb1"], doc_ids=["d1"], version_ids=["v1"]), {"c", "d"}),
            (Filters([]), {"a", "b", "c", "d"}),
            (Filters(["kb1"], ids=[]), {"a", "b", "c", "d"}),
        ],
    )
    def test_delete_by_filter(self, store: DocStore, filters: Filters, left: set[str]) -> None:
        store.upsert(
            T,
            [
                rec("a", "x", doc="d1"),
                rec("b", "x", doc="d1", available=False),
                rec("c", "x", doc="d2", version="v2"),
                rec("d", "x", kb="kb2", doc="d3"),
            ],
        )
        deleted = store.delete(T, filters)
        assert deleted == 4 - len(left)
        remaining = {r.id for r in store.get(T, ["a", "b", "c", "d"])}
        assert remaining == left

    # -- scope ----------------------------------------------------------------------

    def test_empty_scope_returns_nothing(self, store: DocStore) -> None:
        store.upsert(T, [rec("a", "x"), rec("b", "x", kb="kb2")])
        for f in (Filters([]), Filters(["kb1"], doc_ids=[]), Filters(["kb1"], ids=[])):
            req = SearchRequest(f, text=terms_query("x"), vector=unit(1))
            assert store.search(T, req) == []
            assert store.count(T, f) == 0
            assert store.list_chunks(T, f) == ([], 0)

    def test_filters_apply_before_ranking(self, store: DocStore) -> None:
        rows = [rec(f"r{i}", "x", kb=f"kb{i % 2}", doc=f"d{i % 3}") for i in range(30)]
        store.upsert(T, rows)
        f = Filters(["kb1"], doc_ids=["d2"])
        expect = {r.id for r in rows if r.kb_id == "kb1" and r.doc_id == "d2"}
        req = SearchRequest(f, text=terms_query("x"), vector=unit(5), text_top_k=3, vector_top_k=3)
        hits = store.search(T, req)
        got = [h.record.id for h in hits]
        # the text side's 3 (every row matches "x" alike: which 3 depends on the engine's tie order, its
        # segments), then the vector side's 3 nearest of the filtered rows that are not among them
        nearest = sorted(expect, key=lambda i: -float(np.dot(next(r.vector for r in rows if r.id == i), req.vector)))
        assert set(got) <= expect and len(got[:3]) == 3
        assert set(got) == set(got[:3]) | set(nearest[:3]), (got, nearest)

    def test_excluded_documents_never_pass_before_ranking(self, store: DocStore) -> None:
        """Source permissions' pre-filter: with the best rows in excluded documents, the top k are still
        k rows of the others (never top-k then drop), by text, by vector, in counts and listings."""
        query = unit(7)
        rows = [rec(f"h{i}", "x x x", doc=f"hidden{i % 2}", vector=query) for i in range(10)]
        rows += [rec(f"o{i}", "x", doc=f"open{i % 3}", vector=unit(100 + i)) for i in range(9)]
        store.upsert(T, rows)
        hidden = ["hidden0", "hidden1", "never-indexed"]
        f = Filters(["kb1"], exclude_doc_ids=hidden)
        for req, most in ((SearchRequest(f, text=terms_query("x"), text_top_k=4, vector_top_k=0), 4),
                          (SearchRequest(f, vector=query, vector_top_k=4), 4),
                          (SearchRequest(f, text=terms_query("x"), vector=query, text_top_k=4, vector_top_k=4), 8)):
            got = [h.record.id for h in store.search(T, req)]
            assert 4 <= len(got) <= most and all(i.startswith("o") for i in got), got
        assert store.count(T, f) == 9
        assert {r.id for r in store.list_chunks(T, f, limit=100)[0]} == {f"o{i}" for i in range(9)}
        narrowed = Filters(["kb1"], doc_ids=["hidden0", "open1"], exclude_doc_ids=hidden)
        assert {h.record.id for h in store.search(T, SearchRequest(narrowed, vector=query, vector_top_k=50))} == {
            "o1", "o4", "o7"}
        assert store.count(T, Filters(["kb1"], exclude_doc_ids=[])) == 19  # nothing excluded

    def test_tenant_isolation(self, store: DocStore) -> None:
        other = "tenant_b"
        store.upsert(T, [rec("a", "shared words", vector=unit(1))])
        store.upsert(other, [rec("b", "shared words", vector=unit(1))])
        for tenant, mine in ((T, "a"), (other, "b")):
            req = SearchRequest(Filters(["kb1"]), text=terms_query("shared"), vector=unit(1))
            assert [h.record.id for h in store.search(tenant, req)] == [mine]
            assert [r.id for r in store.get(tenant, ["a", "b"])] == [mine]
            assert store.count(tenant, Filters(["kb1"])) == 1
        store.drop_index(other)
        assert store.count(T, Filters(["kb1"])) == 1

    def test_unavailable_rows_never_searched_but_got(self, store: DocStore) -> None:
        store.upsert(T, [rec("p", "x y", available=False, vector=unit(1)), rec("c", "x", vector=unit(2))])
        req = SearchRequest(Filters(["kb1"]), text=terms_query("x", "y"), vector=unit(1))
        assert [h.record.id for h in store.search(T, req)] == ["c"]
        assert [r.id for r in store.get(T, ["p"])] == ["p"]

    # -- full text ------------------------------------------------------------------

    def test_gate_minimum_should_match(self, store: DocStore) -> None:
        store.upsert(
            T,
            [
                rec("one", "alpha z1 z2"),
                rec("two", "alpha beta z3"),
                rec("three", "alpha beta gamma"),
                rec("none", "z4 z5 z6"),
            ],
        )
        q = ("alpha", "beta", "gamma", "delta")  # n = 4
        for msm, passing in ((0.3, 2), (0.0, 1), (0.25, 1), (0.5, 2), (0.51, 3), (0.75, 3)):
            need = max(1, math.ceil(msm * len(q)))
            assert need == passing
            expect = {r for r, k in (("one", 1), ("two", 2), ("three", 3)) if k >= need}
            assert set(text_ids(store, terms_query(*q, msm=msm))) == expect, msm
        assert text_ids(store, terms_query(*q, msm=1.0)) == []

    def test_more_matching_terms_rank_higher(self, store: DocStore) -> None:
        store.upsert(T, [rec("one", "alpha z1 z2"), rec("two", "alpha beta z3")])
        assert text_ids(store, terms_query("alpha", "beta", msm=0.0)) == ["two", "one"]

    def test_phrases_only_add_score_to_gated_rows(self, store: DocStore) -> None:
        store.upsert(
            T,
            [
                rec("ordered", "delta eps alpha beta"),
                rec("swapped", "delta eps beta alpha"),
                rec("phrase_only", "alpha beta z1 z2"),
            ],
        )
        phrase = Clause(("alpha", "beta"), boost=2.0)
        q = terms_query("delta", "eps", msm=1.0, phrases=(phrase,))
        assert text_ids(store, q) == ["ordered", "swapped"]
        plain = scores_by_id(store, terms_query("delta", "eps", msm=1.0))
        boosted = scores_by_id(store, q)
        assert boosted["ordered"] > plain["ordered"]
        assert boosted["swapped"] == pytest.approx(plain["swapped"])
        only_phrases = FullTextQuery([phrase])  # no single-term clause: nothing passes the gate
        assert text_ids(store, only_phrases) == []

    def test_phrase_slop(self, store: DocStore) -> None:
        store.upsert(T, [rec("gap", "delta alpha zz beta")])
        tight = scores_by_id(store, terms_query("delta", phrases=(Clause(("alpha", "beta")),)))
        loose = scores_by_id(store, terms_query("delta", phrases=(Clause(("alpha", "beta"), slop=1),)))
        assert loose["gap"] > tight["gap"]

    def test_field_boosts(self, store: DocStore) -> None:
        store.upsert(
            T,
            [
                rec("in_content", "topic filler words here"),
                ChunkRecord(
                    "in_title", "kb1", "d1", "v1", "t", unit(3), title_terms=["topic", "filler", "words", "here"]
                ),
            ],
        )
        assert text_ids(store, terms_query("topic")) == ["in_title", "in_content"]
        reverse = {"title_terms": 1.0, "content_terms": 100.0}
        assert text_ids(store, terms_query("topic", fields=reverse)) == ["in_content", "in_title"]
        only_content = {"content_terms": 1.0}
        assert text_ids(store, terms_query("topic", fields=only_content)) == ["in_content"]

    def test_clause_boost_and_clause_fields(self, store: DocStore) -> None:
        store.upsert(T, [rec("a", "alpha z1"), rec("b", "beta z2")])
        q = FullTextQuery([Clause(("alpha",)), Clause(("beta",), boost=5.0)], minimum_should_match=0)
        assert text_ids(store, q) == ["b", "a"]
        restricted = FullTextQuery(
            [Clause(("alpha",), fields=("title_terms",)), Clause(("beta",))], minimum_should_match=0
        )
        assert text_ids(store, restricted) == ["b"]

    def test_a_term_is_atomic(self, store: DocStore) -> None:
        store.upsert(T, [ChunkRecord("k", "kb1", "d1", "v1", "t", unit(4), important_keywords=["machine learning"])])
        assert text_ids(store, terms_query("machine learning")) == ["k"]
        assert text_ids(store, terms_query("machine")) == []
        assert store.get(T, ["k"])[0].important_keywords == ["machine learning"]

    # -- vectors and hybrid -----------------------------------------------------------

    def test_knn_is_exact(self, store: DocStore) -> None:
        rng = np.random.default_rng(0)
        vecs = rng.normal(size=(300, DIM)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        rows = [rec(f"r{i:03d}", kb=f"kb{i % 3}", vector=vecs[i], available=i % 7 != 0) for i in range(300)]
        store.upsert(T, rows)
        q = unit(99)
        keep = np.array([r.kb_id in ("kb0", "kb2") and r.available for r in rows])
        cos = vecs @ q
        cos[~keep] = -np.inf
        order = np.argsort(-cos)[:10]
        req = SearchRequest(Filters(["kb0", "kb2"]), vector=q, vector_top_k=10)
        hits = store.search(T, req)
        assert [h.record.id for h in hits] == [rows[i].id for i in order]
        assert [h.vector_score for h in hits] == pytest.approx(cos[order].tolist(), abs=1e-5)
        assert all(h.text_score is None for h in hits)

    def test_knn_respects_every_filter(self, store: DocStore) -> None:
        rows = [rec(f"r{i}", doc=f"d{i % 4}", version=f"v{i % 2}", vector=unit(i)) for i in range(40)]
        store.upsert(T, rows)
        f = Filters(["kb1"], doc_ids=["d1", "d3"], version_ids=["v1"], ids=[f"r{i}" for i in range(20)])
        expect = {r.id for r in rows if r.doc_id in ("d1", "d3") and r.version_id == "v1" and int(r.id[1:]) < 20}
        hits = store.search(T, SearchRequest(f, vector=unit(1000), vector_top_k=100))
        assert {h.record.id for h in hits} == expect

    def test_hybrid_union_and_order(self, store: DocStore) -> None:
        rows = [
            rec(f"r{i:02d}", " ".join(["alpha"] * (i % 4 + 1) + ["beta"] * (i % 3)), vector=unit(i)) for i in range(30)
        ]
        rows.append(rec("novec", "zzz", vector=unit(500)))
        store.upsert(T, rows)
        f = Filters(["kb1"])
        text = terms_query("alpha", "beta", msm=0.0)
        q = unit(500) * 0.9 + unit(3) * 0.1
        text_only = store.search(T, SearchRequest(f, text=text, text_top_k=4))
        vec_only = store.search(T, SearchRequest(f, vector=q, vector_top_k=5))
        both = store.search(T, SearchRequest(f, text=text, vector=q, text_top_k=4, vector_top_k=5))
        ids = [h.record.id for h in both]
        assert len(ids) == len(set(ids))
        assert ids[:4] == [h.record.id for h in text_only]
        assert set(ids) == {h.record.id for h in text_only} | {h.record.id for h in vec_only}
        assert [h.text_score for h in both[:4]] == sorted((h.text_score for h in both[:4]), reverse=True)
        rest = [h.vector_score for h in both[4:]]
        assert rest == sorted(rest, reverse=True)
        all_text = scores_by_id(store, text)
        for h in both:
            assert h.vector_score == pytest.approx(float(h.record.vector @ q / np.linalg.norm(q)), abs=1e-5)
            # text_score is filled exactly when the row passes the gate
            assert h.text_score == (pytest.approx(all_text[h.record.id]) if h.record.id in all_text else None)
        assert both[4].record.id == "novec" and both[4].text_score is None

    # -- reads ----------------------------------------------------------------------

    def test_get_keeps_asked_order(self, store: DocStore) -> None:
        store.upsert(T, [rec("a"), rec("b"), rec("c", available=False)])
        assert [r.id for r in store.get(T, ["c", "zz", "a", "b"])] == ["c", "a", "b"]
        assert store.get(T, []) == []

    def test_list_chunks_paging_and_order(self, store: DocStore) -> None:
        rows = [rec(f"r{i}", doc=f"d{i % 3}", order=(7 * i) % 10) for i in range(10)]
        rows.append(rec("other", kb="kb2"))
        store.upsert(T, rows)
        expect = [r.id for r in sorted(rows[:10], key=lambda r: (r.doc_id, r.order))]
        page1, total = store.list_chunks(T, Filters(["kb1"]), offset=0, limit=4)
        page2, _ = store.list_chunks(T, Filters(["kb1"]), offset=4, limit=4)
        page3, _ = store.list_chunks(T, Filters(["kb1"]), offset=8, limit=4)
        assert total == 10
        assert [r.id for r in page1 + page2 + page3] == expect
        assert store.list_chunks(T, Filters(["kb1"]), offset=20) == ([], 10)
        only_d1, n = store.list_chunks(T, Filters(["kb1"], doc_ids=["d1"]))
        assert n == 3 and [r.order for r in only_d1] == sorted(r.order for r in only_d1)

    def test_count(self, store: DocStore) -> None:
        store.upsert(T, [rec("a"), rec("b", available=False), rec("c", kb="kb2", doc="d2")])
        assert store.count(T, Filters(["kb1", "kb2"])) == 2
        assert store.count(T, Filters(["kb1", "kb2"], available_only=False)) == 3
        assert store.count(T, Filters(["kb2"], doc_ids=["d2"])) == 1
        assert store.count(T, Filters(["kb1"], ids=["a", "b", "zz"], available_only=False)) == 2

    def test_doc_freq(self, store: DocStore) -> None:
        store.upsert(
            T,
            [
                rec("a", "x y"),
                rec("b", "x x"),
                rec("c", "z", available=False),
                ChunkRecord("d", "kb2", "d", "v", "t", unit(1), title_terms=["x"]),
            ],
        )
        assert store.doc_freq(T, "content_terms", ["x", "y", "z", "w"]) == ({"x": 2, "y": 1, "z": 1, "w": 0}, 4)
        assert store.doc_freq(T, "title_terms", ["x"]) == ({"x": 1}, 4)
        store.upsert(T, [rec("b", "y")])
        assert store.doc_freq(T, "content_terms", ["x", "y"]) == ({"x": 1, "y": 2}, 4)

    def test_doc_freq_follows_deletes_and_writes(self, store: DocStore) -> None:
        store.upsert(T, [rec("a", "x y"), rec("b", "x"), rec("c", "x", doc="d2")])
        assert store.doc_freq(T, "content_terms", ["x", "y"]) == ({"x": 3, "y": 1}, 3)
        assert store.doc_freq(T, "content_terms", ["x", "y"]) == ({"x": 3, "y": 1}, 3)  # asked again
        store.delete(T, Filters(["kb1"], doc_ids=["d2"]))
        assert store.doc_freq(T, "content_terms", ["x", "y"]) == ({"x": 2, "y": 1}, 2)
        store.delete(T, Filters(["kb1"], ids=["a"]))
        assert store.doc_freq(T, "content_terms", ["x", "y"]) == ({"x": 1, "y": 0}, 1)
        store.upsert(T, [rec("e", "y y"), rec("f", "x")])
        assert store.doc_freq(T, "content_terms", ["x", "y"]) == ({"x": 2, "y": 1}, 3)
