"""Full text of the pgvector search store: the gate in SQL, BM25 scoring in Python.

A :class:`FullTextQuery` runs in two steps:

1. **Gate, in PostgreSQL.** Each single-term clause becomes the array of its ``tkeys``
   entries (``<field number>:<term>`` for each of its fields); a row passes when
   ``(tkeys && clause_1)::int + ... >= max(1, ceil(msm * n))``, under the scope filters.
   With few candidates (:func:`gate_sql`) that is the ``WHERE`` clause itself, after
   ``tkeys && <every key>`` (so the GIN index finds the candidates); with more
   (:func:`gate_ids_sql`) each clause is one GIN lookup and the rows are counted per
   clause, which never reads a row's (TOASTed) term arrays. Only the rows passing come
   back, and of them only the terms of the fields the query can match in (``split_part``
   of the stored term lists, each term framed by separators), with the field lengths.
2. **Score, here,** vectorised over the rows (a term frequency is one ``str.count`` per
   row; phrases are matched only in rows holding all their terms). BM25 as tantivy computes
   it (k1 = 1.2, b = 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5)), N and the average
   field lengths over the whole tenant index, df counted through the GIN index): a clause scores the best of its fields
   (dis-max) times the field boost, times the clause boost; a row's score is the sum over
   its matching clauses. A phrase clause scores its phrase frequency with the summed idf of
   its terms and only adds to rows that passed the gate; it matches where its terms occur
   in order with at most ``slop`` extra positions between the first and the last.

Terms are atomic and compared exactly (they are analysed already): ``machine learning``
is one term; the empty term matches nothing.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from psycopg import sql

from ragloom.docstore._pg_schema import FIELD_SEP, term_key
from ragloom.docstore._stored_record import TERM_FIELDS
from ragloom.docstore._tantivy_query import gate_size
from ragloom.docstore.base import FullTextQuery
from ragloom.errors import InvalidRequestError

_US = "\x1f"  # the separator of the terms of a field in the stored term lists
K1 = 1.2
SQL_GATE_ROWS = 1_000
B = 0.75
_FIELD_NO = {name: i for i, name in enumerate(TERM_FIELDS)}


@dataclass(frozen=True, slots=True)
class _PlannedClause:
    terms: tuple[str, ...]
    boost: float
    slop: int
    fields: tuple[tuple[int, float], ...]  # (field number, field boost)

    def tkeys(self) -> list[str]:
        return [term_key(no, t) for no, _ in self.fields for t in self.terms if t]


@dataclass(frozen=True, slots=True)
class TextPlan:
    singles: tuple[_PlannedClause, ...]  # those that can match (a term, at least one field)
    phrases: tuple[_PlannedClause, ...]
    need: int  # single-term clauses a row must match

    @property
    def fields(self) -> list[int]:
        """The field numbers any clause reads, ascending."""
        return sorted({no for c in self.singles + self.phrases for no, _ in c.fields})

    def stat_keys(self, len_sum: Sequence[int] | None = None) -> list[str]:
        """Every (field, term) whose document frequency the scores need; with ``len_sum`` (the
        summed field lengths of the index) only those of fields some row has terms in (the
        others' are 0)."""
        return list(dict.fromkeys(
            term_key(no, t) for c in self.singles + self.phrases for no, _ in c.fields for t in c.terms
            if t and (len_sum is None or len_sum[no] > 0)))


def plan(query: FullTextQuery) -> TextPlan | None:
    """The plan of ``query``, or ``None`` when no row can pass its gate."""
    singles: list[_PlannedClause] = []
    phrases: list[_PlannedClause] = []
    for clause in query.clauses:
        names = clause.fields if clause.fields is not None else tuple(query.fields)
        for name in names:
            if name not in _FIELD_NO:
                raise InvalidRequestError(f"unknown full-text field {name!r}")
        fields = tuple((_FIELD_NO[n], float(query.fields.get(n, 1.0))) for n in dict.fromkeys(names))
        planned = _PlannedClause(tuple(clause.terms), float(clause.boost), int(clause.slop), fields)
        if not fields or any(not t for t in clause.terms):
            continue  # matches nothing (a single one still counts in n below)
        (singles if len(clause.terms) == 1 else phrases).append(planned)
    if not any(len(c.terms) == 1 for c in query.clauses):
        return None
    need = gate_size(query)
    if need > len(singles):
        return None
    return TextPlan(tuple(singles), tuple(phrases), need)


@dataclass(frozen=True, slots=True)
class Stats:
    """Collection statistics of a tenant index: rows, summed length per field, document frequencies."""

    n_rows: int
    len_sum: Sequence[int]
    df: Mapping[str, int]

    def present(self, p: TextPlan) -> list[int]:
        """The fields of :attr:`TextPlan.fields` where some row holds a term of the query."""
        return [no for no in p.fields if any(self.df.get(term_key(no, t), 0) for c in p.singles + p.phrases
                                             for t in c.terms if t)]


def gate_sql(p: TextPlan, stats: Stats) -> tuple[sql.Composable, list[Any]]:
    """``WHERE`` conditions of the gate, and their parameters.

    ``tkeys && <every key>`` (the GIN index) always; the count of matching clauses only when
    the candidates are few (summed document frequencies at most :data:`SQL_GATE_ROWS`): per row
    it costs an array scan per clause. Larger candidate sets go through :func:`gate_ids_sql`
    instead (when the gate needs more than one clause); the scoring checks the gate again anyway."""
    every = list(dict.fromkeys(k for c in p.singles for k in c.tkeys()))
    parts: list[sql.Composable] = [sql.SQL("tkeys && %s::text[]")]
    params: list[Any] = [every]
    if p.need > 1 and sum(stats.df.get(k, 0) for k in every) <= SQL_GATE_ROWS:
        count = sql.SQL(" + ").join(sql.SQL("(tkeys && %s::text[])::int") for _ in p.singles)
        parts.append(sql.SQL("({}) >= %s").format(count))
        params.extend(c.tkeys() for c in p.singles)
        params.append(p.need)
    return sql.SQL(" AND ").join(parts), params


def gate_ids_sql(
    p: TextPlan, stats: Stats, table: sql.Composable, where: sql.Composable, where_params: Sequence[Any]
) -> tuple[sql.Composable, list[Any]] | None:
    """A statement giving the ``ctid`` of every row passing ``where`` and the gate, or ``None``
    when :func:`gate_sql` alone should run (one clause needed, or few candidates).

    One GIN lookup per single-term clause (``UNION ALL``), the rows counted per ``ctid``: no row's
    term arrays are scanned, and only the rows passing the gate are read afterwards (with a TID
    scan). A repeated clause counts once per occurrence, as in the scoring."""
    every = list(dict.fromkeys(k for c in p.singles for k in c.tkeys()))
    if p.need <= 1 or sum(stats.df.get(k, 0) for k in every) <= SQL_GATE_ROWS:
        return None
    one = sql.SQL("SELECT ctid AS t FROM {} WHERE {} AND tkeys && %s::text[]").format(table, where)
    q = sql.SQL("SELECT t FROM ({}) u GROUP BY t HAVING count(*) >= %s").format(
        sql.SQL(" UNION ALL ").join(one for _ in p.singles))
    params: list[Any] = []
    for c in p.singles:
        params.extend(where_params)
        params.append(c.tkeys())
    params.append(p.need)
    return q, params


def fetch_columns(fields: Sequence[int]) -> tuple[sql.Composable, list[Any]]:
    """``id, seq`` then, per field of ``fields``, its length and its terms (``<US>t1<US>t2<US>``,
    as stored plus a closing separator: see :func:`_term_freq`)."""
    cols: list[sql.Composable] = [sql.SQL("id"), sql.SQL("seq")]
    params: list[Any] = []
    for no in fields:
        cols.append(sql.SQL("lens[{}]").format(sql.Literal(no + 1)))
        cols.append(sql.SQL("split_part(terms, %s, %s) || %s"))
        params.extend((FIELD_SEP, no + 1, _US))
    return sql.SQL(", ").join(cols), params


def score_rows(
    p: TextPlan, fields: Sequence[int], rows: Sequence[Sequence[Any]], stats: Stats
) -> list[tuple[str, float]]:
    """(id, BM25 score) of the fetched rows (as :func:`fetch_columns` selects ``fields``) that
    pass the gate, best first; equal scores in write order (``seq``). Vectorised over the rows:
    a term's frequency in a field is one ``str.count`` per row."""
    if not rows:
        return []
    cols = list(zip(*rows, strict=True))
    size = len(rows)
    n = max(stats.n_rows, 1)
    col = {no: 2 + 2 * i for i, no in enumerate(fields)}  # field -> its length column; terms follow
    tfs: dict[tuple[int, str], np.ndarray] = {}

    def tf(no: int, term: str) -> np.ndarray:
        if (no, term) not in tfs:
            if no not in col or not stats.df.get(term_key(no, term), 0):
                tfs[no, term] = np.zeros(size)
            else:
                tfs[no, term] = _term_freq(cols[col[no] + 1], term)
        return tfs[no, term]

    def idf(no: int, term: str) -> float:
        df = stats.df.get(term_key(no, term), 0)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def norm(no: int, freq: np.ndarray) -> np.ndarray:
        avgdl = max(stats.len_sum[no] / n, 1e-9)
        dl = np.asarray(cols[col[no]], dtype=np.float64)
        return freq * (K1 + 1.0) / (freq + K1 * (1.0 - B + B * dl / avgdl))

    score = np.zeros(size)
    matched = np.zeros(size, dtype=np.int64)
    for c in p.singles:
        best = np.zeros(size)
        hit = np.zeros(size, dtype=bool)
        for no, fboost in c.fields:
            freq = tf(no, c.terms[0])
            if freq.any():
                best = np.maximum(best, fboost * idf(no, c.terms[0]) * norm(no, freq))
                hit |= freq > 0
        score += c.boost * best
        matched += hit
    passed = matched >= p.need  # the SQL gate let only these through; the scores must not depend on it
    for c in p.phrases:
        best = np.zeros(size)
        for no, fboost in c.fields:
            maybe = passed.copy()
            for t in c.terms:
                maybe &= tf(no, t) > 0
            rows_in = np.nonzero(maybe)[0]
            if not len(rows_in):
                continue
            texts = cols[col[no] + 1]
            freq = np.zeros(size)
            freq[rows_in] = [phrase_freq(texts[i].split(_US)[1:-1], c.terms, c.slop) for i in rows_in]
            weight = sum(idf(no, t) for t in c.terms)
            best = np.maximum(best, np.where(freq > 0, fboost * weight * norm(no, freq), 0.0))
        score += c.boost * best
    keep = np.nonzero(passed)[0]
    seq = np.asarray(cols[1], dtype=np.int64)[keep]
    order = keep[np.lexsort((seq, -score[keep]))]
    ids = cols[0]
    return [(ids[i], float(score[i])) for i in order]


def _term_freq(texts: Sequence[str], term: str) -> np.ndarray:
    """How often ``term`` occurs in each of ``texts`` (``<US>t1<US>t2<US>``), by ``str.count``:
    ``<US>term<US>`` counts every other one of a run of repeats (``ceil(r / 2)``) and
    ``<US>term<US>term<US>`` the pairs (``floor(r / 2)``), together every occurrence."""
    one, two = _US + term + _US, _US + term + _US + term + _US
    return np.fromiter((t.count(one) + t.count(two) if one in t else 0 for t in texts), np.float64, len(texts))


def phrase_freq(tokens: Sequence[str], terms: Sequence[str], slop: int) -> int:
    """How many positions start a match of ``terms``: in order, with at most ``slop`` extra
    positions between the first and the last term (0 = adjacent)."""
    positions = []
    for term in terms:
        found = [i for i, tok in enumerate(tokens) if tok == term]
        if not found:
            return 0
        positions.append(found)
    count = 0
    for start in positions[0]:
        prev = start
        for later in positions[1:]:
            j = bisect_right(later, prev)  # the nearest next occurrence keeps the span smallest
            if j == len(later):
                return count  # no later start can match either
            prev = later[j]
        if prev - start - (len(terms) - 1) <= slop:
            count += 1
    return count
