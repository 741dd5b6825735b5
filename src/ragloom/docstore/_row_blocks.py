"""A float32 matrix of vector rows that grows without moving the rows it holds.

The vector cache appends rows one by one. In one contiguous array, growing means copying every row
held: at a million rows of 384 floats that is 1.5 GB copied by one write, seconds during which the
store's lock keeps every search waiting. :class:`RowBlocks` keeps its first rows in one array that
doubles (as before) up to :data:`BLOCK` rows, then adds blocks of :data:`BLOCK` rows: no row is copied
once the matrix is past one block, whatever its size.

It reads like an array: ``m[a:b]`` (a view when the range lies in one block) and ``m[rows]`` with
an integer array (a copy). Readers may keep the object while rows are appended: rows below the
count they were given never change (appends write rows beyond it, and a block that doubles is
replaced by a copy holding the same rows).
"""

from __future__ import annotations

import numpy as np

SHIFT = 16
BLOCK = 1 << SHIFT
"""Rows of a block (a multiple of the KNN scan's blocks, so a scan's row range lies in one block)."""
_MASK = BLOCK - 1


class RowBlocks:
    """Rows of ``dim`` float32 numbers, indexed like a 2-d array."""

    __slots__ = ("_blocks", "capacity", "dim")

    def __init__(self, dim: int, capacity: int = 16) -> None:
        self.dim = dim
        first = min(max(16, capacity), BLOCK)
        self._blocks: list[np.ndarray] = [np.zeros((first, dim), dtype=np.float32)]
        self.capacity = first
        while self.capacity < capacity:
            self._grow()

    @classmethod
    def of(cls, rows: np.ndarray) -> RowBlocks:
        """A matrix holding ``rows`` (with room for as many more)."""
        out = cls(rows.shape[1], 2 * len(rows))
        for a in range(0, len(rows), BLOCK):
            b = min(len(rows), a + BLOCK)
            out._blocks[a >> SHIFT][: b - a] = rows[a:b]
        return out

    def set(self, i: int, vector: np.ndarray) -> None:
        """Write row ``i`` (the matrix grows to hold it)."""
        while i >= self.capacity:
            self._grow()
        self._blocks[i >> SHIFT][i & _MASK] = vector

    def _grow(self) -> None:
        if self.capacity < BLOCK:  # the first block doubles: a copy of at most BLOCK rows
            old = self._blocks[0]
            new = np.zeros((min(2 * len(old), BLOCK), self.dim), dtype=np.float32)
            new[: len(old)] = old
            self._blocks[0] = new
            self.capacity = len(new)
        else:  # a new block: nothing is copied
            self._blocks.append(np.zeros((BLOCK, self.dim), dtype=np.float32))
            self.capacity += BLOCK

    def __getitem__(self, rows: slice | np.ndarray) -> np.ndarray:
        if isinstance(rows, slice):
            start, stop, step = rows.indices(self.capacity)
            if step != 1:
                raise ValueError("RowBlocks reads ranges with step 1 only")
            if stop <= start:
                return np.zeros((0, self.dim), dtype=np.float32)
            first, last = start >> SHIFT, (stop - 1) >> SHIFT
            if first == last:
                return self._blocks[first][start & _MASK: ((stop - 1) & _MASK) + 1]
            return np.concatenate([self[max(start, b << SHIFT): min(stop, (b + 1) << SHIFT)]
                                   for b in range(first, last + 1)])
        idx = np.asarray(rows, dtype=np.int64)
        if idx.ndim != 1:
            raise ValueError("RowBlocks reads rows by a 1-d array of row numbers")
        if len(idx) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        which = idx >> SHIFT
        lo, hi = int(which.min()), int(which.max())
        if lo == hi:
            picked: np.ndarray = self._blocks[lo][idx & _MASK]
            return picked
        out = np.empty((len(idx), self.dim), dtype=np.float32)
        for b in range(lo, hi + 1):
            sel = which == b
            if sel.any():
                out[sel] = self._blocks[b][idx[sel] & _MASK]
        return out


Vectors = np.ndarray | RowBlocks
"""Vector rows as the KNN scan and the approximate index read them: an array or a :class:`RowBlocks`."""
