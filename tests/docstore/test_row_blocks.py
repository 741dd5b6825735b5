"""RowBlocks: the vector cache's matrix grows block by block and never moves the rows it holds."""

from __future__ import annotations

import numpy as np
import pytest

from ragloom.docstore import _row_blocks
from ragloom.docstore._row_blocks import RowBlocks
from ragloom.docstore._tantivy_vectors import RowMeta, VectorCache
from ragloom.docstore.base import Filters


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_row_blocks, "SHIFT", 6)  # blocks of 64 rows: a few hundred rows span several
    monkeypatch.setattr(_row_blocks, "BLOCK", 64)
    monkeypatch.setattr(_row_blocks, "_MASK", 63)


def test_reads_like_the_array_it_mirrors_and_never_moves_a_row() -> None:
    rng = np.random.default_rng(5)
    ref = rng.normal(size=(300, 3)).astype(np.float32)
    m = RowBlocks(3)
    m.set(0, ref[0])
    early = m[0:1]
    for i in range(1, 40):
        m.set(i, ref[i])
    in_first = m[0:40]  # still in the first block, which doubles until it holds 64 rows
    for i in range(40, 300):
        m.set(i, ref[i])
    assert m.capacity == 320  # the first block doubled up to 64 rows, then blocks of 64
    assert np.array_equal(early, ref[0:1])  # a block that doubled was copied, the old rows kept as they were
    assert np.shares_memory(in_first, m[0:40])  # past the first block nothing is copied again
    for a, b in [(0, 64), (10, 20), (60, 70), (0, 300), (130, 257), (299, 300), (5, 5)]:
        assert np.array_equal(m[a:b], ref[a:b]), (a, b)
    assert np.shares_memory(m[64:128], m[64:128])  # a range inside one block is a view
    for rows in (np.array([3, 70, 299, 64, 0, 63]), np.arange(128, 192), np.array([], dtype=np.int64)):
        assert np.array_equal(m[rows], ref[rows])
    assert np.array_equal(RowBlocks.of(ref[::2])[0:150], ref[::2])
    with pytest.raises(ValueError):
        m[0:10:2]


def test_cache_across_blocks_searches_exactly_before_and_after_compaction() -> None:
    rng = np.random.default_rng(9)
    vecs = rng.normal(size=(500, 8)).astype(np.float32)
    unit = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    cache = VectorCache(8)
    cache.apply(RowMeta(f"r{i}", "kb", f"d{i // 10}", "v", True, i, i + 1, vecs[i]) for i in range(500))
    q = rng.normal(size=8).astype(np.float32)
    q /= np.linalg.norm(q)

    def brute(keep: list[int], k: int) -> list[str]:
        scores = unit[keep] @ q
        return [f"r{keep[j]}" for j in sorted(range(len(keep)), key=lambda j: (-scores[j], keep[j]))[:k]]

    assert [id_ for id_, _ in cache.knn(Filters(["kb"]), q, 20)] == brute(list(range(500)), 20)
    few = Filters(["kb"], doc_ids=["d3", "d17", "d44"])  # rows in three blocks, gathered
    assert [id_ for id_, _ in cache.knn(few, q, 5)] == brute([*range(30, 40), *range(170, 180), *range(440, 450)], 5)
    cache.remove_ids(f"r{i}" for i in range(500) if i % 3)  # two thirds dead: the shard is compacted
    kept = list(range(0, 500, 3))
    assert [id_ for id_, _ in cache.knn(Filters(["kb"]), q, 20)] == brute(kept, 20)
    cosines = cache.cosines(["r0", "r255", "r498"], q)
    assert cosines == pytest.approx({f"r{i}": float(unit[i] @ q) for i in (0, 255, 498)}, abs=1e-6)
