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

A graph is saved beside the search index once built (and again when the store closes after it grew by
a twentieth): a server restarted on a large knowledge base loads it instead of building it again. Its
keys are row numbers of the process that saved it; the rows' ``seq`` values saved with it map them to
the row numbers of the process that loads it (rows deleted since get keys past every row and are never
returned); a graph whose rows are not the loading shard's first ones, whose settings differ, or whose
stored vectors do not match the rows' (a re-embedded index) is ignored and built again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ragloom.docstore._row_blocks import BLOCK, Vectors

if TYPE_CHECKING:
    from usearch.index import Index

log = logging.getLogger(__name__)

GONE = 1 << 48
"""Keys from here on name rows of a loaded graph that the loading shard no longer holds (never returned)."""
_FORMAT = 1
_CHECKED_ROWS = 256  # rows whose stored vectors are compared with the shard's when a graph is loaded


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
    """Candidates considered while searching (HNSW's ef), for a graph of up to ``expansion_rows`` rows."""
    expansion_rows: int = 250_000
    """A larger graph searches with ``expansion_search`` x its rows / ``expansion_rows`` candidates (at most
    :data:`MAX_EXPANSION`; 0: ``expansion_search`` whatever the size): a graph of a million rows built at the
    default settings needs 512 for recall@10 0.98, one of 200,000 reaches 0.99 with 128."""
    min_share: float = 0.1
    """A filter passing less than this share of a shard's rows is searched exactly."""
    max_candidates_share: float = 0.02
    """The graph is asked for at most this share of its rows as candidates; a filter that would need more
    is searched exactly."""
    background: bool = True
    """Build in a background thread (False: at once, in the calling thread; tests)."""


MAX_EXPANSION = 4096


def expansion_for(config: AnnConfig, rows: int) -> int:
    """HNSW's ef for a graph of ``rows`` rows (see :attr:`AnnConfig.expansion_rows`)."""
    if config.expansion_rows <= 0 or rows <= config.expansion_rows:
        return config.expansion_search
    return min(MAX_EXPANSION, max(config.expansion_search, math.ceil(config.expansion_search * rows
                                                                     / config.expansion_rows)))


class ShardAnn:
    """The HNSW graph of one shard's rows ``[0, rows)``; thread-safe."""

    def __init__(self, dim: int, config: AnnConfig) -> None:
        self.index = _index_class()(ndim=dim, metric="ip", dtype="f16", connectivity=config.connectivity,
                                    expansion_add=config.expansion_add, expansion_search=config.expansion_search)
        self.config = config
        self.rows = 0
        self.saved_rows = 0  # rows of the copy on disk (0: none)
        self.origin = "built"  # or "saved": loaded from disk
        self._lock = threading.Lock()

    def add(self, vecs: Vectors, upto: int) -> None:
        """Index the rows ``[self.rows, upto)`` of ``vecs`` (rows are only ever appended)."""
        if upto <= self.rows:
            return
        with self._lock:
            start = self.rows
            while start < upto:  # a block of rows at a time: each a view of the shard's rows, never a copy of all
                stop = min(upto, (start // BLOCK + 1) * BLOCK)
                self.index.add(np.arange(start, stop, dtype=np.uint64), vecs[start:stop], threads=1)
                start = self.rows = stop
            self.set_expansion(expansion_for(self.config, upto))

    @property
    def expansion(self) -> int:
        """The candidates a search considers now (HNSW's ef)."""
        return int(self.index.expansion_search)

    def set_expansion(self, ef: int) -> None:
        self.index.expansion_search = ef  # type: ignore[misc]  # usearch types the property without its setter

    def nearest(self, query: np.ndarray, count: int) -> np.ndarray:
        """Row numbers of (about) the ``count`` rows nearest to ``query``, best first."""
        with self._lock:
            return np.asarray(self.index.search(query, count, threads=1).keys, dtype=np.int64)

    @property
    def memory_bytes(self) -> int:
        return int(self.index.memory_usage)

    def save(self, directory: Path, name: str, seqs: np.ndarray) -> None:
        """Write the graph of rows ``[0, self.rows)`` (their ``seqs``) to ``directory`` under ``name``; the file
        that describes it is replaced last, so a crash leaves the previous copy or this one, never a mix."""
        directory.mkdir(parents=True, exist_ok=True)
        stem = _stem(name)
        token = uuid.uuid4().hex[:12]
        graph, rows_file = f"{stem}.{token}.usearch", f"{stem}.{token}.seqs.npy"
        with self._lock:
            rows = self.rows
            self.index.save(str(directory / graph))
        np.save(directory / rows_file, np.asarray(seqs[:rows], dtype=np.int64))
        meta = {"format": _FORMAT, "dim": int(self.index.ndim), "connectivity": self.config.connectivity,
                "expansion_add": self.config.expansion_add, "rows": rows, "graph": graph, "seqs": rows_file}
        tmp = directory / f"{stem}.json.tmp"
        tmp.write_text(json.dumps(meta), encoding="utf-8")
        os.replace(tmp, directory / f"{stem}.json")
        for old in directory.glob(f"{stem}.*"):
            if old.name not in (graph, rows_file, f"{stem}.json"):
                old.unlink(missing_ok=True)
        self.saved_rows = rows


def _holds(ann: ShardAnn, keys: np.ndarray, vecs: np.ndarray) -> bool:
    """Whether the graph stores (to half precision) ``vecs`` under ``keys``."""
    stored = ann.index.get(keys.astype(np.uint64), dtype="f32")
    parts = list(stored) if isinstance(stored, tuple) else [] if stored is None else list(np.atleast_2d(stored))
    if len(parts) != len(keys) or any(v is None for v in parts):
        return False
    return bool(np.allclose(np.vstack([np.asarray(v, dtype=np.float32) for v in parts]), vecs, atol=2e-3))


def _stem(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:32]


def load_saved(directory: Path, name: str, dim: int, config: AnnConfig, seqs: np.ndarray, vecs: Vectors,
               n: int) -> ShardAnn | None:
    """The graph saved under ``name``, its keys renamed to this shard's rows (``seqs``/``vecs``: the shard's
    arrays, rows ``[0, n)``), covering the shard's first rows; None when there is none or it does not fit."""
    meta_path = directory / f"{_stem(name)}.json"
    if not meta_path.exists():
        return None
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if (meta.get("format"), meta.get("dim"), meta.get("connectivity"), meta.get("expansion_add")) != (
                _FORMAT, dim, config.connectivity, config.expansion_add):
            log.info("saved approximate index %s was made with other settings: built again", meta_path.name)
            return None
        saved = np.load(directory / meta["seqs"])
        ann = ShardAnn(dim, config)
        ann.index.load(str(directory / meta["graph"]))
    except (OSError, ValueError, RuntimeError, KeyError, TypeError) as exc:
        log.warning("saved approximate index %s unreadable (%s): built again", meta_path.name, exc)
        return None
    if int(ann.index.ndim) != dim or len(ann.index) != len(saved):
        log.warning("saved approximate index %s does not match its rows: built again", meta_path.name)
        return None
    current = seqs[:n]
    pos = np.minimum(np.searchsorted(current, saved), max(n - 1, 0))
    present = (pos < n) & (current[pos] == saved) if n else np.zeros(len(saved), dtype=bool)
    kept = int(np.count_nonzero(present))
    # the saved rows still held must be exactly the shard's first rows (rows appended since come after them),
    # and most of the graph must still be of use
    if kept * 2 < len(saved) or not np.array_equal(pos[present], np.arange(kept)):
        log.info("saved approximate index %s: its rows are not this shard's first ones: built again", meta_path.name)
        return None
    old = np.flatnonzero(present)
    sample = old[np.linspace(0, kept - 1, num=min(_CHECKED_ROWS, kept), dtype=np.int64)] if kept else old
    if kept and not _holds(ann, sample, vecs[pos[sample]]):
        log.info("saved approximate index %s holds other vectors than its rows (re-embedded?): built again",
                 meta_path.name)
        return None
    gone = np.flatnonzero(~present)
    if len(gone):
        ann.index.rename(gone.astype(np.uint64), (gone + GONE).astype(np.uint64))
    moved = old[pos[old] != old]
    if len(moved):  # through temporary keys: a new key may still be another row's old one
        ann.index.rename(moved.astype(np.uint64), (pos[moved] + 2 * GONE).astype(np.uint64))
        ann.index.rename((pos[moved] + 2 * GONE).astype(np.uint64), pos[moved].astype(np.uint64))
    ann.rows, ann.saved_rows, ann.origin = kept, len(saved), "saved"
    ann.set_expansion(expansion_for(config, kept))
    return ann


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
