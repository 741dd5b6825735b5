"""In-memory mirror of a tenant index's vectors and scope fields, for exact filtered KNN.

Rows are kept in one *shard per knowledge base* (a float32 matrix that grows without moving its
rows, :class:`~ragloom.docstore._row_blocks.RowBlocks`, plus numpy arrays of doc/version codes,
availability, order and seq that grow by doubling), so a kb filter selects whole shards and the rest
of the filter is a vectorised mask. A row that is replaced or deleted is marked dead; a shard is
compacted when half of it is dead. Vectors are L2-normalised on the way in, so a dot product is the
cosine.

The cache is fed by the store (rows read from tantivy by ``seq``); it never reads the
index itself. A shard past ``AnnConfig.min_rows`` live rows also gets an approximate index
(:mod:`ragloom.docstore._ann`), used for the filters that let enough of its rows through; with an
``ann_dir`` the graph is saved there and loaded from there by the next process instead of being built.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragloom.docstore._ann import AnnConfig, ShardAnn, load_saved
from ragloom.docstore._knn import AnnPart, KnnScan
from ragloom.docstore._row_blocks import RowBlocks, Vectors
from ragloom.docstore.base import Filters

log = logging.getLogger(__name__)


@dataclass(slots=True)
class RowMeta:
    """What the cache keeps of one row."""

    id: str
    kb_id: str
    doc_id: str
    version_id: str
    available: bool
    order: int
    seq: int
    vector: np.ndarray


class _Shard:
    def __init__(self, kb_id: str, dim: int) -> None:
        self.kb_id = kb_id
        self.n = 0
        self.dead = 0
        self.vecs = RowBlocks(dim)  # grows without copying its rows (a contiguous array would copy them all)
        self.doc = np.zeros(16, dtype=np.int32)
        self.ver = np.zeros(16, dtype=np.int32)
        self.avail = np.zeros(16, dtype=bool)
        self.alive = np.zeros(16, dtype=bool)
        self.order = np.zeros(16, dtype=np.int64)
        self.seq = np.zeros(16, dtype=np.int64)
        self.ids: list[str] = []
        self.ann: ShardAnn | None = None  # the approximate index of rows [0, ann.rows), once built
        self.generation = 0  # bumped by compaction: row numbers change, an index built before is stale
        self.building: threading.Thread | None = None
        self.built: tuple[ShardAnn, int] | None = None  # a finished background build and its generation

    _ARRAYS = ("doc", "ver", "avail", "alive", "order", "seq")  # 26 bytes a row: doubled by copying

    def append(self, row: RowMeta, doc: int, ver: int) -> int:
        if self.n == len(self.seq):
            for name in self._ARRAYS:
                old = getattr(self, name)
                new = np.zeros((2 * len(old),) + old.shape[1:], dtype=old.dtype)
                new[: self.n] = old[: self.n]
                setattr(self, name, new)
        i = self.n
        norm = float(np.linalg.norm(row.vector))
        self.vecs.set(i, row.vector / norm if norm > 0 else row.vector)
        self.doc[i], self.ver[i], self.avail[i], self.alive[i] = doc, ver, row.available, True
        self.order[i], self.seq[i] = row.order, row.seq
        self.ids.append(row.id)
        self.n += 1
        return i

    def compact(self) -> np.ndarray:
        """Drop dead rows; returns the old row index of every kept row."""
        keep = np.flatnonzero(self.alive[: self.n])
        self.vecs = RowBlocks.of(self.vecs[keep])
        for name in self._ARRAYS:
            old = getattr(self, name)
            new = np.zeros((max(16, 2 * len(keep)),) + old.shape[1:], dtype=old.dtype)
            new[: len(keep)] = old[keep]
            setattr(self, name, new)
        self.ids = [self.ids[i] for i in keep]
        self.n, self.dead = len(keep), 0
        self.ann, self.built, self.generation = None, None, self.generation + 1
        return keep


def _grown(ann: ShardAnn) -> bool:
    """Whether the graph holds a twentieth more rows than its copy on disk (or has none)."""
    return ann.rows > 0 and ann.rows * 20 > ann.saved_rows * 21


def _save(ann: ShardAnn, directory: Path, kb_id: str, seqs: np.ndarray) -> None:
    """Save ``ann`` (a failure is logged: the graph is built again by the next process)."""
    try:
        ann.save(directory, kb_id, seqs)
    except OSError as exc:
        log.warning("approximate vector index not saved in %s: %s", directory, exc)


class VectorCache:
    """Exact filtered KNN over the rows of one tenant index."""

    def __init__(self, dim: int, ann: AnnConfig | None = None, ann_dir: Path | None = None) -> None:
        self.dim = dim
        self.ann = ann
        self.ann_dir = ann_dir
        self.last_seq = 0
        self._shards: dict[str, _Shard] = {}
        self._where: dict[str, tuple[str, int]] = {}  # id -> (kb_id, row)
        self._codes: dict[str, int] = {}

    @property
    def live_count(self) -> int:
        return len(self._where)

    def holds(self, id_: str) -> bool:
        """Whether a live row has this id (the cache mirrors every row of the index it was synced with)."""
        return id_ in self._where

    def _code(self, value: str) -> int:
        code = self._codes.get(value)
        if code is None:
            code = self._codes[value] = len(self._codes)
        return code

    def apply(self, rows: Iterable[RowMeta]) -> None:
        """Insert rows, replacing any row with the same id."""
        for row in rows:
            self._kill(row.id)
            shard = self._shards.get(row.kb_id)
            if shard is None:
                shard = self._shards[row.kb_id] = _Shard(row.kb_id, self.dim)
            i = shard.append(row, self._code(row.doc_id), self._code(row.version_id))
            self._where[row.id] = (row.kb_id, i)
            self.last_seq = max(self.last_seq, row.seq)
        self._maybe_compact()

    def _ann_upkeep(self, shard: _Shard, *, start: bool = False) -> None:
        """Install a finished build and index appended rows; with ``start`` (a search), start a build once the
        shard is large enough — a process that never searches (a worker) never builds a graph."""
        config = self.ann
        if config is None or config.min_rows <= 0:
            return
        if shard.built is not None:
            built, generation = shard.built
            shard.built = None
            if generation == shard.generation:
                shard.ann = built
        if shard.ann is not None:
            shard.ann.add(shard.vecs, shard.n)  # rows appended since (the build's or the last call's)
        elif start and shard.building is None and shard.built is None and shard.n - shard.dead >= config.min_rows:
            vecs, seqs, n, generation = shard.vecs, shard.seq, shard.n, shard.generation  # rows below n never change
            kb_id, directory = shard.kb_id, self.ann_dir

            def build() -> None:
                t0 = time.perf_counter()
                ann = load_saved(directory, kb_id, self.dim, config, seqs, vecs, n) if directory else None
                loaded = ann.rows if ann is not None else 0
                if ann is None:
                    ann = ShardAnn(self.dim, config)
                ann.add(vecs, n)
                if directory is not None and (ann.origin == "built" or _grown(ann)):
                    _save(ann, directory, kb_id, seqs)
                shard.built, shard.building = (ann, generation), None
                how = f"loaded ({loaded} saved rows)" if ann.origin == "saved" else "built"
                log.info("approximate vector index of %d rows %s in %.1f s", n, how, time.perf_counter() - t0)

            if config.background:
                shard.building = threading.Thread(target=build, name="ragloom-ann-build", daemon=True)
                shard.building.start()
            else:
                build()
                self._ann_upkeep(shard)

    def save_ann(self) -> None:
        """Save every shard's graph that grew by a twentieth since it was saved (the store closes)."""
        if self.ann_dir is None or self.ann is None:
            return
        for kb_id, shard in self._shards.items():
            if shard.ann is not None and _grown(shard.ann):
                _save(shard.ann, self.ann_dir, kb_id, shard.seq)

    def ann_origins(self) -> dict[str, str]:
        """How each knowledge base's approximate index came to be: "built" or "saved" (loaded from disk)."""
        return {kb_id: shard.ann.origin for kb_id, shard in self._shards.items() if shard.ann is not None}

    def remove_ids(self, ids: Iterable[str]) -> None:
        for id_ in ids:
            self._kill(id_)
        self._maybe_compact()

    def retain_seqs(self, live: np.ndarray) -> None:
        """Drop every row whose seq is not in ``live`` (rows deleted by another process)."""
        for shard in self._shards.values():
            gone = shard.alive[: shard.n] & ~np.isin(shard.seq[: shard.n], live)
            for i in np.flatnonzero(gone):
                self._kill(shard.ids[i])
        self._maybe_compact()

    def _kill(self, id_: str) -> None:
        where = self._where.pop(id_, None)
        if where is not None:
            shard = self._shards[where[0]]
            shard.alive[where[1]] = False
            shard.dead += 1

    def _maybe_compact(self) -> None:
        """Compact the shards more than half dead; then see to every shard's approximate index."""
        for kb_id, shard in self._shards.items():
            if shard.dead > 64 and shard.dead * 2 > shard.n:
                shard.compact()
                for i, id_ in enumerate(shard.ids):
                    self._where[id_] = (kb_id, i)
            self._ann_upkeep(shard)

    def _masks(self, filters: Filters) -> list[tuple[_Shard, np.ndarray]]:
        """(shard, row mask) for every shard with rows passing ``filters``."""
        out: list[tuple[_Shard, np.ndarray]] = []
        doc_codes = self._code_array(filters.doc_ids)
        ver_codes = self._code_array(filters.version_ids)
        hidden_codes = self._code_array(filters.exclude_doc_ids) if filters.exclude_doc_ids else None
        id_rows = self._id_rows(filters.ids)
        for kb_id in dict.fromkeys(filters.kb_ids):
            shard = self._shards.get(kb_id)
            if shard is None or shard.n == 0:
                continue
            n = shard.n
            mask = shard.alive[:n].copy()
            if filters.available_only:
                mask &= shard.avail[:n]
            if doc_codes is not None:
                mask &= np.isin(shard.doc[:n], doc_codes)
            if ver_codes is not None:
                mask &= np.isin(shard.ver[:n], ver_codes)
            if hidden_codes is not None and len(hidden_codes):
                mask &= ~np.isin(shard.doc[:n], hidden_codes)
            if id_rows is not None:
                only = np.zeros(n, dtype=bool)
                only[id_rows.get(kb_id, [])] = True
                mask &= only
            if mask.any():
                out.append((shard, mask))
        return out

    def _code_array(self, values: Iterable[str] | None) -> np.ndarray | None:
        if values is None:
            return None
        return np.array([self._codes[v] for v in values if v in self._codes], dtype=np.int32)

    def _id_rows(self, ids: Iterable[str] | None) -> dict[str, list[int]] | None:
        if ids is None:
            return None
        rows: dict[str, list[int]] = {}
        for id_ in ids:
            where = self._where.get(id_)
            if where is not None:
                rows.setdefault(where[0], []).append(where[1])
        return rows

    def knn(self, filters: Filters, query: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The ``k`` filter-passing rows nearest to the unit vector ``query``:
        (id, cosine), best first (ties by id)."""
        return self.scan(filters, query, k).result()

    def scan(self, filters: Filters, query: np.ndarray, k: int) -> KnnScan:
        """:meth:`knn` as a :class:`KnnScan` that several threads can compute together.
        The cache must not change until its ``result()`` returned."""
        if k <= 0:
            return KnnScan([], query, k)
        parts: list[tuple[list[str], Vectors, np.ndarray]] = []
        approximate: list[AnnPart] = []
        for shard, mask in self._masks(filters):
            self._ann_upkeep(shard, start=True)
            config, ann = self.ann, shard.ann
            if ann is None or config is None or np.count_nonzero(mask) < max(config.min_share * shard.n, 4 * k):
                parts.append((shard.ids, shard.vecs, np.flatnonzero(mask)))  # exact: no graph yet, or a narrow filter
                continue
            covered = ann.rows  # the rows the graph holds now; later ones are scanned exactly
            approximate.append(AnnPart(shard.ids, shard.vecs, mask, ann, covered, int(np.count_nonzero(mask[:covered])),
                                       config.max_candidates_share))
            tail = covered + np.flatnonzero(mask[covered:])
            if len(tail):
                parts.append((shard.ids, shard.vecs, tail))
        return KnnScan(parts, query, k, approximate)

    def ann_rows(self) -> dict[str, int]:
        """Rows covered by each knowledge base's approximate index (0: none yet)."""
        return {kb_id: shard.ann.rows if shard.ann is not None else 0 for kb_id, shard in self._shards.items()}

    def cosines(self, ids: Iterable[str], query: np.ndarray) -> dict[str, float]:
        """Cosine of each cached row of ``ids`` to the unit vector ``query``, computed like
        :meth:`knn` computes it (ids not in the cache are left out)."""
        by_shard: dict[str, tuple[list[str], list[int]]] = {}
        for id_ in ids:
            where = self._where.get(id_)
            if where is not None:
                names, rows = by_shard.setdefault(where[0], ([], []))
                names.append(id_)
                rows.append(where[1])
        out: dict[str, float] = {}
        for kb_id, (names, rows) in by_shard.items():
            scores = np.einsum("ij,j->i", self._shards[kb_id].vecs[np.asarray(rows, dtype=np.int64)], query)
            out.update(zip(names, scores.tolist(), strict=True))
        return out

    def rows(self, filters: Filters) -> list[tuple[str, int, str]]:
        """(doc_id, order, id) of every filter-passing row, sorted."""
        names = {code: value for value, code in self._codes.items()}
        out: list[tuple[str, int, str]] = []
        for shard, mask in self._masks(filters):
            for i in np.flatnonzero(mask):
                out.append((names[int(shard.doc[i])], int(shard.order[i]), shard.ids[i]))
        out.sort()
        return out

    def count(self, filters: Filters) -> int:
        return sum(int(mask.sum()) for _, mask in self._masks(filters))
