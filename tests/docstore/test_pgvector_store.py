"""PgVectorDocStore: the conformance suite on a real PostgreSQL + pgvector, plus what only this
engine has (its settings, several processes on one tenant, forks, the HNSW path, unsafe tenant ids)."""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg
import pytest

from ragloom.config import Settings
from ragloom.dataflow import ChunkRecord
from ragloom.docstore import _pg_text
from ragloom.docstore._pg_text import phrase_freq
from ragloom.docstore.base import Clause, DocStore, Filters, FullTextQuery, SearchRequest
from ragloom.docstore.pgvector_store import PgVectorDocStore
from ragloom.docstore.registry import open_docstore
from ragloom.errors import ConfigError, InvalidRequestError, StoreError
from tests.docstore.conformance import DIM, DocStoreConformance, rec, terms_query, unit
from tests.pg import PgServer


class TestPgVectorDocStore(DocStoreConformance):
    @pytest.fixture
    def store(self, pg: PgServer) -> Iterator[DocStore]:
        s = PgVectorDocStore(pg.new_database())
        yield s
        s.close()


class TestGateCheckedInPython(TestPgVectorDocStore):
    """The suite again with the gate's clause count done per clause through the GIN index
    (as for large candidate sets)."""

    @pytest.fixture
    def store(self, pg: PgServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[DocStore]:
        monkeypatch.setattr(_pg_text, "SQL_GATE_ROWS", -1)
        s = PgVectorDocStore(pg.new_database())
        yield s
        s.close()


@pytest.fixture
def url(pg: PgServer) -> str:
    return pg.new_database()


def test_chosen_by_the_settings(url: str, tmp_path: Path) -> None:
    store = open_docstore(Settings(home=tmp_path, docstore="pgvector", docstore_url=url, _env_file=None))
    assert isinstance(store, PgVectorDocStore) and isinstance(store, DocStore)
    store.upsert("t", [rec("a", "x")])
    plain = url.replace("postgresql+psycopg://", "postgresql://")
    # the metadata DB's URL serves when the store has none of its own
    other = open_docstore(Settings(home=tmp_path, docstore="pgvector", database_url=plain, _env_file=None))
    assert [r.id for r in other.get("t", ["a"])] == ["a"]
    store.close()
    other.close()


@pytest.mark.parametrize(
    ("kw", "setting"),
    [
        ({}, "RAGLOOM_DOCSTORE_URL"),  # nothing set (the metadata DB is SQLite)
        ({"docstore_url": "mysql://u@h/db"}, "RAGLOOM_DOCSTORE_URL"),
        ({"docstore_url": "postgresql://h/db?bogus=1"}, "RAGLOOM_DOCSTORE_URL"),
        ({"database_url": "sqlite:///x.db"}, "RAGLOOM_DOCSTORE_URL"),
        ({"database_url": "postgresql://h/db?bogus=1"}, "RAGLOOM_DATABASE_URL"),
    ],
)
def test_a_missing_or_bad_url_is_a_config_error_naming_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kw: dict[str, str], setting: str
) -> None:
    for name in ("RAGLOOM_DOCSTORE_URL", "RAGLOOM_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigError, match=setting):
        open_docstore(Settings(home=tmp_path, docstore="pgvector", _env_file=None, **kw))


def test_nothing_connects_before_the_first_call() -> None:
    store = PgVectorDocStore("postgresql://nobody@/nowhere?host=/nonexistent-socket-dir")
    with pytest.raises(StoreError, match="connecting to the search store"):
        store.count("t", Filters(["kb1"]))
    store.close()


def test_unsafe_tenant_ids_are_only_parameters(url: str) -> None:
    store = PgVectorDocStore(url)
    evil = 'x"; DROP TABLE ragloom_docstore_indexes; --'
    store.upsert(evil, [rec("a", "x")])
    store.upsert("T", [rec("b", "x")])
    assert [r.id for r in store.get(evil, ["a", "b"])] == ["a"]
    assert store.index_exists(evil) and store.index_exists("T") and not store.index_exists("t")
    with pytest.raises(InvalidRequestError):
        store.index_exists("")
    store.drop_index(evil)
    assert store.count("T", Filters(["kb1"])) == 1
    store.close()


def test_terms_are_matched_exactly_and_cjk_works(url: str) -> None:
    store = PgVectorDocStore(url)
    store.upsert("t", [
        ChunkRecord("zh", "kb1", "d1", "v1", "t", unit(1), content_terms=["机器", "学习", "模型"]),
        ChunkRecord("q", "kb1", "d1", "v1", "t", unit(2), content_terms=["it's", "a", "%_like", "x" * 500]),
    ])
    f = Filters(["kb1"])
    assert [h.record.id for h in store.search("t", SearchRequest(f, text=terms_query("学习")))] == ["zh"]
    for term in ("it's", "%_like", "x" * 500):
        assert [h.record.id for h in store.search("t", SearchRequest(f, text=terms_query(term)))] == ["q"]
    assert store.search("t", SearchRequest(f, text=terms_query("%"))) == []
    phrase = FullTextQuery([Clause(("机器",)), Clause(("机器", "学习"), boost=3.0)])
    plain = store.search("t", SearchRequest(f, text=terms_query("机器")))[0].text_score
    assert store.search("t", SearchRequest(f, text=phrase))[0].text_score > plain  # type: ignore[operator]
    assert store.doc_freq("t", "content_terms", ["x" * 500, "学习", ""]) == ({"x" * 500: 1, "学习": 1, "": 0}, 2)
    with pytest.raises(InvalidRequestError):
        store.upsert("t", [ChunkRecord("n", "kb1", "d1", "v1", "t", unit(3), content_terms=["nul\x00"])])
    store.close()


def test_term_frequency_and_phrase_positions() -> None:
    assert phrase_freq(["a", "b", "a", "b"], ("a", "b"), 0) == 2
    assert phrase_freq(["a", "x", "b"], ("a", "b"), 0) == 0
    assert phrase_freq(["a", "x", "b"], ("a", "b"), 1) == 1
    assert phrase_freq(["b", "a"], ("a", "b"), 5) == 0  # in order only
    assert phrase_freq(["a", "a", "b"], ("a", "a", "b"), 0) == 1


def test_repeated_terms_count(url: str) -> None:
    store = PgVectorDocStore(url)
    store.upsert("t", [rec("twice", "x x y"), rec("once", "x y z"), rec("apart", "x y x")])
    hits = store.search("t", SearchRequest(Filters(["kb1"]), text=terms_query("x")))
    assert [h.record.id for h in hits][2] == "once"
    assert hits[0].text_score == pytest.approx(hits[1].text_score)
    store.close()


def test_hnsw_path_with_filters(url: str) -> None:
    """Above ``exact_knn_rows`` the HNSW index answers (iterative scan): every returned row
    passes the filters, the count is k, and the result matches the exact one closely."""
    rng = np.random.default_rng(1)
    vecs = rng.normal(size=(1500, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    rows = [rec(f"r{i:04d}", kb=f"kb{i % 5}", vector=vecs[i]) for i in range(1500)]
    store = PgVectorDocStore(url, exact_knn_rows=50)
    for a in range(0, 1500, 500):
        store.upsert("t", rows[a : a + 500])
    q = unit(7)
    cos = vecs @ q
    keep = np.array([r.kb_id == "kb3" for r in rows])
    cos[~keep] = -np.inf
    exact = {rows[i].id for i in np.argsort(-cos)[:20]}
    hits = store.search("t", SearchRequest(Filters(["kb3"]), vector=q, vector_top_k=20))
    assert len(hits) == 20 and all(h.record.kb_id == "kb3" for h in hits)
    assert len({h.record.id for h in hits} & exact) >= 18
    scores = [h.vector_score for h in hits]
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    store.close()


def _upsert_worker(url: str, prefix: str, start: mp.Barrier) -> None:  # type: ignore[type-arg]
    store = PgVectorDocStore(url)
    start.wait()
    for batch in range(10):
        own = [rec(f"{prefix}{batch}_{i}", f"common {prefix}") for i in range(20)]
        shared = [rec(f"s{batch}_{i}", f"common shared {prefix}") for i in range(10)]
        store.upsert("t", own + shared)
        store.delete("t", Filters(["kb1"], ids=[f"{prefix}{batch}_0"]))
    store.close()


@pytest.mark.slow
def test_two_processes_write_one_tenant(url: str) -> None:
    ctx = mp.get_context("spawn")
    start = ctx.Barrier(2)
    procs = [ctx.Process(target=_upsert_worker, args=(url, p, start)) for p in "ab"]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    expect = {f"{p}{b}_{i}" for p in "ab" for b in range(10) for i in range(1, 20)}
    expect |= {f"s{b}_{i}" for b in range(10) for i in range(10)}
    store = PgVectorDocStore(url)
    f = Filters(["kb1"])
    rows, total = store.list_chunks("t", f, limit=1000)
    assert total == len(expect) == 480 and sorted(r.id for r in rows) == sorted(expect)
    req = SearchRequest(f, text=terms_query("common"), vector=unit(1), text_top_k=1000, vector_top_k=1000)
    hits = store.search("t", req)
    assert len(hits) == len({h.record.id for h in hits}) == 480
    assert all(h.text_score is not None for h in hits)
    assert store.doc_freq("t", "content_terms", ["common", "shared"]) == ({"common": 480, "shared": 100}, 480)
    store.close()


def test_a_forked_child_opens_its_own_connections(url: str) -> None:
    store = PgVectorDocStore(url)
    store.upsert("t", [rec("parent", "x")])  # the parent holds a pooled connection now
    pid = os.fork()
    if pid == 0:  # the child: uses the store, exits without running pytest's teardown
        code = 1
        try:
            store.upsert("t", [rec("child", "x")])
            code = 0 if store.count("t", Filters(["kb1"])) == 2 else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert {r.id for r in store.get("t", ["parent", "child"])} == {"parent", "child"}  # its connection still works
    store.close()


def _index_defs(url: str, tenant: str) -> list[str]:
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as conn:
        row = conn.execute("SELECT table_name FROM ragloom_docstore_indexes WHERE tenant_id = %s", (tenant,)).fetchone()
        assert row is not None
        return [r[0] for r in conn.execute("SELECT indexdef FROM pg_indexes WHERE tablename = %s", (row[0],))]


def _has_hnsw(defs: list[str]) -> bool:
    return any("USING hnsw (embedding vector_cosine_ops)" in d for d in defs)


def test_tables_and_indexes(url: str) -> None:
    store = PgVectorDocStore(url, hnsw_min_rows=0)
    store.create_index("t", DIM)
    defs = _index_defs(url, "t")
    assert _has_hnsw(defs) and any("USING gin (tkeys)" in d for d in defs)
    store.close()


def test_the_hnsw_index_is_built_once_the_table_is_large_enough(url: str) -> None:
    """Below ``exact_knn_rows`` every search scans exactly: no HNSW index is kept up to date
    until a write takes the table past it; from then on it exists and answers."""
    store = PgVectorDocStore(url, exact_knn_rows=30)
    store.create_index("t", DIM)
    store.upsert("t", [rec(f"a{i}", "x", vector=unit(i)) for i in range(20)])
    assert not _has_hnsw(_index_defs(url, "t"))
    store.upsert("t", [rec(f"a{i}", "x", vector=unit(i)) for i in range(10)])  # replaces rows: still 20
    assert not _has_hnsw(_index_defs(url, "t"))
    store.upsert("t", [rec(f"b{i}", "x", vector=unit(100 + i)) for i in range(10)])
    assert _has_hnsw(_index_defs(url, "t"))
    hits = store.search("t", SearchRequest(Filters(["kb1"]), vector=unit(5), vector_top_k=3))
    assert hits[0].record.id == "a5"
    store.upsert("t", [rec("c", "x", vector=unit(7))])  # the index exists: nothing to build again
    assert sum(_has_hnsw([d]) for d in _index_defs(url, "t")) == 1
    no_hnsw = PgVectorDocStore(url, exact_knn_rows=30, hnsw=False)
    no_hnsw.upsert("u", [rec(f"a{i}", "x", vector=unit(i)) for i in range(40)])
    assert not _has_hnsw(_index_defs(url, "u"))
    no_hnsw.close()
    store.close()


def test_document_frequencies_follow_every_write(url: str) -> None:
    """The per-table counts BM25 reads stay equal to the rows holding each term, through inserts,
    replacements and deletes (they are kept by the writes, not counted at query time)."""
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(12)]
    store = PgVectorDocStore(url)

    def batch(prefix: str, n: int) -> list[ChunkRecord]:
        return [rec(f"{prefix}{i}", " ".join(rng.choice(words, size=int(rng.integers(1, 6)))),
                    doc=f"d{i % 4}", title_terms=[str(rng.choice(words))]) for i in range(n)]

    store.upsert("t", batch("a", 40))
    store.upsert("t", batch("a", 25))  # replaces a0..a24
    store.upsert("t", batch("b", 30))
    store.delete("t", Filters(["kb1"], doc_ids=["d1"]))
    store.delete("t", Filters(["kb1"], ids=["b2", "a3"]))
    rows, total = store.list_chunks("t", Filters(["kb1"]), limit=1000)
    for field in ("content_terms", "title_terms"):
        df, n = store.doc_freq("t", field, words)
        assert n == total == len(rows)
        assert df == {w: sum(w in getattr(r, field) for r in rows) for w in words}
    store.close()
