"""The search store ("docstore") interface.

The docstore is a *projection* of the metadata DB and object store: everything
in it can be rebuilt. It holds one index per tenant; each row is a
:class:`ChunkRecord`. Engines implement :class:`DocStore`; the embedded default
is tantivy + exact KNN (``ragloom.docstore.tantivy_store``). Every engine must
pass the conformance suite in ``tests/docstore/conformance.py``.

Queries are engine-neutral: :class:`FullTextQuery` is a list of weighted
clauses (a term, or a phrase with slop) searched over weighted fields, with a
``minimum_should_match`` fraction; the engine translates it into its own syntax.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from ragloom.dataflow import ChunkRecord

# Searchable text fields and their default boosts (REFERENCE §4.4). Each holds
# whitespace-separated, already analysed terms (ragloom.nlp produces them).
DEFAULT_FIELD_BOOSTS: dict[str, float] = {
    "title_terms": 10.0,
    "title_fine_terms": 5.0,
    "important_keywords": 30.0,
    "important_terms": 20.0,
    "question_terms": 20.0,
    "content_terms": 2.0,
    "content_fine_terms": 1.0,
}


@dataclass(frozen=True, slots=True)
class Clause:
    """One weighted clause: a single term, or a phrase (``len(terms) > 1``).

    A phrase matches when its terms occur within ``slop`` positions of each
    other, in order. ``fields`` restricts the clause to some fields (``None`` =
    every field of the query).
    """

    terms: tuple[str, ...]
    boost: float = 1.0
    slop: int = 0
    fields: tuple[str, ...] | None = None


@dataclass(slots=True)
class FullTextQuery:
    """Disjunction of clauses over weighted fields.

    A row passes the *gate* when at least ``max(1, ceil(minimum_should_match * n))``
    of the ``n`` single-term clauses match (in any of the fields). Phrase clauses
    never count toward the gate; they only add score to rows that pass it.
    """

    clauses: list[Clause]
    fields: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_FIELD_BOOSTS))
    minimum_should_match: float = 0.3


@dataclass(slots=True)
class Filters:
    """Scope applied *before* ranking. Empty ``kb_ids`` means an empty scope:
    the search returns nothing (it never widens to everything)."""

    kb_ids: Sequence[str]
    doc_ids: Sequence[str] | None = None
    version_ids: Sequence[str] | None = None
    ids: Sequence[str] | None = None
    available_only: bool = True
    # rows of these documents never pass (a caller's unreadable documents: source permissions)
    exclude_doc_ids: Sequence[str] | None = None


@dataclass(slots=True)
class SearchRequest:
    filters: Filters
    text: FullTextQuery | None = None
    vector: np.ndarray | None = None
    text_top_k: int = 64
    vector_top_k: int = 64


@dataclass(slots=True)
class Hit:
    """A search result. ``text_score`` is the engine's raw full-text score
    (``None`` when the row did not pass the text gate); ``vector_score`` is the
    cosine similarity to the query vector (always filled when a vector was
    given, also for rows found by text only)."""

    record: ChunkRecord
    text_score: float | None
    vector_score: float | None


@runtime_checkable
class DocStore(Protocol):
    """Contract of a search store engine.

    * Indexes are per tenant. Methods taking ``tenant_id`` raise
      :class:`ragloom.errors.NotFoundError` only from :meth:`drop_index`; every
      other method treats a missing index as empty (search returns ``[]``,
      delete returns 0) and :meth:`upsert` creates it.
    * Writes are durable and visible to every process (including other worker
      processes) when the method returns. A chunk is searchable by both text
      and vector or by neither: never by one only, also after a crash.
    * Several processes may call :meth:`upsert` and :meth:`delete` on the same
      tenant at once; no write is lost or duplicated.
    """

    name: str

    def create_index(self, tenant_id: str, vector_size: int) -> None:
        """Create the tenant's index; does nothing when it exists with the same vector size.
        Raises ``StoreError`` when it exists with another vector size."""
        ...

    def drop_index(self, tenant_id: str) -> None:
        """Remove the tenant's index and all its rows. ``NotFoundError`` if absent."""
        ...

    def index_exists(self, tenant_id: str) -> bool: ...

    def upsert(self, tenant_id: str, records: Sequence[ChunkRecord]) -> int:
        """Insert or replace rows by id, atomically for the whole batch; returns the count.
        Raises ``InvalidRequestError`` when a vector has the wrong size."""
        ...

    def delete(self, tenant_id: str, filters: Filters) -> int:
        """Delete every row matching ``filters`` (``available_only`` is ignored);
        returns how many were deleted. Empty ``kb_ids`` deletes nothing."""
        ...

    def search(self, tenant_id: str, request: SearchRequest) -> list[Hit]:
        """Hybrid recall over the rows passing ``request.filters``.

        Returns the union of (a) the ``text_top_k`` best rows by full-text score
        among those passing the text gate and (b) the ``vector_top_k`` rows
        nearest to ``request.vector`` (exact cosine) among all filter-passing
        rows. Each row appears once. Order: text hits by descending text score,
        then vector-only hits by descending cosine. Either part is skipped when
        its query is ``None``.
        """
        ...

    def get(self, tenant_id: str, ids: Sequence[str]) -> list[ChunkRecord]:
        """Rows by id, in the order asked; unknown ids are left out. Unavailable rows included."""
        ...

    def list_chunks(
        self, tenant_id: str, filters: Filters, *, offset: int = 0, limit: int = 100
    ) -> tuple[list[ChunkRecord], int]:
        """Rows passing ``filters`` ordered by (doc_id, order); returns (page, total)."""
        ...

    def count(self, tenant_id: str, filters: Filters) -> int: ...

    def doc_freq(self, tenant_id: str, field_name: str, terms: Sequence[str]) -> tuple[dict[str, int], int]:
        """Document frequency of each term in one field, and the number of rows in the index."""
        ...

    def close(self) -> None: ...
