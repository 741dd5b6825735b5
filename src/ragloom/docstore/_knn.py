"""One exact KNN query split into row blocks that several threads compute together.

At 100k rows of 384 floats a query reads ~150 MB: the scan is bound by memory bandwidth,
which one core cannot use up. The store hands the scan to its worker thread and, once its
own text search is done, the calling thread takes blocks too (:meth:`KnnScan.result`), so a
busy worker never delays a query by more than the block it is on, and an idle machine
scans with both cores.

Every row's cosine is computed by the same kernel (``einsum``, single-threaded: OpenBLAS's
threaded gemv is several times slower on a small, busy machine) whatever the block
boundaries, so the result does not depend on how the blocks were shared out.

A shard with an approximate index (:mod:`ragloom.docstore._ann`) is one more block: its graph
proposes the rows, the mask keeps those passing the filters, and the same kernel scores them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ragloom.docstore._ann import ShardAnn, filtered_nearest
from ragloom.docstore._row_blocks import Vectors

BLOCK_ROWS = 8192


@dataclass(frozen=True, slots=True)
class AnnPart:
    """A shard searched through its approximate index: its row ids, vectors, the filters' row mask, the
    index, the rows it covered when the scan began (later rows are scanned exactly) and how many of those
    the mask lets through."""

    ids: Sequence[str]
    vecs: Vectors
    mask: np.ndarray
    ann: ShardAnn
    rows: int
    passing: int  # rows below ``rows`` the mask lets through
    max_share: float


class KnnScan:
    """The ``k`` rows nearest to a unit ``query`` among the selected rows of some shards.

    ``parts`` holds, per shard: its row ids (indexable by row), its vector matrix (rows
    beyond the live ones may follow) and the selected row numbers, ascending.
    Thread-safe: any number of threads may call :meth:`work`.
    """

    def __init__(self, parts: Sequence[tuple[Sequence[str], Vectors, np.ndarray]], query: np.ndarray,
                 k: int, approximate: Sequence[AnnPart] = ()) -> None:
        self.k = k
        self._lock = threading.Lock()
        self._finished = threading.Condition(self._lock)
        self._next = 0
        self._done = 0
        self._error: BaseException | None = None
        self._blocks: list[Callable[[], None]] = []
        self._parts: list[tuple[Sequence[str], np.ndarray, np.ndarray, bool]] = []
        for ids, vecs, rows in parts:
            dense = len(rows) * 2 > (int(rows[-1]) + 1 if len(rows) else 0)
            n = int(rows[-1]) + 1 if dense else len(rows)
            scores = np.empty(n, dtype=np.float32)
            for a in range(0, n, BLOCK_ROWS):
                b = min(n, a + BLOCK_ROWS)
                if dense:  # most rows pass: scan the whole range, pick the rows afterwards
                    self._blocks.append(_block(vecs, slice(a, b), query, scores[a:b]))
                else:
                    self._blocks.append(_block(vecs, rows[a:b], query, scores[a:b]))
            self._parts.append((ids, rows, scores, dense))
        self._approximate: list[tuple[Sequence[str], np.ndarray, np.ndarray]] = []
        for part in approximate:
            self._blocks.append(self._ann_block(part, query))

    def _ann_block(self, part: AnnPart, query: np.ndarray) -> Callable[[], None]:
        def run() -> None:
            near = filtered_nearest(part.ann, part.rows, part.mask, part.passing, query, self.k, part.max_share)
            rows = np.sort(near) if near is not None else np.flatnonzero(part.mask[: part.rows])  # else: exact
            scores = np.empty(len(rows), dtype=np.float32)
            np.einsum("ij,j->i", part.vecs[rows], query, out=scores)
            if len(rows) > self.k:
                top = np.argpartition(-scores, self.k - 1)[: self.k]
                rows, scores = rows[top], scores[top]
            with self._lock:
                self._approximate.append((part.ids, rows, scores))

        return run

    def work(self) -> None:
        """Compute blocks until none is left to take."""
        while True:
            with self._lock:
                if self._next >= len(self._blocks):
                    return
                block = self._blocks[self._next]
                self._next += 1
            try:
                block()
            except BaseException as exc:  # re-raised by result() in the calling thread
                self._error = exc
            finally:
                with self._finished:
                    self._done += 1
                    if self._done == len(self._blocks):
                        self._finished.notify_all()

    def result(self) -> list[tuple[str, float]]:
        """Work on the scan, wait for blocks other threads took, and return (id, cosine)
        of the ``k`` nearest rows, best first (ties by id)."""
        self.work()
        with self._finished:
            self._finished.wait_for(lambda: self._done == len(self._blocks))
        if self._error is not None:
            raise self._error
        cand_ids: list[str] = []
        cand_scores: list[np.ndarray] = []
        for ids, rows, all_scores, dense in self._parts:
            scores = all_scores[rows] if dense else all_scores
            if len(rows) > self.k:
                top = np.argpartition(-scores, self.k - 1)[: self.k]
                rows, scores = rows[top], scores[top]
            cand_ids.extend(ids[i] for i in rows)
            cand_scores.append(scores)
        for ids, rows, scores in self._approximate:
            cand_ids.extend(ids[i] for i in rows)
            cand_scores.append(scores)
        if not cand_ids:
            return []
        ranked = sorted(zip(cand_ids, np.concatenate(cand_scores).tolist(), strict=True), key=lambda p: (-p[1], p[0]))
        return ranked[: self.k]


def _block(vecs: Vectors, rows: slice | np.ndarray, query: np.ndarray, out: np.ndarray) -> Callable[[], None]:
    def run() -> None:
        np.einsum("ij,j->i", vecs[rows], query, out=out)

    return run
