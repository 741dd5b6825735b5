"""The embedded store's approximate vector index: a knowledge base past its size threshold is searched
through an HNSW graph, and every filter still gets exactly what it should — a narrow scope inside a
large index returns what exact search returns, rows added after the build are found, deleted rows
never come back, a compaction rebuilds it, and a graph saved by one process is loaded by the next one
over its own row numbers (or built again when it does not fit)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from ragloom.docstore._ann import MAX_EXPANSION, AnnConfig, expansion_for
from ragloom.docstore._tantivy_vectors import RowMeta, VectorCache
from ragloom.docstore.base import Filters, SearchRequest
from ragloom.docstore.tantivy_store import TantivyDocStore
from tests.docstore.conformance import rec

DIM = 64
ROWS = 3000


def _vectors(n: int, seed: int) -> np.ndarray:
    """Clustered unit vectors, as embeddings are (uniform random ones have no neighbourhoods)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(30, DIM))
    out = (centres[rng.integers(0, 30, n)] + 0.5 * rng.normal(size=(n, DIM))).astype(np.float32)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def _rows(vecs: np.ndarray, *, start: int = 0, kb: str = "kb1") -> list[RowMeta]:
    return [RowMeta(f"r{start + i}", kb, f"d{(start + i) // 20}", "v1", (start + i) % 5 != 0, i, start + i + 1, v)
            for i, v in enumerate(vecs)]


def _pair(config: AnnConfig | None = None) -> tuple[VectorCache, VectorCache]:
    """The same rows in an exact cache and in one with an approximate index built at once."""
    vecs = _vectors(ROWS, 1)
    # a graph this small is asked for up to half of its rows (the default share, 2 %, is for large ones)
    config = config or AnnConfig(min_rows=1000, background=False, max_candidates_share=0.5)
    exact, approx = VectorCache(DIM), VectorCache(DIM, config)
    for cache in (exact, approx):
        cache.apply(_rows(vecs))
    assert approx.ann_rows() == {"kb1": 0}  # a process that never searches (a worker) builds no graph
    approx.knn(Filters(["kb1"]), vecs[0], 1)  # the first search builds it (here at once)
    return exact, approx


def _recall(exact: VectorCache, approx: VectorCache, filters: Filters, queries: np.ndarray, k: int = 10) -> float:
    found = 0
    for q in queries:
        want = {id_ for id_, _ in exact.knn(filters, q, k)}
        got = approx.knn(filters, q, k)
        assert len(got) == len(want)
        found += len(want & {id_ for id_, _ in got})
    return found / (k * len(queries))


def test_a_large_knowledge_base_is_searched_through_its_graph_with_exact_scores() -> None:
    exact, approx = _pair()
    assert approx.ann_rows() == {"kb1": ROWS} and exact.ann_rows() == {"kb1": 0}
    queries = _vectors(40, 2)
    assert _recall(exact, approx, Filters(["kb1"]), queries) >= 0.95
    exact_scores = dict(exact.knn(Filters(["kb1"]), queries[0], 50))
    for id_, score in approx.knn(Filters(["kb1"]), queries[0], 10):
        if id_ in exact_scores:
            assert score == exact_scores[id_]  # rescored from the float32 rows by the exact kernel


def test_every_filter_returns_only_passing_rows_and_a_narrow_one_exactly_what_exact_search_does() -> None:
    exact, approx = _pair()
    queries = _vectors(20, 3)
    narrow = Filters(["kb1"], doc_ids=["d7", "d40"])  # 40 of 3,000 rows: searched exactly
    for q in queries:
        assert approx.knn(narrow, q, 10) == exact.knn(narrow, q, 10)
    available = Filters(["kb1"], available_only=True)  # four rows in five
    assert _recall(exact, approx, available, queries) >= 0.95
    for q in queries:
        assert all(int(id_[1:]) % 5 != 0 for id_, _ in approx.knn(available, q, 10))
    hidden = Filters(["kb1"], exclude_doc_ids=[f"d{i}" for i in range(0, 150, 2)])  # half the documents
    for q in queries:
        got = approx.knn(hidden, q, 10)
        assert len(got) == 10 and all((int(id_[1:]) // 20) % 2 == 1 for id_, _ in got)
    version = Filters(["kb1"], version_ids=["v2"])  # no row: nothing, not the nearest others
    assert approx.knn(version, queries[0], 10) == []


def test_rows_added_after_the_build_are_found_and_deleted_rows_never_come_back() -> None:
    exact, approx = _pair()
    extra = _vectors(200, 4)
    for cache in (exact, approx):
        cache.apply(_rows(extra, start=ROWS))
        cache.remove_ids([f"r{i}" for i in range(0, 600)])
    assert approx.ann_rows()["kb1"] == ROWS + 200
    q = extra[17]  # the nearest row to a vector is the row itself
    assert approx.knn(Filters(["kb1"]), q, 1)[0][0] == f"r{ROWS + 17}"
    queries = _vectors(20, 5)
    assert _recall(exact, approx, Filters(["kb1"]), queries) >= 0.95
    for qv in queries:
        assert all(int(id_[1:]) >= 600 for id_, _ in approx.knn(Filters(["kb1"]), qv, 10))


def test_a_compaction_rebuilds_the_graph_over_the_new_row_numbers() -> None:
    exact, approx = _pair()
    for cache in (exact, approx):
        cache.remove_ids([f"r{i}" for i in range(0, 1800)])  # more than half dead: the shard is compacted
    assert approx.ann_rows()["kb1"] == 0  # the row numbers changed: the graph is gone
    approx.knn(Filters(["kb1"]), _vectors(1, 6)[0], 1)
    assert approx.ann_rows()["kb1"] == ROWS - 1800  # rebuilt by the next search (1,200 live rows >= 1,000)
    queries = _vectors(20, 6)
    assert _recall(exact, approx, Filters(["kb1"]), queries) >= 0.95


def test_a_background_build_serves_exact_results_until_it_is_ready() -> None:
    approx = VectorCache(DIM, AnnConfig(min_rows=1000))
    exact = VectorCache(DIM)
    vecs = _vectors(ROWS, 1)
    for cache in (exact, approx):
        cache.apply(_rows(vecs))
    q = _vectors(1, 7)[0]
    assert approx.knn(Filters(["kb1"]), q, 10) == exact.knn(Filters(["kb1"]), q, 10)
    deadline = time.monotonic() + 60
    while approx.ann_rows()["kb1"] == 0:
        assert time.monotonic() < deadline
        time.sleep(0.05)
        approx.knn(Filters(["kb1"]), q, 10)  # a search installs a finished build
    assert approx.ann_rows()["kb1"] == ROWS


def test_a_filter_whose_rows_are_far_from_the_query_is_searched_exactly() -> None:
    """Half of the documents hidden, the query's whole neighbourhood among them: the graph's candidates
    would never hold ten passing rows within its candidate limit, so those rows are scanned exactly."""
    exact, approx = _pair(AnnConfig(min_rows=1000, background=False, max_candidates_share=0.02))
    q = _vectors(ROWS, 1)[100]  # row r100 of document d5: hide its document and its neighbours' documents
    near_docs = {f"d{int(id_[1:]) // 20}" for id_, _ in exact.knn(Filters(["kb1"], available_only=False), q, 300)}
    hidden = Filters(["kb1"], exclude_doc_ids=sorted(near_docs))
    assert approx.knn(hidden, q, 10) == exact.knn(hidden, q, 10)


def test_the_store_searches_a_large_knowledge_base_through_its_graph(tmp_path: Path) -> None:
    store = TantivyDocStore(tmp_path / "index", ann=AnnConfig(min_rows=500, background=False))
    vecs = _vectors(1200, 8)
    store.upsert("t", [rec(f"r{i}", f"word{i % 13}", vector=v, doc=f"d{i // 40}") for i, v in enumerate(vecs)])
    q = vecs[3]
    hits = store.search("t", SearchRequest(Filters(["kb1"]), vector=q, vector_top_k=5))
    assert hits[0].record.id == "r3" and len(hits) == 5
    assert store._handles["t"].cache.ann_rows() == {"kb1": 1200}  # noqa: SLF001 (searched through the graph)
    narrow = store.search("t", SearchRequest(Filters(["kb1"], doc_ids=["d9"]), vector=q, vector_top_k=5))
    assert len(narrow) == 5 and all(h.record.doc_id == "d9" for h in narrow)
    store.close()


def test_the_search_expansion_grows_with_the_graph_past_its_size() -> None:
    config = AnnConfig(expansion_search=64, expansion_rows=1000)
    assert [expansion_for(config, n) for n in (10, 1000, 1500, 4000)] == [64, 64, 96, 256]
    assert expansion_for(config, 10**9) == MAX_EXPANSION
    assert expansion_for(AnnConfig(expansion_search=64, expansion_rows=0), 10**6) == 64
    exact, approx = _pair(AnnConfig(min_rows=1000, background=False, max_candidates_share=0.5, expansion_search=32,
                                    expansion_rows=1000))
    graph = approx._shards["kb1"].ann  # noqa: SLF001
    assert graph is not None and graph.expansion == 96  # 3,000 rows: three times the candidates
    for cache in (exact, approx):
        cache.apply(_rows(_vectors(1000, 16), start=ROWS))
    assert graph.expansion == 128  # rows added to the graph raise it
    assert _recall(exact, approx, Filters(["kb1"]), _vectors(10, 17)) >= 0.9


def _saving(ann_dir: Path, config: AnnConfig | None = None) -> VectorCache:
    return VectorCache(DIM, config or AnnConfig(min_rows=1000, background=False, max_candidates_share=0.5), ann_dir)


def test_a_saved_graph_is_loaded_by_the_next_process_over_its_own_row_numbers(tmp_path: Path) -> None:
    vecs, extra = _vectors(ROWS, 1), _vectors(300, 12)
    first = _saving(tmp_path)
    first.apply(_rows(vecs))
    first.knn(Filters(["kb1"]), vecs[0], 1)  # built, and saved
    assert first.ann_origins() == {"kb1": "built"} and any(tmp_path.glob("*.usearch"))
    # the next process: rows 100..899 were deleted since and 300 rows added, so every kept row has another
    # row number than in the saved graph
    live = [r for r in _rows(vecs) if not 100 <= r.seq - 1 < 900] + _rows(extra, start=ROWS)
    second, exact = _saving(tmp_path), VectorCache(DIM)
    for cache in (second, exact):
        cache.apply(live)
    second.knn(Filters(["kb1"]), vecs[0], 1)
    assert second.ann_origins() == {"kb1": "saved"} and second.ann_rows() == {"kb1": len(live)}
    every = Filters(["kb1"], available_only=False)
    for row in live[::37]:  # each row's own vector finds that row: the graph's keys were renamed right
        assert second.knn(every, row.vector, 1)[0][0] == row.id
    queries = _vectors(20, 13)
    assert _recall(exact, second, Filters(["kb1"]), queries) >= 0.95
    for q in queries:
        assert all(not 100 <= int(id_[1:]) < 900 for id_, _ in second.knn(Filters(["kb1"]), q, 10))
    narrow = Filters(["kb1"], doc_ids=["d3", "d60"])
    assert second.knn(narrow, queries[0], 10) == exact.knn(narrow, queries[0], 10)


def test_a_saved_graph_that_does_not_fit_is_built_again(tmp_path: Path) -> None:
    vecs = _vectors(ROWS, 1)
    first = _saving(tmp_path)
    first.apply(_rows(vecs))
    first.knn(Filters(["kb1"]), vecs[0], 1)
    # the same rows and seqs with other vectors (a re-embedded index), other graph settings, a damaged file
    reembedded = _saving(tmp_path)
    reembedded.apply(_rows(_vectors(ROWS, 14)))
    reembedded.knn(Filters(["kb1"]), vecs[0], 1)
    assert reembedded.ann_origins() == {"kb1": "built"}  # and saved in its turn, replacing the old graph
    denser = _saving(tmp_path, AnnConfig(min_rows=1000, background=False, connectivity=24))
    denser.apply(_rows(vecs))
    denser.knn(Filters(["kb1"]), vecs[0], 1)
    assert denser.ann_origins() == {"kb1": "built"}
    for graph in tmp_path.glob("*.usearch"):
        graph.write_bytes(b"damaged" * 100)
    damaged = _saving(tmp_path, AnnConfig(min_rows=1000, background=False, connectivity=24))
    damaged.apply(_rows(vecs))
    assert damaged.knn(Filters(["kb1"]), vecs[6], 1)[0][0] == "r6"
    assert damaged.ann_origins() == {"kb1": "built"}
    # only the rows of the saved graph's end kept (its first half deleted): built again, not half-loaded
    late = _saving(tmp_path, AnnConfig(min_rows=1000, background=False, connectivity=24))
    late.apply(_rows(vecs)[ROWS // 2 + 1:])
    late.knn(Filters(["kb1"]), vecs[-1], 1)
    assert late.ann_origins() == {"kb1": "built"}


def test_the_store_keeps_its_graph_across_a_restart(tmp_path: Path) -> None:
    config = AnnConfig(min_rows=500, background=False)
    vecs = _vectors(1200, 8)
    store = TantivyDocStore(tmp_path / "index", ann=config)
    store.upsert("t", [rec(f"r{i}", f"word{i % 13}", vector=v, doc=f"d{i // 40}") for i, v in enumerate(vecs)])
    store.search("t", SearchRequest(Filters(["kb1"]), vector=vecs[3], vector_top_k=5))
    more = _vectors(100, 15)  # grown by more than a twentieth: saved again when the store closes
    store.upsert("t", [rec(f"s{i}", "more", vector=v, doc="d99") for i, v in enumerate(more)])
    store.search("t", SearchRequest(Filters(["kb1"]), vector=vecs[3], vector_top_k=5))
    store.close()
    again = TantivyDocStore(tmp_path / "index", ann=config)
    hits = again.search("t", SearchRequest(Filters(["kb1"]), vector=more[7], vector_top_k=5))
    assert hits[0].record.id == "s7"
    cache = again._handles["t"].cache  # noqa: SLF001
    assert cache.ann_origins() == {"kb1": "saved"} and cache.ann_rows() == {"kb1": 1300}
    again.upsert("t", [rec("late", "late words", vector=vecs[0], doc="d98")])  # tantivy keeps working beside it
    assert again.search("t", SearchRequest(Filters(["kb1"], doc_ids=["d98"]), vector=vecs[0], vector_top_k=1))
    again.close()


@pytest.mark.parametrize("share", [0.05, 0.5])
def test_a_filter_passing_few_rows_still_gets_k_of_them(share: float) -> None:
    exact, approx = _pair(AnnConfig(min_rows=1000, background=False, min_share=0.01, max_candidates_share=0.5))
    keep = int(150 * share)  # documents passing
    filters = Filters(["kb1"], doc_ids=[f"d{i}" for i in range(0, 150, max(1, 150 // keep))])
    for q in _vectors(10, 9):
        got = approx.knn(filters, q, 10)
        assert len(got) == 10 and {id_ for id_, _ in got} <= {id_ for id_, _ in exact.knn(filters, q, 400)}


def test_the_graph_library_never_crashes_a_process_that_loads_the_models_afterwards() -> None:
    """usearch imported before onnxruntime crashes the process when onnxruntime loads (a segmentation fault):
    the graph's module imports them in the safe order, whatever the process did before."""
    code = ("import numpy as np\nfrom ragloom.docstore._ann import AnnConfig, ShardAnn\n"
            "ShardAnn(8, AnnConfig()).add(np.ones((4, 8), dtype=np.float32), 4)\n"
            "import onnxruntime\nprint('alive')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "alive", done.stderr[-2000:]
