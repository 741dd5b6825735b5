"""Translation of engine-neutral filters and :class:`FullTextQuery` into tantivy queries.

Filter clauses are wrapped in ``const_score_query(..., 0)`` so they restrict the
rows without adding to the score. The text query is::

    must(filter) AND must(gate) [OR should(phrase_1) ... should(phrase_m)]

where ``gate`` is a boolean query of the single-term clauses with
``minimum_number_should_match = max(1, ceil(msm * n))``. Each clause is a
``disjunction_max`` over its fields (ES ``best_fields``), each field term boosted by the
field boost, the whole clause boosted by the clause boost. Phrases therefore only add
score to rows that pass the gate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import tantivy

from ragloom.docstore._tantivy_schema import TERM_FIELDS, term_token
from ragloom.docstore.base import Clause, Filters, FullTextQuery
from ragloom.errors import InvalidRequestError

Q = tantivy.Query
MUST = tantivy.Occur.Must
SHOULD = tantivy.Occur.Should
MUST_NOT = tantivy.Occur.MustNot


def scope_is_empty(filters: Filters) -> bool:
    """True when the filters can match nothing (empty kb_ids, or an empty id list)."""
    if not filters.kb_ids:
        return True
    return any(v is not None and len(v) == 0 for v in (filters.doc_ids, filters.version_ids, filters.ids))


def filter_query(schema: tantivy.Schema, filters: Filters, *, use_available: bool) -> tantivy.Query:
    """A zero-scoring query matching exactly the rows that pass ``filters``.
    The caller checks :func:`scope_is_empty` first."""
    parts = [(MUST, any_of(schema, "kb_id", filters.kb_ids))]
    for name, values in (
        ("doc_id", filters.doc_ids),
        ("version_id", filters.version_ids),
        ("id", filters.ids),
    ):
        if values is not None:
            parts.append((MUST, any_of(schema, name, values)))
    if filters.exclude_doc_ids:
        parts.append((MUST_NOT, any_of(schema, "doc_id", filters.exclude_doc_ids)))
    if use_available and filters.available_only:
        parts.append((MUST, Q.term_query(schema, "available", True)))
    return Q.const_score_query(Q.boolean_query(parts), 0.0)


def any_of(schema: tantivy.Schema, field: str, values: Sequence[str]) -> tantivy.Query:
    """Rows whose raw ``field`` is one of ``values``. A union of term queries is cheaper
    than a term-set query for a few values (the latter builds a bitset over every row)."""
    unique = list(dict.fromkeys(values))
    if len(unique) == 1:
        return Q.term_query(schema, field, unique[0])
    if len(unique) <= 256:
        return Q.boolean_query([(SHOULD, Q.term_query(schema, field, v)) for v in unique])
    return Q.term_set_query(schema, field, unique)


def gate_size(query: FullTextQuery) -> int:
    """How many single-term clauses a row must match: ``max(1, ceil(msm * n))``."""
    n = sum(1 for c in query.clauses if len(c.terms) == 1)
    # round() guards against 0.3 * 10 = 3.0000000000000004 becoming 4
    return max(1, math.ceil(round(query.minimum_should_match * n, 9)))


def text_query(schema: tantivy.Schema, query: FullTextQuery) -> tantivy.Query | None:
    """The gated text query, or ``None`` when it has no single-term clause (nothing passes)."""
    singles = [c for c in query.clauses if len(c.terms) == 1]
    phrases = [c for c in query.clauses if len(c.terms) > 1]
    if not singles:
        return None
    gate = Q.boolean_query(
        [(SHOULD, _clause_query(schema, query, c)) for c in singles],
        minimum_number_should_match=gate_size(query),
    )
    parts = [(MUST, gate)] + [(SHOULD, _clause_query(schema, query, c)) for c in phrases]
    return Q.boolean_query(parts)


def gated(filter_q: tantivy.Query, text_q: tantivy.Query) -> tantivy.Query:
    return Q.boolean_query([(MUST, filter_q), (MUST, text_q)])


def _clause_query(schema: tantivy.Schema, query: FullTextQuery, clause: Clause) -> tantivy.Query:
    fields = clause.fields if clause.fields is not None else tuple(query.fields)
    per_field = []
    for name in fields:
        if name not in TERM_FIELDS:
            raise InvalidRequestError(f"unknown full-text field {name!r}")
        boost = float(query.fields.get(name, 1.0))
        per_field.append(Q.boost_query(_field_query(schema, name, clause), boost))
    if not per_field:
        return Q.empty_query()
    return Q.boost_query(Q.disjunction_max_query(per_field), float(clause.boost))


def _field_query(schema: tantivy.Schema, name: str, clause: Clause) -> tantivy.Query:
    tokens = [term_token(t) for t in clause.terms]
    if any(not t for t in tokens):
        return Q.empty_query()
    if len(tokens) == 1:
        return Q.term_query(schema, name, tokens[0])
    words: list[str | tuple[int, str]] = list(tokens)
    return Q.phrase_query(schema, name, words, slop=int(clause.slop))
