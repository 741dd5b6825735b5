"""Tables of the pgvector search store and the ChunkRecord <-> row mapping.

* ``ragloom_docstore_indexes`` (the catalog): one row per tenant index with its table name,
  vector size and the collection statistics BM25 needs (row count, summed field lengths),
  kept exact by every write in the same transaction. Writers lock the tenant's catalog row
  (``FOR UPDATE``), so the writes of one tenant queue one after the other across processes.
* one table per tenant, named ``rlds_<sha256(tenant_id)[:32]>``: a tenant id never reaches
  SQL text, it is only ever a bound parameter or hashed into a quoted identifier.

A row holds its ``seq`` (grows with every write: equal text scores rank in write order, as in
the tantivy engine), the scope keys (``COLLATE "C"``: bytewise order, as Python sorts), the vector
(``vector(dim)``, stored in the row: ``STORAGE MAIN``; HNSW-indexed with ``vector_cosine_ops`` once the
table is large enough, see :func:`ragloom.docstore._pg_catalog.ensure_hnsw`), ``tkeys`` (the distinct
``<field number>:<term>`` keys of the row's term fields, GIN-indexed: the full-text gate),
``lens`` (the number of terms per field), and the stored record: ``terms`` (the term lists,
in the same joined form as the tantivy engine's) and ``payload`` (its JSON payload). Beside it,
``<table>_df`` counts the rows holding each ``tkeys`` entry (BM25's document frequencies).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
from psycopg import sql

from ragloom.dataflow import ChunkRecord
from ragloom.docstore._stored_record import TERM_FIELDS, stored_record
from ragloom.docstore._tantivy_schema import (
    _FIELD_SEP,
    _NULL_MARKERS,
    _decode_payload,
    _join_terms,
    _payload,
    _split_terms,
)
from ragloom.docstore.base import Filters
from ragloom.errors import InvalidRequestError

CATALOG = sql.Identifier("ragloom_docstore_indexes")
SCHEMA_VERSION = 2  # 2: the document-frequency table
BOOTSTRAP_LOCK = 0x72_6C_64_73  # pg_advisory_xact_lock key of the catalog's creation ("rlds")
HNSW_MAX_DIM = 2000  # pgvector's HNSW limit for the vector type: above it, every search is exact
FIELD_SEP = _FIELD_SEP
_LONG_TERM = 200  # longer terms are hashed in tkeys (a GIN entry must stay under ~2.7 kB)

RECORD_COLUMNS = sql.SQL("id, kb_id, doc_id, version_id, embedding, available, ord, terms, payload")
_INSERT_COLUMNS = sql.SQL("id, kb_id, doc_id, version_id, available, ord, embedding, tkeys, lens, terms, payload")


def table_name(tenant_id: str) -> str:
    if not tenant_id or "\x00" in tenant_id or len(tenant_id) > 256:
        raise InvalidRequestError(f"invalid tenant id {tenant_id!r}")
    return "rlds_" + hashlib.sha256(tenant_id.encode("utf-8")).hexdigest()[:32]


def term_key(field_no: int, term: str) -> str:
    """The ``tkeys`` entry of ``term`` in field number ``field_no`` (queries use the same)."""
    if len(term) > _LONG_TERM:
        return f"{field_no}#{hashlib.sha256(term.encode('utf-8')).hexdigest()}"
    return f"{field_no}:{term}"


def catalog_ddl() -> sql.Composed:
    return sql.SQL(
        """CREATE TABLE IF NOT EXISTS {} (
            tenant_id text COLLATE "C" PRIMARY KEY,
            table_name text NOT NULL UNIQUE,
            vector_size integer NOT NULL,
            schema_version integer NOT NULL,
            incarnation bigint NOT NULL,
            n_rows bigint NOT NULL DEFAULT 0,
            len_sum bigint[] NOT NULL,
            generation bigint NOT NULL DEFAULT 0
        )"""
    ).format(CATALOG)


def table_ddl(table: str, dim: int) -> list[sql.Composed]:
    """The tenant table and its scope, version and term indexes (the HNSW index comes later: :func:`hnsw_ddl`)."""
    t = sql.Identifier(table)
    stmts = [
        sql.SQL(
            """CREATE TABLE {} (
                id text COLLATE "C" PRIMARY KEY,
                seq bigint GENERATED ALWAYS AS IDENTITY,
                kb_id text COLLATE "C" NOT NULL,
                doc_id text COLLATE "C" NOT NULL,
                version_id text COLLATE "C" NOT NULL,
                available boolean NOT NULL,
                ord bigint NOT NULL,
                embedding vector({}) NOT NULL,
                tkeys text[] NOT NULL,
                lens integer[] NOT NULL,
                terms text NOT NULL,
                payload bytea NOT NULL
            )"""
        ).format(t, sql.Literal(int(dim))),
        # the vector stays in the row (pgvector's default, EXTERNAL, moves it to the TOAST table once
        # the row outgrows ~2 kB): an exact scan then reads one tuple per row, not a TOAST lookup too
        sql.SQL("ALTER TABLE {} ALTER COLUMN embedding SET STORAGE MAIN").format(t),
        sql.SQL("CREATE INDEX {} ON {} (kb_id, doc_id, ord) INCLUDE (available, version_id)").format(
            sql.Identifier(f"{table}_scope"), t
        ),
        sql.SQL("CREATE INDEX {} ON {} (version_id)").format(sql.Identifier(f"{table}_version"), t),
        sql.SQL("CREATE INDEX {} ON {} USING gin (tkeys)").format(sql.Identifier(f"{table}_tkeys"), t),
        # rows of the table holding each tkeys entry, kept by every write: BM25's document
        # frequencies are then one primary-key lookup per query term, not a count over the GIN index
        sql.SQL('CREATE TABLE {} (k text COLLATE "C" PRIMARY KEY, n bigint NOT NULL)').format(df_table(table)),
    ]
    return stmts


def df_table(table: str) -> sql.Identifier:
    return sql.Identifier(f"{table}_df")


def hnsw_name(table: str) -> str:
    return f"{table}_hnsw"


def hnsw_ddl(table: str) -> sql.Composed:
    return sql.SQL("CREATE INDEX {} ON {} USING hnsw (embedding vector_cosine_ops)").format(
        sql.Identifier(hnsw_name(table)), sql.Identifier(table)
    )


def insert_sql(table: sql.Identifier) -> sql.Composed:
    return sql.SQL("INSERT INTO {} ({}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s::text[], %s::int[], %s, %s)").format(
        table, _INSERT_COLUMNS
    )


def row_params(rec: ChunkRecord, vector: np.ndarray) -> tuple[Any, ...]:
    """The ``INSERT`` parameters of one record (``vector``: the checked float32 vector)."""
    lists = [list(getattr(rec, name)) for name in TERM_FIELDS]
    keys: dict[str, None] = {}
    for no, terms in enumerate(lists):
        for term in terms:
            if "\x00" in term:
                raise InvalidRequestError(f"term {term!r} contains a NUL character")
            if term:
                keys[term_key(no, term)] = None
    terms_text = FIELD_SEP.join(_join_terms(terms) for terms in lists)
    return (
        rec.id, rec.kb_id, rec.doc_id, rec.version_id, bool(rec.available), int(rec.order), vector,
        list(keys), [len(terms) for terms in lists], terms_text, _payload(rec),
    )


def to_record(row: Sequence[Any]) -> ChunkRecord:
    """A record from the :data:`RECORD_COLUMNS` of a row (payload and term fields decoded lazily)."""
    id_, kb_id, doc_id, version_id, vector, available, order, terms, payload = row[:9]
    if hasattr(vector, "to_numpy"):  # pgvector's binary loader gives a Vector
        vector = vector.to_numpy()
    return stored_record(
        (id_, kb_id, doc_id, version_id),
        np.asarray(vector, dtype=np.float32),
        bool(available),
        int(order),
        payload=bytes(payload),
        terms=terms.encode("utf-8"),
        decode_payload=_decode_payload,
        decode_terms=_decode_terms,
        split_terms=_split_terms,
        null_markers=_NULL_MARKERS,
    )


def _decode_terms(raw: bytes) -> list[str]:
    return raw.decode("utf-8").split(FIELD_SEP)


def filter_sql(filters: Filters, *, use_available: bool) -> tuple[sql.Composable, list[Any]]:
    """``WHERE`` conditions matching the rows that pass ``filters``, and their parameters.
    The caller checks :func:`scope_is_empty` first."""
    parts: list[sql.Composable] = [sql.SQL("kb_id = ANY(%s::text[])")]
    params: list[Any] = [list(dict.fromkeys(filters.kb_ids))]
    for column, values in (("doc_id", filters.doc_ids), ("version_id", filters.version_ids), ("id", filters.ids)):
        if values is not None:
            parts.append(sql.SQL("{} = ANY(%s::text[])").format(sql.Identifier(column)))
            params.append(list(dict.fromkeys(values)))
    if filters.exclude_doc_ids:
        parts.append(sql.SQL("NOT (doc_id = ANY(%s::text[]))"))
        params.append(list(dict.fromkeys(filters.exclude_doc_ids)))
    if use_available and filters.available_only:
        parts.append(sql.SQL("available"))
    return sql.SQL(" AND ").join(parts), params
