"""The PostgreSQL search store: pgvector for vectors, GIN-indexed term keys for full text.

``RAGLOOM_DOCSTORE=pgvector`` with ``RAGLOOM_DOCSTORE_URL`` (default: ``RAGLOOM_DATABASE_URL``
when that is a PostgreSQL URL). Tables and the row format: :mod:`._pg_schema`; the catalog
and its statistics: :mod:`._pg_catalog`; full-text gate and BM25 scoring: :mod:`._pg_text`;
vector search (exact, or HNSW with iterative scan on large scopes): :mod:`._pg_vector`;
connections: :mod:`._pg_conn`.

* **Atomic batches, queued writers.** An upsert or delete is one transaction: it locks the
  tenant's catalog row (``FOR UPDATE``; so writers of a tenant, in any process, queue), deletes
  the rows it replaces, inserts the batch, merges the term index's GIN pending list (searches
  would scan it whole) and updates the BM25 statistics beside it. A row's
  text and vector live in the same row, so a batch becomes searchable by both at commit, or
  not at all (also after a crash). A missing index is created inside the same transaction.
* **Reads see one snapshot.** Each read runs in one ``REPEATABLE READ`` read-only transaction.
* **Cosines** come from the stored vectors (``1 - (embedding <=> q)``) whichever part found the
  row, text hits included.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from pgvector.psycopg import register_vector
from psycopg import sql

from ragloom.dataflow import ChunkRecord
from ragloom.docstore import _pg_catalog as catalog
from ragloom.docstore import _pg_text as text
from ragloom.docstore._pg_catalog import IndexInfo
from ragloom.docstore._pg_conn import URL_SETTING, Connection, ConnectionPool, conninfo_from_url, pg_errors
from ragloom.docstore._pg_schema import (
    RECORD_COLUMNS,
    filter_sql,
    insert_sql,
    row_params,
    table_name,
    term_key,
    to_record,
)
from ragloom.docstore._pg_vector import checked_vector, cosine, nearest, query_vector
from ragloom.docstore._stored_record import TERM_FIELDS
from ragloom.docstore._tantivy_query import scope_is_empty
from ragloom.docstore.base import Filters, Hit, SearchRequest
from ragloom.errors import InvalidRequestError, NotFoundError, StoreError

_DF_CACHE_MAX = 100_000


class PgVectorDocStore:
    """:class:`ragloom.docstore.base.DocStore` on PostgreSQL + pgvector.

    ``url``: a ``postgresql://`` (or ``postgresql+psycopg://``) URL. Nothing connects until the
    first call; safe for several threads and for forked or spawned worker processes.
    ``exact_knn_rows``: scopes up to this many rows are searched exactly, larger ones through the
    HNSW index (``None``: always exact; see :mod:`._pg_vector`). A tenant's HNSW index is built
    when its table first holds ``hnsw_min_rows`` rows (default: ``exact_knn_rows``, below which
    no search would use it; ``0`` with ``exact_knn_rows=None``) and kept up to date from then on.
    ``hnsw=False``: no HNSW index (every vector search scans). ``url_setting`` names the
    setting in error messages.
    """

    name = "pgvector"

    def __init__(
        self,
        url: str,
        *,
        exact_knn_rows: int | None = 50_000,
        hnsw: bool = True,
        hnsw_min_rows: int | None = None,
        max_idle_connections: int = 8,
        url_setting: str = URL_SETTING,
    ) -> None:
        self._pool = ConnectionPool(conninfo_from_url(url, url_setting), self._setup, max_idle=max_idle_connections)
        self.exact_knn_rows = exact_knn_rows
        self.hnsw = hnsw
        self.hnsw_min_rows = hnsw_min_rows if hnsw_min_rows is not None else (exact_knn_rows or 0)
        self._bootstrapped = False
        self._df_lock = threading.Lock()
        self._df_cache: dict[tuple[tuple[str, int, int], str], int] = {}

    # -- index lifecycle -------------------------------------------------------------

    def create_index(self, tenant_id: str, vector_size: int) -> None:
        if vector_size <= 0:
            raise InvalidRequestError(f"vector size must be positive, got {vector_size}")
        with self._write("create the search index") as conn:
            idx = catalog.locked_index(conn, tenant_id, create_dim=vector_size, same_dim=True)
            if idx is not None and self.hnsw:
                catalog.ensure_hnsw(conn, idx, idx.n_rows, self.hnsw_min_rows)

    def drop_index(self, tenant_id: str) -> None:
        with self._write("drop the search index") as conn:
            idx = catalog.locked_index(conn, tenant_id)
            if idx is None:
                raise NotFoundError(f"search index of tenant {tenant_id!r} does not exist")
            catalog.drop(conn, tenant_id, idx)

    def index_exists(self, tenant_id: str) -> bool:
        table_name(tenant_id)  # validates the id
        with self._read("read the search catalog") as conn:
            return catalog.read_index(conn, tenant_id) is not None

    def close(self) -> None:
        self._pool.close()

    # -- writes ----------------------------------------------------------------------

    def upsert(self, tenant_id: str, records: Sequence[ChunkRecord]) -> int:
        if not records:
            return 0
        batch = list({r.id: r for r in records}.values())  # a repeated id: the last one wins
        with self._write("upsert into the search index") as conn:
            first = checked_vector(batch[0].vector, None, batch[0].id)
            idx = catalog.locked_index(conn, tenant_id, create_dim=first.size)
            if idx is None:
                raise StoreError(f"the search index of tenant {tenant_id!r} could not be created")
            params = [row_params(r, checked_vector(r.vector, idx.dim, r.id)) for r in batch]
            removed = catalog.delete_rows(conn, idx, sql.SQL("id = ANY(%s::text[])"), [[r.id for r in batch]])
            conn.cursor(binary=True).executemany(insert_sql(idx.table), params)
            catalog.add_doc_freqs(conn, idx, [p[7] for p in params])
            catalog.flush_term_index(conn, idx)
            added = [sum(p[8][i] for p in params) for i in range(len(TERM_FIELDS))]
            delta = len(params) - removed[0]
            catalog.update_stats(conn, tenant_id, idx, delta, added, removed[1])
            if self.hnsw:
                catalog.ensure_hnsw(conn, idx, idx.n_rows + delta, self.hnsw_min_rows)
        return len(records)

    def delete(self, tenant_id: str, filters: Filters) -> int:
        if scope_is_empty(filters):
            return 0
        where, params = filter_sql(filters, use_available=False)
        with self._write("delete from the search index") as conn:
            idx = catalog.locked_index(conn, tenant_id)
            if idx is None:
                return 0
            n, lens = catalog.delete_rows(conn, idx, where, params)
            if n:
                catalog.update_stats(conn, tenant_id, idx, -n, [0] * len(TERM_FIELDS), lens)
            return n

    # -- reads -----------------------------------------------------------------------

    def search(self, tenant_id: str, request: SearchRequest) -> list[Hit]:
        table_name(tenant_id)
        with self._read("search the search index") as conn:
            idx = catalog.read_index(conn, tenant_id)
            if idx is None or scope_is_empty(request.filters):
                return []
            qvec = query_vector(request.vector, idx.dim) if request.vector is not None else None
            p = text.plan(request.text) if request.text is not None else None
            scores: dict[str, float] = {}
            top: list[str] = []
            if p is not None and request.text_top_k > 0:
                ranked = self._text_scores(conn, idx, p, request.filters, None)
                scores = dict(ranked)
                top = [id_ for id_, _ in ranked[: request.text_top_k]]
            near: list[str] = []
            if qvec is not None and request.vector_top_k > 0:
                shown = set(top)
                found = nearest(conn, idx, request.filters, qvec, request.vector_top_k, exact_rows=self.exact_knn_rows,
                                hnsw=self.hnsw)
                near = [i for i in found if i not in shown]
                if p is not None and request.text_top_k <= 0 and near:
                    scores = dict(self._text_scores(conn, idx, p, request.filters, near))
            records, cosines = self._fetch(conn, idx, top + near, qvec)
            hits: list[Hit] = []
            for id_ in top + near:
                if id_ in records:
                    cos = cosines.get(id_) if qvec is not None else None
                    hits.append(Hit(records[id_], scores.get(id_), cos))
            return hits

    def get(self, tenant_id: str, ids: Sequence[str]) -> list[ChunkRecord]:
        table_name(tenant_id)
        if not ids:
            return []
        with self._read("read the search index") as conn:
            idx = catalog.read_index(conn, tenant_id)
            if idx is None:
                return []
            records, _ = self._fetch(conn, idx, list(ids), None)
            return [records[id_] for id_ in ids if id_ in records]

    def list_chunks(
        self, tenant_id: str, filters: Filters, *, offset: int = 0, limit: int = 100
    ) -> tuple[list[ChunkRecord], int]:
        if offset < 0 or limit < 0:
            raise InvalidRequestError("offset and limit must not be negative")
        table_name(tenant_id)
        with self._read("list the search index") as conn:
            idx = catalog.read_index(conn, tenant_id)
            if idx is None or scope_is_empty(filters):
                return [], 0
            where, params = filter_sql(filters, use_available=True)
            total = self._count(conn, idx, where, params)
            q = sql.SQL("SELECT {} FROM {} WHERE {} ORDER BY doc_id, ord, id OFFSET %s LIMIT %s").format(
                RECORD_COLUMNS, idx.table, where)
            rows = conn.cursor(binary=True).execute(q, [*params, offset, limit]).fetchall()
            return [to_record(r) for r in rows], total

    def count(self, tenant_id: str, filters: Filters) -> int:
        table_name(tenant_id)
        with self._read("count the search index") as conn:
            idx = catalog.read_index(conn, tenant_id)
            if idx is None or scope_is_empty(filters):
                return 0
            where, params = filter_sql(filters, use_available=True)
            return self._count(conn, idx, where, params)

    def doc_freq(self, tenant_id: str, field_name: str, terms: Sequence[str]) -> tuple[dict[str, int], int]:
        if field_name not in TERM_FIELDS:
            raise InvalidRequestError(f"unknown full-text field {field_name!r}")
        table_name(tenant_id)
        no = TERM_FIELDS.index(field_name)
        with self._read("read the search index") as conn:
            idx = catalog.read_index(conn, tenant_id)
            if idx is None:
                return {t: 0 for t in terms}, 0
            df = self._doc_freqs(conn, idx, [term_key(no, t) for t in terms if t])
            return {t: df.get(term_key(no, t), 0) if t else 0 for t in terms}, idx.n_rows

    # -- internals: connections and the catalog ---------------------------------------

    def _setup(self, conn: Connection) -> None:
        if not self._bootstrapped:
            catalog.bootstrap(conn)
            self._bootstrapped = True
        register_vector(conn)

    @contextmanager
    def _read(self, what: str) -> Iterator[Connection]:
        """A pooled connection in a read-only transaction on one snapshot."""
        with pg_errors(what), self._pool.connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield conn

    @contextmanager
    def _write(self, what: str) -> Iterator[Connection]:
        """A pooled connection in a transaction: committed when the block ends, rolled back on an error."""
        with pg_errors(what), self._pool.connection() as conn, conn.transaction():
            yield conn

    # -- internals: statements ---------------------------------------------------------

    @staticmethod
    def _count(conn: Connection, idx: IndexInfo, where: sql.Composable, params: list[Any]) -> int:
        row = conn.execute(sql.SQL("SELECT count(*) FROM {} WHERE {}").format(idx.table, where), params).fetchone()
        return int(row[0]) if row is not None else 0

    def _fetch(
        self, conn: Connection, idx: IndexInfo, ids: list[str], qvec: np.ndarray | None
    ) -> tuple[dict[str, ChunkRecord], dict[str, float]]:
        """Records of ``ids`` and, with a query vector, their cosine to it."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}, {}
        cos = sql.SQL(", 1 - (embedding <=> %s)") if qvec is not None else sql.SQL("")
        q = sql.SQL("SELECT {}{} FROM {} WHERE id = ANY(%s::text[])").format(RECORD_COLUMNS, cos, idx.table)
        params = [qvec, wanted] if qvec is not None else [wanted]
        records: dict[str, ChunkRecord] = {}
        cosines: dict[str, float] = {}
        for row in conn.cursor(binary=True).execute(q, params):
            records[row[0]] = to_record(row)
            if qvec is not None:
                cosines[row[0]] = cosine(row[9])
        return records, cosines

    def _text_scores(
        self, conn: Connection, idx: IndexInfo, p: text.TextPlan, filters: Filters, ids: list[str] | None
    ) -> list[tuple[str, float]]:
        """(id, score) of the rows passing the filters and the gate (only ``ids`` when given), best first."""
        stats = text.Stats(idx.n_rows, idx.len_sum, self._doc_freqs(conn, idx, p.stat_keys(idx.len_sum)))
        fields = stats.present(p)
        if not fields:
            return []
        where, params = filter_sql(filters, use_available=True)
        cols, col_params = text.fetch_columns(fields)
        by_clause = text.gate_ids_sql(p, stats, idx.table, where, params)
        conds: list[sql.Composable]
        if by_clause is not None:
            # the gate counted per clause through the GIN index: read only the rows passing it
            gate_q, gate_params = by_clause
            # a few small index scans: parallel workers would cost more to start than the scans
            conn.execute("SET LOCAL max_parallel_workers_per_gather = 0")
            conds = [sql.SQL("ctid = ANY(ARRAY({}))").format(gate_q)]
            all_params = [*col_params, *gate_params]
        else:
            gate, gate_params = text.gate_sql(p, stats)
            conds = [where, gate]
            all_params = [*col_params, *params, *gate_params]
        if ids is not None:
            conds.append(sql.SQL("id = ANY(%s::text[])"))
            all_params.append(ids)
        q = sql.SQL("SELECT {} FROM {} WHERE {}").format(cols, idx.table, sql.SQL(" AND ").join(conds))
        # planned for these values: a generic plan (psycopg prepares repeated statements) misjudges
        # the selectivity of the term arrays and of the scope
        rows = conn.cursor(binary=True).execute(q, all_params, prepare=False).fetchall()
        return text.score_rows(p, fields, rows, stats)

    def _doc_freqs(self, conn: Connection, idx: IndexInfo, keys: list[str]) -> dict[str, int]:
        """Rows of the whole index holding each ``tkeys`` entry (cached per index version)."""
        out: dict[str, int] = {}
        with self._df_lock:
            for k in keys:
                if (idx.version, k) in self._df_cache:
                    out[k] = self._df_cache[(idx.version, k)]
        missing = [k for k in dict.fromkeys(keys) if k not in out]
        if missing:
            counted = catalog.doc_freqs(conn, idx, missing)
            out.update(counted)
            with self._df_lock:
                if len(self._df_cache) > _DF_CACHE_MAX:
                    self._df_cache.clear()
                self._df_cache.update({(idx.version, k): n for k, n in counted.items()})
        return out
