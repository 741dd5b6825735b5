"""The catalog of the pgvector search store: which tenant indexes exist, their tables and statistics.

Every function runs in the caller's transaction. Writers go through :func:`locked_index`,
which locks the tenant's catalog row until their commit: the writes of one tenant queue, in
every process, and the BM25 statistics they update stay exact.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import sql

from ragloom.docstore._pg_conn import Connection
from ragloom.docstore._pg_schema import (
    BOOTSTRAP_LOCK,
    CATALOG,
    HNSW_MAX_DIM,
    SCHEMA_VERSION,
    catalog_ddl,
    df_table,
    hnsw_ddl,
    hnsw_name,
    table_ddl,
    table_name,
)
from ragloom.docstore._stored_record import TERM_FIELDS
from ragloom.errors import StoreError

log = logging.getLogger(__name__)

HNSW_BUILD_MEMORY = "1GB"  # maintenance_work_mem of an HNSW build: 100k 384-d rows need ~250 MB
_COLUMNS = "table_name, vector_size, n_rows, len_sum, generation, incarnation, schema_version"


class IndexInfo:
    """A tenant index as its catalog row describes it."""

    __slots__ = ("table", "dim", "n_rows", "len_sum", "version")

    def __init__(self, row: Sequence[Any]) -> None:
        table, dim, n_rows, len_sum, generation, incarnation, schema_version = row
        if schema_version != SCHEMA_VERSION:
            raise StoreError(f"search table {table} has schema version {schema_version}, not {SCHEMA_VERSION}: "
                             "reindex the tenant")
        self.table = sql.Identifier(table)
        self.dim = int(dim)
        self.n_rows = int(n_rows)
        self.len_sum = [int(x) for x in len_sum]
        # changes with every write, and when the index is dropped and made again
        self.version = (str(table), int(incarnation), int(generation))


def bootstrap(conn: Connection) -> None:
    """Create the ``vector`` extension (when missing) and the catalog, once per database."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (BOOTSTRAP_LOCK,))
        if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() is None:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute(catalog_ddl())


def read_index(conn: Connection, tenant_id: str, *, lock: bool = False) -> IndexInfo | None:
    q = sql.SQL("SELECT " + _COLUMNS + " FROM {} WHERE tenant_id = %s" + (" FOR UPDATE" if lock else "")).format(
        CATALOG)
    row = conn.execute(q, (tenant_id,)).fetchone()
    return IndexInfo(row) if row is not None else None


def locked_index(
    conn: Connection, tenant_id: str, *, create_dim: int | None = None, same_dim: bool = False
) -> IndexInfo | None:
    """The tenant's index, its catalog row locked until commit; created (vector size ``create_dim``,
    no HNSW index yet: :func:`ensure_hnsw`) when missing and a size is given. With ``same_dim``,
    ``StoreError`` when it exists with another size."""
    table = table_name(tenant_id)
    idx = read_index(conn, tenant_id, lock=True)
    if idx is None and create_dim is not None:
        # concurrent creators: the second INSERT waits for the first to commit, then does nothing — on either
        # unique key (the table's name is the tenant's: which key PostgreSQL checks first is not fixed, and an
        # arbiter naming only tenant_id let the table name's violation through)
        inserted = conn.execute(
            sql.SQL(
                "INSERT INTO {} (tenant_id, table_name, vector_size, schema_version, incarnation, len_sum) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING tenant_id"
            ).format(CATALOG),
            (tenant_id, table, create_dim, SCHEMA_VERSION, time.time_ns() // 1000, [0] * len(TERM_FIELDS)),
        ).fetchone()
        if inserted is not None:
            for stmt in table_ddl(table, create_dim):
                conn.execute(stmt)
            if create_dim > HNSW_MAX_DIM:
                log.warning("vector size %d is above pgvector's HNSW limit: searches of tenant %r scan exactly",
                            create_dim, tenant_id)
        idx = read_index(conn, tenant_id, lock=True)
    if same_dim and idx is not None and idx.dim != create_dim:
        raise StoreError(f"index of tenant {tenant_id!r} exists with vector size {idx.dim}, not {create_dim}")
    return idx


def ensure_hnsw(conn: Connection, idx: IndexInfo, n_rows: int, min_rows: int) -> bool:
    """Build the table's HNSW index, in the writer's transaction, once it holds ``min_rows`` rows;
    True when the index exists (or was just built).

    Below that size every search scans exactly (:mod:`._pg_vector`), so an index would only
    be kept up to date for nothing: HNSW maintenance is most of a write's cost (~10 ms a
    row into a 20k-row table, against ~0.2 ms without it). Built in one pass over the rows
    it costs far less than the same rows inserted one by one. The build holds a ``SHARE``
    lock on the table: searches go on, the tenant's writes (queued on its catalog row anyway)
    wait for it."""
    if idx.dim > HNSW_MAX_DIM or n_rows < min_rows:
        return False
    name = hnsw_name(idx.version[0])
    row = conn.execute("SELECT to_regclass(%s)", (name,)).fetchone()
    if row is not None and row[0] is not None:
        return True
    started = time.perf_counter()
    # the graph is built in memory when it fits (otherwise on disk, many times slower)
    conn.execute(sql.SQL("SET LOCAL maintenance_work_mem = {}").format(sql.Literal(HNSW_BUILD_MEMORY)))
    conn.execute(hnsw_ddl(idx.version[0]))
    log.info("search table %s: HNSW index built over %d rows in %.1f s", idx.version[0], n_rows,
             time.perf_counter() - started)
    return True


def drop(conn: Connection, tenant_id: str, idx: IndexInfo) -> None:
    conn.execute(sql.SQL("DROP TABLE {}, {}").format(idx.table, df_table(idx.version[0])))
    conn.execute(sql.SQL("DELETE FROM {} WHERE tenant_id = %s").format(CATALOG), (tenant_id,))


def delete_rows(conn: Connection, idx: IndexInfo, where: sql.Composable, params: list[Any]) -> tuple[int, list[int]]:
    """Delete the matching rows, and their term keys from the document frequencies; (how many,
    their summed field lengths)."""
    sums = sql.SQL(", ").join(
        sql.SQL("coalesce(sum(lens[{}]), 0)").format(sql.Literal(i + 1)) for i in range(len(TERM_FIELDS))
    )
    q = sql.SQL(
        "WITH d AS (DELETE FROM {} WHERE {} RETURNING lens, tkeys), "
        "c AS (SELECT k, count(*) AS n FROM d, unnest(d.tkeys) AS k GROUP BY k), "
        "u AS (UPDATE {} AS f SET n = f.n - c.n FROM c WHERE f.k = c.k) "
        "SELECT count(*), {} FROM d"
    ).format(idx.table, where, df_table(idx.version[0]), sums)
    row = conn.execute(q, params).fetchone()
    if row is None:
        raise StoreError("DELETE ... RETURNING gave no row")
    return int(row[0]), [int(x) for x in row[1:]]


def add_doc_freqs(conn: Connection, idx: IndexInfo, row_keys: Sequence[Sequence[str]]) -> None:
    """Count the inserted rows' term keys (``tkeys`` of each row) into the document frequencies."""
    counts = Counter(k for keys in row_keys for k in keys)
    if not counts:
        return
    keys = sorted(counts)  # one order for every writer: row locks taken in it
    conn.execute(
        sql.SQL("INSERT INTO {0} AS f (k, n) SELECT * FROM unnest(%s::text[], %s::bigint[]) "
                "ON CONFLICT (k) DO UPDATE SET n = f.n + EXCLUDED.n").format(df_table(idx.version[0])),
        (keys, [counts[k] for k in keys]),
    )


def doc_freqs(conn: Connection, idx: IndexInfo, keys: Sequence[str]) -> dict[str, int]:
    """Rows of the index holding each term key (0 for a key no row holds)."""
    q = sql.SQL("SELECT k, n FROM {} WHERE k = ANY(%s::text[])").format(df_table(idx.version[0]))
    found = {str(k): int(n) for k, n in conn.execute(q, (list(keys),), prepare=False).fetchall()}
    return {k: found.get(k, 0) for k in keys}


def flush_term_index(conn: Connection, idx: IndexInfo) -> None:
    """Move the GIN pending list of the ``tkeys`` index into the index proper, in the writer's
    transaction. Rows enter the pending list first (``fastupdate``: a cheap append), but every
    search scans that whole list: left to autovacuum it reaches megabytes after a bulk load and
    multiplies the cost of each clause lookup. Merged once per batch it costs about what the
    append saved. A role that may not maintain the index (not its owner) leaves it to autovacuum."""
    try:
        with conn.transaction():  # a savepoint: a refusal must not abort the write
            conn.execute("SELECT gin_clean_pending_list(%s::regclass)", (idx.version[0] + "_tkeys",))
    except psycopg.errors.InsufficientPrivilege:
        log.debug("cannot flush the GIN pending list of %s: not the owner", idx.version[0])


def update_stats(
    conn: Connection, tenant_id: str, idx: IndexInfo, delta_rows: int, added: list[int], removed: list[int]
) -> None:
    """Record a write: rows added (negative: removed) and the field lengths added and removed."""
    len_sum = [s + a - r for s, a, r in zip(idx.len_sum, added, removed, strict=True)]
    conn.execute(
        sql.SQL("UPDATE {} SET n_rows = n_rows + %s, len_sum = %s, generation = generation + 1 "
                "WHERE tenant_id = %s").format(CATALOG),
        (delta_rows, len_sum, tenant_id),
    )
