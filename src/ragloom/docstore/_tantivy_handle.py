"""Per-process view of one tenant's tantivy index: open, reload, vector-cache sync, seq counter.

A :class:`TenantHandle` is refreshed before every store call: a ``stat`` of tantivy's
``meta.json`` tells whether another writer committed; if so the searcher is reloaded and
the rows with a ``seq`` above the last one seen are pulled into the :class:`VectorCache`.
When the cache then holds more rows than the index, rows were deleted elsewhere and the
cache keeps only the ``seq`` values still live.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import numpy as np
import tantivy

from ragloom.docstore._ann import AnnConfig
from ragloom.docstore._tantivy_query import Q
from ragloom.docstore._tantivy_schema import (
    SCHEMA_VERSION,
    decode_vector,
    hit_count,
    stored_int,
    stored_str,
    term_token,
)
from ragloom.docstore._tantivy_vectors import RowMeta, VectorCache
from ragloom.errors import StoreError

log = logging.getLogger(__name__)

CONF = "ragloom.json"
SEQ = "seq.json"
ANN_DIR = "ann"  # saved approximate (HNSW) indexes of the knowledge bases, beside tantivy's files
StatKey = tuple[int, int, int, int]
_DF_CACHE_MAX = 100_000  # counted document frequencies kept per searcher generation
_T = TypeVar("_T")


@dataclass(slots=True)
class TenantHandle:
    """One tenant index as seen by this process."""

    path: Path
    index: tantivy.Index
    schema: tantivy.Schema
    dim: int
    conf_key: StatKey
    meta_key: StatKey | None
    searcher: tantivy.Searcher
    cache: VectorCache
    # per searcher generation (cleared by refresh): document frequencies counted so far, and
    # whether the searcher holds deleted rows (None = not checked yet)
    df_counts: dict[tuple[str, str], int] = field(default_factory=dict)
    has_deletes: bool | None = None


def stat_key(path: Path) -> StatKey | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)


def write_json(path: Path, data: object) -> None:
    """Atomically replace ``path`` with ``data`` (fsynced)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def open_handle(path: Path, conf_key: StatKey, ann: AnnConfig | None = None) -> TenantHandle:
    """Open the index at ``path`` (its ``ragloom.json`` has stat ``conf_key``); not yet synced."""
    with open(path / CONF, encoding="utf-8") as fh:
        conf = json.load(fh)
    if conf.get("schema_version") != SCHEMA_VERSION:
        raise StoreError(
            f"search index {path} has schema version {conf.get('schema_version')}, "
            f"this ragloom writes {SCHEMA_VERSION}: rebuild it with `ragloom reindex`"
        )
    dim = int(conf["vector_size"])
    index = retry(lambda: tantivy.Index.open(str(path)))
    index.config_reader(reload_policy="manual")
    return TenantHandle(path, index, index.schema, dim, conf_key, None, index.searcher(),
                        VectorCache(dim, ann, path / ANN_DIR))


def refresh(h: TenantHandle, *, written: bool = False) -> None:
    """Reload the searcher and sync the vector cache when the index changed.

    ``written``: the change is this process's own write, made under the tenant's write lock on a handle
    refreshed under it, whose rows the cache holds already — nothing to pull (the query for newer rows costs
    more as the index grows: ~0.5 ms a write at a million rows against ~0.15 ms in a new index); the row count
    is still checked."""
    key = stat_key(h.path / "meta.json")
    if key == h.meta_key:
        return
    retry(h.index.reload)
    h.searcher = h.index.searcher()
    h.meta_key = key
    h.df_counts.clear()
    h.has_deletes = None
    _sync(h, pull=not written)


def _sync(h: TenantHandle, *, pull: bool = True) -> None:
    s = h.searcher
    total = s.num_docs
    if total and (pull or h.cache.live_count != total):
        newer = Q.range_query(h.schema, "seq", tantivy.FieldType.Unsigned, lower_bound=h.cache.last_seq + 1)
        found = s.search(newer, limit=total, order_by_field="seq", order=tantivy.Order.Asc)
        h.cache.apply(_row_meta(s.doc(addr)) for _, addr in found.hits)
    if h.cache.live_count != total:
        log.debug("tantivy index %s: reconciling deletions", h.path)
        addrs = [addr for _, addr in s.search(Q.all_query(), limit=max(1, total)).hits]
        live = np.array(s.fast_field_values("seq", addrs) if addrs else [], dtype=np.int64)
        h.cache.retain_seqs(live)


def doc_freqs(h: TenantHandle, field_name: str, terms: Sequence[str]) -> dict[str, int]:
    """How many live rows hold each term in ``field_name`` (terms map to tokens by :func:`term_token`).

    Tantivy's term statistics are read directly when the searcher holds no deleted row;
    otherwise (they would count deleted rows too) the live rows are counted, once per term
    and searcher generation."""
    s = h.searcher
    if h.has_deletes is None:
        # every row holds exactly one value of ``available``, and tantivy's doc_freq counts
        # deleted rows: the two sums agree exactly when no row of this searcher is deleted
        h.has_deletes = s.doc_freq("available", True) + s.doc_freq("available", False) != s.num_docs
    freq: dict[str, int] = {}
    for term in terms:
        token = term_token(term)
        if not token:
            freq[term] = 0
        elif not h.has_deletes:
            freq[term] = s.doc_freq(field_name, token)
        else:
            key = (field_name, token)
            if key not in h.df_counts:
                if len(h.df_counts) >= _DF_CACHE_MAX:
                    h.df_counts.clear()
                query = Q.term_query(h.schema, field_name, token)
                h.df_counts[key] = hit_count(s.search(query, limit=1, count=True))
            freq[term] = h.df_counts[key]
    return freq


def reserve_seqs(h: TenantHandle, n: int) -> int:
    """First of ``n`` fresh seq values (caller holds the tenant lock, and the handle was refreshed under it:
    its cache has seen every row, so its ``last_seq`` is at least the index's highest seq — no scan of the
    index's seq column, which costs in proportion to its size)."""
    with open(h.path / SEQ, encoding="utf-8") as fh:
        counter = int(json.load(fh)["seq"])
    start = max(counter, h.cache.last_seq) + 1
    write_json(h.path / SEQ, {"seq": start + n - 1})
    return start


def _row_meta(doc: tantivy.Document) -> RowMeta:
    return RowMeta(
        id=stored_str(doc, "id"),
        kb_id=stored_str(doc, "kb_id"),
        doc_id=stored_str(doc, "doc_id"),
        version_id=stored_str(doc, "version_id"),
        available=bool(doc.get_first("available")),
        order=stored_int(doc, "order"),
        seq=stored_int(doc, "seq"),
        vector=decode_vector(doc),
    )


def retry(fn: Callable[[], _T], attempts: int = 5) -> _T:
    """Run ``fn``; retry briefly when another process's writer removed files under us."""
    for attempt in range(attempts):
        try:
            return fn()
        except ValueError as exc:
            if attempt == attempts - 1:
                raise StoreError(f"tantivy index unreadable: {exc}") from exc
            time.sleep(0.01 * (attempt + 1))
    raise AssertionError("unreachable")
