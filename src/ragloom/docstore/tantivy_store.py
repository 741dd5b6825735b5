"""The embedded search store: tantivy for text, filters and stored fields, plus exact KNN.

Layout: one tantivy index per tenant in ``root/<tenant_id>/`` with ``ragloom.json``
(vector size; written last, so its presence means the index exists) and ``seq.json``
(the row sequence counter); writer locks live in ``root/.locks/<tenant_id>.lock``.

* **Atomic rows.** A row's vector is a bytes field of its tantivy document, so one
  tantivy commit makes a batch visible to text and vector search together; a crashed
  writer leaves no trace (uncommitted segments are discarded).
* **Writers queue.** Each write takes the tenant's file lock (then opens the tantivy
  writer, writes, commits, waits for merges, closes), so worker processes wait for each
  other instead of failing on tantivy's one-writer rule. Upsert = delete-by-id + add in
  the same commit, so an id is never present twice.
* **Readers follow.** Before each call a reader ``stat``s tantivy's ``meta.json``; when
  it changed, it reloads and pulls the rows with a ``seq`` above the last one it has
  into its :class:`VectorCache`; a live-count mismatch reveals deletions, which are
  reconciled from the ``seq`` fast field.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import filelock
import numpy as np
import tantivy

from ragloom.dataflow import ChunkRecord
from ragloom.docstore._ann import AnnConfig
from ragloom.docstore._knn import KnnScan
from ragloom.docstore._tantivy_handle import (
    CONF,
    SEQ,
    TenantHandle,
    doc_freqs,
    open_handle,
    refresh,
    reserve_seqs,
    stat_key,
    write_json,
)
from ragloom.docstore._tantivy_query import (
    Q,
    any_of,
    filter_query,
    gated,
    scope_is_empty,
    text_query,
)
from ragloom.docstore._tantivy_schema import (
    SCHEMA_VERSION,
    TERM_FIELDS,
    build_schema,
    from_document,
    hit_count,
    to_document,
)
from ragloom.docstore._tantivy_vectors import RowMeta
from ragloom.docstore.base import Filters, Hit, SearchRequest
from ragloom.errors import InvalidRequestError, NotFoundError, StoreError

log = logging.getLogger(__name__)

_TENANT_RE = re.compile(r"^[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,127}$")


class TantivyDocStore:
    """:class:`ragloom.docstore.base.DocStore` on tantivy + exact in-memory KNN.

    Safe for several threads of one process and for several processes sharing ``root``.
    """

    name = "tantivy"

    def __init__(self, root: Path, *, writer_heap_bytes: int = 128_000_000, ann: AnnConfig | None = None) -> None:
        self.root = Path(root)
        self._ann = ann
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / ".locks").mkdir(exist_ok=True)
        self._heap = writer_heap_bytes
        self._handles: dict[str, TenantHandle] = {}
        self._lock = threading.RLock()  # guards _handles and every handle's state
        self._write_lock = threading.Lock()  # one writer thread per process at a time
        self._executor: ThreadPoolExecutor | None = None

    # -- index lifecycle -------------------------------------------------------------

    def create_index(self, tenant_id: str, vector_size: int) -> None:
        if vector_size <= 0:
            raise InvalidRequestError(f"vector size must be positive, got {vector_size}")
        with self._tenant_write(tenant_id):
            self._create_locked(tenant_id, vector_size)

    def drop_index(self, tenant_id: str) -> None:
        with self._tenant_write(tenant_id):
            path = self._dir(tenant_id)
            if not (path / CONF).exists():
                raise NotFoundError(f"search index of tenant {tenant_id!r} does not exist")
            os.remove(path / CONF)
            shutil.rmtree(path)
            with self._lock:
                self._handles.pop(tenant_id, None)

    def index_exists(self, tenant_id: str) -> bool:
        return (self._dir(tenant_id) / CONF).exists()

    def close(self) -> None:
        with self._lock:
            for h in self._handles.values():
                h.cache.save_ann()  # a graph that grew since it was saved: the next start loads it
            self._handles.clear()
            if self._executor is not None:
                self._executor.shutdown(wait=True)
                self._executor = None

    # -- writes ----------------------------------------------------------------------

    def upsert(self, tenant_id: str, records: Sequence[ChunkRecord]) -> int:
        records = list(records)
        if not records:
            return 0
        with self._tenant_write(tenant_id):
            with self._lock:
                h = self._handle(tenant_id)
                dim = h.dim if h is not None else int(np.asarray(records[0].vector).size)
                vectors = [self._checked_vector(r.vector, dim, r.id) for r in records]
                if h is None:
                    h = self._create_locked(tenant_id, dim)
                seq0 = reserve_seqs(h, len(records))
                # the cache mirrors the index as of this lock's refresh: only the ids it holds have a row to
                # replace (a delete by term is looked up in every segment at commit, a cost that grows with the
                # index)
                present = {r.id for r in records if h.cache.holds(r.id)}
            rows = [
                RowMeta(r.id, r.kb_id, r.doc_id, r.version_id, r.available, r.order, seq0 + i, v)
                for i, (r, v) in enumerate(zip(records, vectors, strict=True))
            ]
            with self._writer(h) as writer:
                for rec, row in zip(records, rows, strict=True):
                    if rec.id in present:  # an id twice in the batch: the second replaces the first
                        writer.delete_documents_by_term("id", rec.id)
                    present.add(rec.id)
                    writer.add_document(to_document(rec, row.seq, row.vector))
            with self._lock:
                h.cache.apply(rows)
                refresh(h, written=True)
        return len(records)

    def delete(self, tenant_id: str, filters: Filters) -> int:
        if scope_is_empty(filters):
            return 0
        every = replace(filters, available_only=False)
        with self._tenant_write(tenant_id):
            with self._lock:
                h = self._handle(tenant_id)
                if h is None:
                    return 0
                fq = filter_query(h.schema, every, use_available=False)
                n = hit_count(h.searcher.search(fq, limit=1, count=True))
                ids = [id_ for _, _, id_ in h.cache.rows(every)]
            if n == 0:
                return 0
            with self._writer(h) as writer:
                writer.delete_documents_by_query(fq)
            with self._lock:
                h.cache.remove_ids(ids)
                refresh(h, written=True)
        return n

    # -- reads -----------------------------------------------------------------------

    def search(self, tenant_id: str, request: SearchRequest) -> list[Hit]:
        # The store's lock is held only to bring the handle up to date and to take a snapshot: the searcher
        # (tantivy's is an immutable view of one commit) and the KNN's row selection (a scan reads arrays
        # that later writes replace, never change). The searches themselves run unlocked, so concurrent
        # queries use every core instead of waiting for each other.
        with self._lock:
            h = self._handle(tenant_id)
            if h is None or scope_is_empty(request.filters):
                return []
            searcher, schema = h.searcher, h.schema
            qvec = None
            if request.vector is not None:
                qvec = self._query_vector(request.vector, h.dim)
            text_q = text_query(schema, request.text) if request.text is not None else None
            scan: KnnScan | None = None
            if qvec is not None and request.vector_top_k > 0:
                scan = h.cache.scan(request.filters, qvec, request.vector_top_k)
            fq = filter_query(schema, request.filters, use_available=True) if text_q is not None else None
            pool = self._pool()
        # the exact KNN (numpy, GIL released) runs beside the text search (tantivy, GIL released);
        # this thread joins the scan when its text search is done
        if scan is not None:
            with contextlib.suppress(RuntimeError):  # the store was closed meanwhile: this thread scans alone
                pool.submit(scan.work)
        hits: list[Hit] = []
        gate_passed = 0 if request.text_top_k > 0 else 1  # > len(hits): "maybe more passed"
        if text_q is not None and fq is not None and request.text_top_k > 0:
            result = searcher.search(gated(fq, text_q), limit=request.text_top_k, count=True)
            gate_passed = hit_count(result)
            scored = [(from_document(searcher.doc(addr)), float(score)) for score, addr in result.hits]
            # cosines from the vector cache, by the KNN's own kernel (one matrix product)
            cached: dict[str, float] = {}
            if qvec is not None:
                with self._lock:
                    cached = h.cache.cosines([rec.id for rec, _ in scored], qvec)
            for rec, score in scored:
                cos = None
                if qvec is not None:
                    cos = cached[rec.id] if rec.id in cached else _cosine(rec.vector, qvec)
                hits.append(Hit(rec, score, cos))
        if scan is not None:
            seen = {hit.record.id for hit in hits}
            near = [p for p in scan.result() if p[0] not in seen]
            # rows outside the text hits can pass the gate only when the hits were cut off
            score_q = text_q if text_q is not None and gate_passed > len(hits) else None
            records, scores = self._fetch(schema, searcher, [id_ for id_, _ in near], score_q)
            hits.extend(Hit(records[id_], scores.get(id_), cos) for id_, cos in near if id_ in records)
        return hits

    def get(self, tenant_id: str, ids: Sequence[str]) -> list[ChunkRecord]:
        with self._lock:
            h = self._handle(tenant_id)
            if h is None or not ids:
                return []
            records, _ = self._fetch(h.schema, h.searcher, list(ids), None)
            return [records[id_] for id_ in ids if id_ in records]

    def list_chunks(
        self, tenant_id: str, filters: Filters, *, offset: int = 0, limit: int = 100
    ) -> tuple[list[ChunkRecord], int]:
        if offset < 0 or limit < 0:
            raise InvalidRequestError("offset and limit must not be negative")
        with self._lock:
            h = self._handle(tenant_id)
            if h is None or scope_is_empty(filters):
                return [], 0
            rows = h.cache.rows(filters)
            page = [id_ for _, _, id_ in rows[offset : offset + limit]]
            records, _ = self._fetch(h.schema, h.searcher, page, None)
            return [records[id_] for id_ in page if id_ in records], len(rows)

    def count(self, tenant_id: str, filters: Filters) -> int:
        with self._lock:
            h = self._handle(tenant_id)
            if h is None or scope_is_empty(filters):
                return 0
            return h.cache.count(filters)

    def doc_freq(self, tenant_id: str, field_name: str, terms: Sequence[str]) -> tuple[dict[str, int], int]:
        if field_name not in TERM_FIELDS:
            raise InvalidRequestError(f"unknown full-text field {field_name!r}")
        with self._lock:
            h = self._handle(tenant_id)
            if h is None:
                return {t: 0 for t in terms}, 0
            return doc_freqs(h, field_name, terms), h.searcher.num_docs

    # -- internals: handles and sync -------------------------------------------------

    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragloom-knn")
        return self._executor

    def _dir(self, tenant_id: str) -> Path:
        if not _TENANT_RE.match(tenant_id):
            raise InvalidRequestError(f"invalid tenant id {tenant_id!r}")
        return self.root / tenant_id

    @contextmanager
    def _tenant_write(self, tenant_id: str) -> Iterator[None]:
        lock_path = self.root / ".locks" / f"{self._dir(tenant_id).name}.lock"
        with self._write_lock, filelock.FileLock(str(lock_path)):
            yield

    def _create_locked(self, tenant_id: str, dim: int) -> TenantHandle:
        """Create the index (caller holds the tenant lock); returns its handle."""
        path = self._dir(tenant_id)
        with self._lock:
            h = self._handle(tenant_id)
            if h is not None:
                if h.dim != dim:
                    raise StoreError(f"index of tenant {tenant_id!r} exists with vector size {h.dim}, not {dim}")
                return h
            path.mkdir(parents=True, exist_ok=True)
            tantivy.Index(build_schema(), path=str(path), reuse=True)
            # seq starts at the creation time in µs, so a re-created index never reuses
            # seq values that a reader may still remember from the dropped one.
            write_json(path / SEQ, {"seq": time.time_ns() // 1000})
            write_json(path / CONF, {"vector_size": dim, "schema_version": SCHEMA_VERSION})
            h = self._handle(tenant_id)
            if h is None:
                raise StoreError(f"index of tenant {tenant_id!r} vanished while being created")
            return h

    def _handle(self, tenant_id: str) -> TenantHandle | None:
        """The up-to-date handle of a tenant index, or ``None`` when it does not exist."""
        path = self._dir(tenant_id)
        key = stat_key(path / CONF)
        if key is None:
            self._handles.pop(tenant_id, None)
            return None
        h = self._handles.get(tenant_id)
        if h is None or h.conf_key != key:
            h = self._handles[tenant_id] = open_handle(path, key, self._ann)
        refresh(h)
        return h

    @contextmanager
    def _writer(self, h: TenantHandle) -> Iterator[tantivy.IndexWriter]:
        """An open tantivy writer; commits on success, rolls back on error, always closes."""
        # one indexing thread: tantivy writes a segment per thread at each commit, so one thread means half the
        # files to sync and to merge — a document's write (100 rows) 14 % cheaper, a batch of 5,000 no slower
        try:
            writer = h.index.writer(heap_size=self._heap, num_threads=1)
        except ValueError as exc:
            raise StoreError(f"cannot open the writer of {h.path}: {exc}") from exc
        try:
            yield writer
            writer.commit()
        except BaseException as exc:
            writer.rollback()
            if isinstance(exc, ValueError):
                raise StoreError(f"write to {h.path} failed: {exc}") from exc
            raise
        finally:
            writer.wait_merging_threads()

    @staticmethod
    def _fetch(
        schema: tantivy.Schema, searcher: tantivy.Searcher, ids: list[str], text_q: tantivy.Query | None
    ) -> tuple[dict[str, ChunkRecord], dict[str, float]]:
        """Records of ``ids`` and, when ``text_q`` is given, the text score of those passing it."""
        records: dict[str, ChunkRecord] = {}
        scores: dict[str, float] = {}
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return records, scores
        by_id = Q.const_score_query(any_of(schema, "id", wanted), 0.0)
        if text_q is not None:
            for score, addr in searcher.search(gated(by_id, text_q), limit=len(wanted)).hits:
                rec = from_document(searcher.doc(addr))
                records[rec.id], scores[rec.id] = rec, float(score)
            rest = [id_ for id_ in wanted if id_ not in records]
            if not rest:
                return records, scores
            by_id = any_of(schema, "id", rest)
        for _, addr in searcher.search(by_id, limit=len(wanted)).hits:
            rec = from_document(searcher.doc(addr))
            records[rec.id] = rec
        return records, scores

    @staticmethod
    def _checked_vector(vector: np.ndarray, dim: int, id_: str) -> np.ndarray:
        arr = np.asarray(vector, dtype=np.float32)
        if arr.ndim != 1 or arr.size != dim:
            raise InvalidRequestError(f"vector of row {id_!r} has shape {arr.shape}; the index expects ({dim},)")
        if not np.all(np.isfinite(arr)):
            raise InvalidRequestError(f"vector of row {id_!r} has non-finite values")
        return np.ascontiguousarray(arr)

    @staticmethod
    def _query_vector(vector: np.ndarray, dim: int) -> np.ndarray:
        arr = TantivyDocStore._checked_vector(vector, dim, "<query>")
        norm = float(np.linalg.norm(arr))
        if norm == 0.0:
            raise InvalidRequestError("the query vector is all zeros")
        return arr / norm


def _cosine(vector: np.ndarray, unit_query: np.ndarray) -> float:
    norm = float(np.linalg.norm(vector))
    if norm == 0.0:
        return 0.0
    return float((vector / norm) @ unit_query)
