"""An approximate nearest-neighbour index (HNSW, by usearch) over one knowledge base's vector rows.

The embedded store searches vectors exactly (:mod:`ragloom.docstore._knn`) while that is fast
enough; past ``AnnConfig.min_rows`` rows a knowledge base's shard also gets an HNSW graph, built in a
background thread (exact search serves until it is ready) and then kept up to date row by row. Its
keys are the shard's row numbers; the graph stores half-precision copies of the vectors, so every
candidate it proposes is scored again from the shard's float32 rows — a row's cosine is the same
whichever way it was found.

Filters are applied to the graph's candidates with the shard's row mask (scope, version,
availability, access): the search asks for more candidates in proportion to how few rows pass, and
again with four times as many until ``k`` pass. A filter that lets through less than
``AnnConfig.min_share`` of the rows, or that would need more than ``AnnConfig.max_candidates_share``
of the graph as candidates, is searched exactly instead — a narrow scope never returns fewer or other
rows than exact search.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from usearch.index import Index


def _index_class() -> type[Index]:
    """usearch's ``Index``, imported on first use and always after onnxruntime: in the other order, importing
    onnxruntime in the same process crashes it (usearch 2.26.6 with onnxruntime 1.32: a segmentation fault)."""
    import onnxruntime  # noqa: F401  (the order is the point)
    from usearch.index import Index

    return Index


@dataclass(frozen=True, slots=True)
class AnnConfig:
    """When and how a shard gets its approximate index (the ``RAGLOOM_ANN_*`` settings)."""

    min_rows: int = 200_000
    """Live rows of a knowledge base from which its approximate index is built (0: never)."""
    connectivity: int = 16
    """Edges per node of the HNSW graph (usearch's ``connectivity``, HNSW's M)."""
    expansion_add: int = 128
    """Candidates considered while inserting a row (HNSW's efConstruction)."""
    expansion_search: int = 128
    """Candidates considered while searching (HNSW's ef)."""
    min_share: float = 0.1
    """A filter passing less than this share of a shard's rows is searched exactly."""
    max_candidates_share: float = 0.02
    """The graph is asked for at most this share of its rows as candidates; a filter that would need more
    is searched exactly."""
    background: bool = True
    """Build in a background thread (False: at once, in the calling thread; tests)."""


class ShardAnn:
    """The HNSW graph of one shard's rows ``[0, rows)``; thread-safe."""

    def __init__(self, dim: int, config: AnnConfig) -> None:
        self.index = _index_class()(ndim=dim, metric="ip", dtype="f16", connectivity=config.connectivity,
                                    expansion_add=config.expansion_add, expansion_search=config.expansion_search)
        self.rows = 0
        self._lock = threading.Lock()

    def add(self, vecs: np.ndarray, upto: int) -> None:
        """Index the rows ``[self.rows, upto)`` of ``vecs`` (rows are only ever appended)."""
        if upto <= self.rows:
            return
        with self._lock:
            start = self.rows
            self.index.add(np.arange(start, upto, dtype=np.uint64), vecs[start:upto], threads=1)
            self.rows = upto

    def nearest(self, query: np.ndarray, count: int) -> np.ndarray:
        """Row numbers of (about) the ``count`` rows nearest to ``query``, best first."""
        with self._lock:
            return np.asarray(self.index.search(query, count, threads=1).keys, dtype=np.int64)

    @property
    def memory_bytes(self) -> int:
        return int(self.index.memory_usage)


def filtered_nearest(ann: ShardAnn, rows: int, mask: np.ndarray, passing: int, query: np.ndarray, k: int,
                     max_share: float) -> np.ndarray | None:
    """Row numbers (below ``rows``) passing ``mask`` among the graph's nearest to ``query``: at least ``k``
    of them unless fewer pass at all (``passing``: how many rows below ``rows`` pass). The candidates asked
    for grow with how few rows pass the mask (four times more each round); None when that would exceed
    ``max_share`` of the graph — the rows the filter lets through are far from the query, and the caller
    searches them exactly."""
    if passing == 0 or k <= 0:
        return np.empty(0, dtype=np.int64)
    limit = max(k + 64, int(max_share * rows))
    want = math.ceil(max(4 * k, k + 64) * rows / passing)
    while want <= limit:
        found = ann.nearest(query, want)
        found = found[found < rows]
        kept: np.ndarray = found[mask[found]]
        if len(kept) >= min(k, passing) or want >= rows:
            return kept
        want *= 4
    return None
