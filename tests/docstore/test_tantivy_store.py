"""TantivyDocStore: the conformance suite plus multi-process and crash behaviour."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing as mp
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ragloom.dataflow import ChunkRecord
from ragloom.docstore import _knn
from ragloom.docstore.base import DocStore, Filters, SearchRequest
from ragloom.docstore.tantivy_store import TantivyDocStore
from ragloom.errors import InvalidRequestError, StoreError
from tests.docstore.conformance import DIM, DocStoreConformance, rec, terms_query, unit


class TestTantivyDocStore(DocStoreConformance):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[DocStore]:
        s = TantivyDocStore(tmp_path / "index")
        yield s
        s.close()


def test_writes_are_visible_to_another_instance(tmp_path: Path) -> None:
    reader = TantivyDocStore(tmp_path)
    writer = TantivyDocStore(tmp_path)
    assert reader.count("t", Filters(["kb1"])) == 0
    writer.upsert("t", [rec("a", "alpha", vector=unit(1)), rec("b", "beta", vector=unit(2))])
    req = SearchRequest(Filters(["kb1"]), text=terms_query("alpha"), vector=unit(2), vector_top_k=1)
    assert [h.record.id for h in reader.search("t", req)] == ["a", "b"]
    writer.delete("t", Filters(["kb1"], ids=["b"]))
    assert [h.record.id for h in reader.search("t", req)] == ["a"]
    writer.upsert("t", [rec("a", "gamma", vector=unit(1))])
    assert reader.search("t", req)[0].record.content == "gamma"
    assert reader.count("t", Filters(["kb1"])) == 1
    reader.upsert("t", [rec("a", "delta", vector=unit(1))])  # a row the other instance wrote: replaced, not doubled
    assert writer.count("t", Filters(["kb1"])) == 1 and writer.get("t", ["a"])[0].content == "delta"
    writer.drop_index("t")
    assert reader.search("t", req) == []
    writer.upsert("t", [rec("c", "alpha", vector=unit(3))])
    assert [h.record.id for h in reader.search("t", req)] == ["c"]


def _upsert_worker(root: str, prefix: str, start: mp.Barrier) -> None:  # type: ignore[type-arg]
    store = TantivyDocStore(Path(root))
    start.wait()
    for batch in range(10):
        own = [rec(f"{prefix}{batch}_{i}", f"common {prefix}", vector=unit(hash((prefix, i)) % 999)) for i in range(20)]
        shared = [rec(f"s{batch}_{i}", f"common shared {prefix}") for i in range(10)]
        store.upsert("t", own + shared)
    store.close()


@pytest.mark.slow
def test_two_processes_write_one_tenant(tmp_path: Path) -> None:
    parent = TantivyDocStore(tmp_path)
    assert parent.search("t", SearchRequest(Filters(["kb1"]), text=terms_query("common"))) == []
    ctx = mp.get_context("spawn")
    start = ctx.Barrier(2)
    procs = [ctx.Process(target=_upsert_worker, args=(str(tmp_path), p, start)) for p in "ab"]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    expect = {f"{p}{b}_{i}" for p in "ab" for b in range(10) for i in range(20)}
    expect |= {f"s{b}_{i}" for b in range(10) for i in range(10)}
    f = Filters(["kb1"])
    assert parent.count("t", f) == len(expect) == 500
    rows, total = parent.list_chunks("t", f, limit=1000)
    assert total == 500 and sorted(r.id for r in rows) == sorted(expect)
    req = SearchRequest(f, text=terms_query("common"), vector=unit(1), text_top_k=1000, vector_top_k=1000)
    hits = [h.record.id for h in parent.search("t", req)]
    assert len(hits) == len(set(hits)) == 500
    assert all(h.text_score is not None for h in parent.search("t", req))
    assert parent.doc_freq("t", "content_terms", ["common", "shared"]) == ({"common": 500, "shared": 100}, 500)


def _endless_writer(root: str, committed: mp.Queue) -> None:  # type: ignore[type-arg]
    store = TantivyDocStore(Path(root))
    rng = np.random.default_rng(0)
    for batch in range(1000):
        vecs = rng.normal(size=(3000, DIM)).astype(np.float32)
        rows = [
            rec(f"b{batch}_{i}", f"common row{batch}x{i}", vector=vecs[i] / np.linalg.norm(vecs[i]))
            for i in range(3000)
        ]
        store.upsert("t", rows)
        committed.put(batch)


@pytest.mark.slow
def test_killed_writer_leaves_rows_whole(tmp_path: Path) -> None:
    ctx = mp.get_context("spawn")
    committed = ctx.Queue()
    proc = ctx.Process(target=_endless_writer, args=(str(tmp_path), committed))
    proc.start()
    try:
        committed.get(timeout=120)
        committed.get(timeout=120)  # two batches in: the writer is now inside the third
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.join(30)
    assert proc.exitcode == -signal.SIGKILL
    store = TantivyDocStore(tmp_path)
    f = Filters(["kb1"])
    n = store.count("t", f)
    by_text = store.search("t", SearchRequest(f, text=terms_query("common"), text_top_k=n + 10))
    by_vec = store.search("t", SearchRequest(f, vector=unit(1), vector_top_k=n + 10))
    text_ids = {h.record.id for h in by_text}
    vec_ids = {h.record.id for h in by_vec}
    assert text_ids == vec_ids and len(text_ids) == n
    batches = {i.split("_")[0] for i in text_ids}
    assert n == 3000 * len(batches) and len(batches) >= 2  # whole batches only
    # every row of the batch that was being written is found by neither
    lost = f"b{len(batches)}"
    probe = [f"{lost}_{i}" for i in (0, 1500, 2999)]
    assert store.get("t", probe) == []
    for id_ in (f"b0_{0}", f"b1_{2999}"):
        (row,) = store.get("t", [id_])
        term = row.content_terms[1]
        assert [h.record.id for h in store.search("t", SearchRequest(f, text=terms_query(term)))] == [id_]
        near = store.search("t", SearchRequest(f, vector=row.vector, vector_top_k=1))
        assert near[0].record.id == id_
    # the index still takes writes: the dead writer's locks are gone
    store.upsert("t", [rec("after", "common")])
    assert store.count("t", f) == n + 1


def test_rejects_bad_tenant_ids_and_reserved_characters(tmp_path: Path) -> None:
    store = TantivyDocStore(tmp_path)
    for bad in ("", "../x", ".locks", "a/b"):
        with pytest.raises(InvalidRequestError):
            store.index_exists(bad)
    with pytest.raises(InvalidRequestError):
        store.upsert("t", [ChunkRecord("a", "kb1", "d1", "v1", "c", unit(1), content_terms=["bad\x1fterm"])])


def test_refuses_an_index_of_another_schema_version(tmp_path: Path) -> None:
    TantivyDocStore(tmp_path).upsert("t", [rec("a", "x")])
    conf = tmp_path / "t" / "ragloom.json"
    conf.write_text(json.dumps({"vector_size": DIM, "schema_version": 0}))
    with pytest.raises(StoreError, match="reindex"):
        TantivyDocStore(tmp_path).count("t", Filters(["kb1"]))


def test_a_term_with_whitespace_inside_is_one_token(tmp_path: Path) -> None:
    """A term is indexed as one token: whitespace inside it (any kind) becomes ``_``, as in queries; empty and
    blank terms index nothing; the stored lists come back exact."""
    store = TantivyDocStore(tmp_path)
    odd = ["deep\tnet", "", " ", "x\u00a0y", "plain", " padded "]
    store.upsert("t", [ChunkRecord("o", "kb1", "d1", "v1", "t", unit(5), important_keywords=odd),
                       ChunkRecord("p", "kb1", "d1", "v1", "t", unit(6), important_keywords=["plain", "words"])])

    def found(*terms: str) -> list[str]:
        return sorted(h.record.id for h in store.search("t", SearchRequest(Filters(["kb1"]), text=terms_query(*terms))))

    assert found("deep net") == found("x y") == found("padded") == ["o"]
    assert found("deep") == found("x") == []
    assert found("plain") == ["o", "p"] and found("words") == ["p"]
    assert [r.important_keywords for r in store.get("t", ["o", "p"])] == [odd, ["plain", "words"]]
    freq = store.doc_freq("t", "important_keywords", ["plain", "deep net", " "])
    assert freq == ({"plain": 2, "deep net": 1, " ": 0}, 2)
    store.close()


def test_stored_fields_read_lazily_come_back_exact(tmp_path: Path) -> None:
    """Rows are decoded field group by field group on first read; a field known to be None is
    read without decoding the payload, even when other fields mention its name."""
    store = TantivyDocStore(tmp_path / "index")
    tricky = 'say "parent_id":null and "html":null'
    rows = [
        dataclasses.replace(rec("a", "x", parent_id="p1", html="<p>1</p>", heading_path=['"parent_id":null'],
                                tags={"parent_id": 1.0}, tag_keywords=["html"]), content=tricky),
        dataclasses.replace(rec("b", "x"), content=tricky),
        rec("c", "x", parent_id="", html=""),
    ]
    store.upsert("t", rows)
    for got in (store.get("t", ["a", "b", "c"]), [h.record for h in store.search("t", SearchRequest(
            Filters(["kb1"]), text=terms_query("x"), vector=unit(5)))]):
        got = sorted(got, key=lambda r: r.id)
        assert [(r.parent_id, r.html) for r in got] == [("p1", "<p>1</p>"), (None, None), ("", "")]
        for want, r in zip(rows, got, strict=True):
            assert (r.content, r.heading_path, r.tags, r.tag_keywords) == (
                want.content, want.heading_path, want.tags, want.tag_keywords)
    store.close()


def test_text_hits_get_the_cosine_the_vector_search_gives(tmp_path: Path) -> None:
    store = TantivyDocStore(tmp_path / "index")
    store.upsert("t", [rec(f"r{i}", "common word", vector=unit(i) * (i + 1)) for i in range(20)])
    q = unit(99)
    text = {h.record.id: h.vector_score
            for h in store.search("t", SearchRequest(Filters(["kb1"]), text=terms_query("common"), vector=q,
                                                     text_top_k=20, vector_top_k=0))}
    near = {h.record.id: h.vector_score
            for h in store.search("t", SearchRequest(Filters(["kb1"]), vector=q, vector_top_k=20))}
    assert len(text) == len(near) == 20
    for id_, cos in near.items():
        assert text[id_] == cos  # the same kernel: a row's cosine does not depend on how it was found
    store.close()


def test_searches_run_side_by_side_while_rows_are_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No store-wide lock is held while a search runs: several searches are inside their KNN at once, and
    each sees whole rows with the cosine of the vector it returns, while another thread writes and deletes."""
    store = TantivyDocStore(tmp_path / "index")
    store.upsert("t", [rec(f"r{i}", f"common word{i % 7}", vector=unit(i)) for i in range(300)])
    inside, most = 0, 0
    count = threading.Lock()
    real_result = _knn.KnnScan.result

    def slow_result(self: _knn.KnnScan) -> list[tuple[str, float]]:
        nonlocal inside, most
        with count:
            inside += 1
            most = max(most, inside)
        time.sleep(0.05)  # long enough for the other searches to reach their own scan
        try:
            return real_result(self)
        finally:
            with count:
                inside -= 1

    monkeypatch.setattr(_knn.KnnScan, "result", slow_result)
    errors: list[BaseException] = []
    start = threading.Barrier(5)

    def search(seed: int) -> None:
        start.wait()
        try:
            for k in range(8):
                q = unit(1000 + seed * 10 + k)
                hits = store.search("t", SearchRequest(Filters(["kb1"]), text=terms_query("common"), vector=q,
                                                       text_top_k=20, vector_top_k=10))
                for hit in hits:
                    want = float(np.dot(hit.record.vector / np.linalg.norm(hit.record.vector), q))
                    assert hit.vector_score == pytest.approx(want, abs=1e-5), hit.record.id
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    def write() -> None:
        start.wait()
        for n in range(6):
            store.upsert("t", [rec(f"w{n}_{i}", f"common batch{n}", vector=unit(5000 + n * 50 + i)) for i in range(30)])
            store.delete("t", Filters(["kb1"], ids=[f"r{n * 10 + i}" for i in range(10)]))

    threads = [threading.Thread(target=search, args=(i,)) for i in range(4)] + [threading.Thread(target=write)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store.close()
    assert not errors, errors
    assert most >= 2  # with the store's lock held through a search, never more than one
