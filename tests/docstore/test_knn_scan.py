"""The exact KNN scan shared out in blocks between threads gives the brute-force answer."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from ragloom.docstore import _knn
from ragloom.docstore._tantivy_vectors import RowMeta, VectorCache
from ragloom.docstore.base import Filters

DIM = 16


def _cache(n: int, rng: np.random.Generator) -> tuple[VectorCache, np.ndarray]:
    vecs = rng.normal(size=(n, DIM)).astype(np.float32)
    cache = VectorCache(DIM)
    cache.apply(RowMeta(f"r{i}", f"kb{i % 2}", f"d{i // 10}", "v", True, i, i + 1, vecs[i]) for i in range(n))
    return cache, vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


def _brute(unit: np.ndarray, q: np.ndarray, keep: list[int], k: int) -> list[str]:
    scores = unit[keep] @ q
    order = sorted(range(len(keep)), key=lambda j: (-scores[j], f"r{keep[j]}"))
    return [f"r{keep[j]}" for j in order[:k]]


@pytest.mark.parametrize("helpers", [0, 1, 3])
def test_blocks_shared_between_threads_give_the_exact_neighbours(monkeypatch: pytest.MonkeyPatch,
                                                                  helpers: int) -> None:
    monkeypatch.setattr(_knn, "BLOCK_ROWS", 64)  # many blocks for a small cache
    rng = np.random.default_rng(7)
    cache, unit = _cache(3000, rng)
    cache.remove_ids([f"r{i}" for i in range(0, 3000, 9)])
    alive = [i for i in range(3000) if i % 9]
    cases = [
        (Filters(["kb0", "kb1"]), alive),  # most rows: the dense path
        (Filters(["kb0"], doc_ids=[f"d{j}" for j in range(0, 300, 13)]),  # few rows: the gathered path
         [i for i in alive if i % 2 == 0 and (i // 10) % 13 == 0]),
    ]
    for filters, keep in cases:
        q = rng.normal(size=DIM).astype(np.float32)
        q /= np.linalg.norm(q)
        scan = cache.scan(filters, q, 25)
        threads = [threading.Thread(target=scan.work) for _ in range(helpers)]
        for t in threads:
            t.start()
        got = scan.result()
        for t in threads:
            t.join()
        assert [id_ for id_, _ in got] == _brute(unit, q, keep, 25)
        assert got == cache.knn(filters, q, 25)  # same scores, whoever computed the blocks


def test_nothing_selected_or_k_zero() -> None:
    cache, _ = _cache(10, np.random.default_rng(1))
    q = np.ones(DIM, dtype=np.float32) / 4
    assert cache.scan(Filters(["nope"]), q, 5).result() == []
    assert cache.knn(Filters(["kb0"]), q, 0) == []
