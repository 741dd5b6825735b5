"""Build the full-text query for a question (REFERENCE §4.4).

The question is normalised and tokenised with the same :class:`Analyzer` that
analysed the chunks, compounds of letters are split into their words
(``boundary-layer`` → boundari layer, see :func:`split_compounds`), stop words are
removed, the remaining terms are weighted (:class:`TermWeigher`), and an
engine-neutral :class:`FullTextQuery` is built:

* every query term → a single-term clause boosted by its weight (these are the
  clauses the ``minimum_should_match`` gate counts);
* a term with fine pieces (``中华人民共和国`` → 中华 华人 人民 共和 共和国,
  ``x-200`` → x 200) → a phrase of its pieces on the fine fields, boost ``w``,
  and the same phrase with slop 2, boost ``w/2``;
* synonyms (optional) → single-term clauses boosted ``w/5`` (Chinese) or
  ``w/4`` (other), or phrases when a synonym analyses to several terms;
* "Chinese" questions: per whitespace segment with more than one term, a
  proximity phrase of the segment's terms, slop 2, boost 1.5;
* other questions: a phrase per adjacent term pair, boost
  ``PAIR_BOOST * max(w_i, w_j)`` (0.25), with a slop equal to the number of stop
  words dropped between the two.

The gate: ``min_match`` 0.3 for "Chinese" questions, none (any one term) for the
others, as in the reference, which sends its English query with no
``minimum_should_match``. A long question is a paraphrase, and a row holding only
its two rarest terms is often the best one: a 30% gate dropped such rows before
BM25 could rank them (Cranfield: 40 relevant rows of BM25's top 10 gone; nDCG@10
0.309 without the gate against 0.292 with it, all else equal).

A question is "Chinese" when it has at most 3 whitespace tokens or at least 70%
of its tokens are not pure ASCII letters (so short English questions take the
Chinese branch too, as in the reference).

Departures from the reference: weights are normalised over the whole question
(not per segment); synonym clauses do not make the gate stricter (the gate
fraction is rescaled so that the required number of matches is the one the
question's own terms give); the reference's merging of runs of short tokens is
not done, because merged terms would not match the indexed terms; pair phrases
allow for the stop words the index keeps between them; the segment-level
synonym expansion is left out; compounds of letters are split (the index keeps
them whole in the coarse fields, so a whole compound in the query never matched
a chunk writing the words apart); pair phrases are boosted ``0.25 * max(w_i,
w_j)``, not the reference's ``2 * max``: a phrase's BM25 score already sums both
terms' idf, so at ``2 *`` every adjacent pair outweighed several more of the
question's terms (Cranfield nDCG@10, everything else as now: 0.318 at 2, 0.334
at 1, 0.340 at 0.5, 0.342 at 0.2 to 0.3, 0.336 without pairs).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from ragloom.docstore.base import Clause, FullTextQuery
from ragloom.nlp.term_weight import TermWeigher
from ragloom.nlp.tokenizer import Analyzer

FINE_FIELDS: tuple[str, ...] = ("title_fine_terms", "content_fine_terms")
MAX_KEYWORDS = 32
CHINESE_MIN_MATCH = 0.3  # the gate of a "Chinese" question (the reference's)
OTHER_MIN_MATCH = 0.0  # the gate of the others: none, any one term (the reference sends none)
PAIR_BOOST = 0.25  # adjacent-pair phrase boost, x max(w_i, w_j) (the reference's 2 swamps the terms)
MAX_SEGMENTS = 256

Synonyms = Mapping[str, Sequence[str]] | Callable[[str], Sequence[str]]
_ASCII_WORD = re.compile(r"^[a-z]+$")


@dataclass(slots=True)
class QueryAnalysis:
    """The analysed question.

    ``fulltext`` is the query for the docstore; ``keywords`` the weighted
    query terms (question order, unique, at most 32) for token similarity;
    ``gate_terms`` how many clauses of ``fulltext`` are the question's own
    terms (the rest of its single-term clauses are synonyms). ``fulltext`` has
    no clauses only when the question holds no letter or digit at all.
    """

    fulltext: FullTextQuery
    keywords: list[tuple[str, float]]
    is_chinese: bool
    normalized: str
    min_match: float
    gate_terms: int
    synonym_clauses: int = 0
    terms: list[str] = field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not self.fulltext.clauses

    def with_min_match(self, min_match: float) -> QueryAnalysis:
        """The same query with another gate fraction (the retriever retries with 0.1)."""
        msm = _gate_fraction(min_match, self.gate_terms, self.synonym_clauses)
        fulltext = replace(self.fulltext, minimum_should_match=msm)
        return replace(self, fulltext=fulltext, min_match=min_match)


def is_chinese_query(normalized: str) -> bool:
    """≤ 3 whitespace tokens, or ≥ 70% of tokens not pure ASCII letters."""
    tokens = normalized.split()
    if len(tokens) <= 3:
        return True
    other = sum(1 for t in tokens if not _ASCII_WORD.match(t))
    return other / len(tokens) >= 0.7


def build_fulltext_query(
    question: str,
    analyzer: Analyzer,
    weigher: TermWeigher,
    *,
    min_match: float | None = None,
    synonyms: Synonyms | None = None,
) -> QueryAnalysis:
    """Analyse ``question`` into a :class:`QueryAnalysis` (see the module docstring).

    ``min_match``: the gate fraction; ``None`` = :data:`CHINESE_MIN_MATCH` for a "Chinese"
    question, :data:`OTHER_MIN_MATCH` (any one term) for the others."""
    normalized = analyzer.normalize(question)
    chinese = is_chinese_query(normalized)
    if min_match is None:
        min_match = CHINESE_MIN_MATCH if chinese else OTHER_MIN_MATCH
    segments = _segments(normalized, chinese)
    seg_terms = [_query_terms(analyzer, s) for s in segments]
    all_terms = list(dict.fromkeys(t for terms in seg_terms for t in terms))
    if not all_terms:  # only stop words: fall back to the raw terms
        seg_terms = [split_compounds(analyzer, analyzer.tokenize(s)) for s in segments]
        all_terms = list(dict.fromkeys(t for terms in seg_terms for t in terms))
    weights = dict(weigher.weights(all_terms))
    lookup = _synonym_lookup(synonyms)

    clauses = [Clause((t,), boost=weights[t]) for t in all_terms]
    syn_clauses = _synonym_clauses(analyzer, all_terms, weights, lookup, 0.2 if chinese else 0.25)
    clauses += syn_clauses
    clauses += _fine_clauses(analyzer, all_terms, weights)
    if chinese:
        clauses += [Clause(tuple(ts), boost=1.5, slop=2) for ts in seg_terms if len(ts) > 1]
    else:
        clauses += _bigram_clauses(split_compounds(analyzer, analyzer.tokenize(normalized)), weights)

    n_syn = sum(1 for c in syn_clauses if len(c.terms) == 1)
    fulltext = FullTextQuery(
        clauses=clauses,
        minimum_should_match=_gate_fraction(min_match, len(all_terms), n_syn),
    )
    return QueryAnalysis(
        fulltext=fulltext,
        keywords=[(t, weights[t]) for t in all_terms[:MAX_KEYWORDS]],
        is_chinese=chinese,
        normalized=normalized,
        min_match=min_match,
        gate_terms=len(all_terms),
        synonym_clauses=n_syn,
        terms=all_terms,
    )


def _segments(normalized: str, chinese: bool) -> list[str]:
    """Whitespace segments; runs of consecutive pure-Latin tokens merged into one."""
    if not chinese:
        return [normalized] if normalized else []
    segments: list[str] = []
    latin_run = False
    for token in normalized.split():
        latin = _ASCII_WORD.match(token) is not None
        if latin and latin_run:
            segments[-1] += " " + token
        else:
            segments.append(token)
        latin_run = latin
    return segments[:MAX_SEGMENTS]


def _query_terms(analyzer: Analyzer, text: str) -> list[str]:
    return analyzer.remove_stop_words(split_compounds(analyzer, analyzer.tokenize(text)))


def split_compounds(analyzer: Analyzer, terms: Sequence[str]) -> list[str]:
    """``terms`` with each compound of letters only (``boundary-layer``, ``two-dimensional``,
    ``and/or``) replaced by its stemmed parts; codes with digits (``x-200``, ``v2.5``) stay whole.

    The index keeps such a compound as one coarse term, so a query holding it whole would miss
    every chunk that writes the parts apart (``boundary layer``); the parts match those in
    ``content_terms`` and the hyphenated form in ``content_fine_terms``, and the pair phrases
    reward them being adjacent."""
    out: list[str] = []
    for term in terms:
        pieces = analyzer.fine_pieces(term)
        if len(pieces) > 1 and all(_ASCII_WORD.match(p) for p in pieces):
            out.extend(pieces)
        else:
            out.append(term)
    return out


def _gate_fraction(min_match: float, gate_terms: int, synonym_clauses: int) -> float:
    """Fraction of all single-term clauses that requires ``ceil(min_match * gate_terms)``."""
    if synonym_clauses == 0 or gate_terms == 0:
        return min_match
    required = max(1, math.ceil(min_match * gate_terms))
    return (required - 0.5) / (gate_terms + synonym_clauses)


def _synonym_lookup(synonyms: Synonyms | None) -> Callable[[str], Sequence[str]]:
    if synonyms is None:
        return lambda _term: ()
    if isinstance(synonyms, Mapping):
        return lambda term: synonyms.get(term, ())
    return synonyms


def _synonym_clauses(
    analyzer: Analyzer,
    terms: list[str],
    weights: dict[str, float],
    lookup: Callable[[str], Sequence[str]],
    factor: float,
) -> list[Clause]:
    seen = set(terms)
    clauses: list[Clause] = []
    for term in terms:
        for syn in list(lookup(term))[:8]:
            syn_terms = tuple(analyzer.tokenize(syn))
            key = " ".join(syn_terms)
            if not syn_terms or key in seen:
                continue
            seen.add(key)
            clauses.append(Clause(syn_terms, boost=weights[term] * factor))
    return clauses


def _fine_clauses(analyzer: Analyzer, terms: list[str], weights: dict[str, float]) -> list[Clause]:
    clauses: list[Clause] = []
    for term in terms:
        pieces = tuple(analyzer.fine_pieces(term))
        if len(pieces) > 1:
            w = weights[term]
            clauses.append(Clause(pieces, boost=w, fields=FINE_FIELDS))
            clauses.append(Clause(pieces, boost=w / 2, slop=2, fields=FINE_FIELDS))
    return clauses


def _bigram_clauses(tokens: list[str], weights: dict[str, float]) -> list[Clause]:
    """Phrase per adjacent pair of query terms. ``tokens`` are the question's
    tokens *with* stop words: the index keeps stop words, so a pair that had
    k stop words between them in the question gets slop k (at most 3)."""
    clauses: list[Clause] = []
    seen: set[tuple[str, str]] = set()
    prev: str | None = None
    gap = 0
    for tok in tokens:
        if tok not in weights:
            gap += 1
            continue
        if prev is not None and prev != tok and (prev, tok) not in seen:
            seen.add((prev, tok))
            boost = PAIR_BOOST * max(weights[prev], weights[tok])
            clauses.append(Clause((prev, tok), boost=boost, slop=min(gap, 3)))
        prev, gap = tok, 0
    return clauses
