"""Analyse a chunk into the term fields of a :class:`ChunkRecord`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ragloom.nlp.tokenizer import Analyzer


@dataclass(slots=True)
class ChunkTerms:
    """The analysed term fields of one chunk (the ``ChunkRecord`` fields of the same names).

    ``important_keywords`` are the given keywords normalised (lower case,
    half-width, simplified) and de-duplicated, each kept whole; the other
    fields are analysed terms in text order.
    """

    content_terms: list[str] = field(default_factory=list)
    content_fine_terms: list[str] = field(default_factory=list)
    title_terms: list[str] = field(default_factory=list)
    title_fine_terms: list[str] = field(default_factory=list)
    important_keywords: list[str] = field(default_factory=list)
    important_terms: list[str] = field(default_factory=list)
    question_terms: list[str] = field(default_factory=list)


def analyze_chunk(
    analyzer: Analyzer,
    content: str,
    title: str = "",
    important_keywords: Iterable[str] = (),
    questions: Iterable[str] = (),
) -> ChunkTerms:
    """Analyse a chunk's text, title, keywords and questions with ``analyzer``
    (the same analyser must build the queries, see ``build_fulltext_query``)."""
    content_terms = analyzer.tokenize(content)
    title_terms = analyzer.tokenize(title) if title else []
    keywords = list(dict.fromkeys(k for k in map(analyzer.normalize, important_keywords) if k))
    important_terms = [t for kw in keywords for t in analyzer.tokenize(kw)]
    question_terms = [t for q in questions for t in analyzer.tokenize(q)]
    return ChunkTerms(
        content_terms=content_terms,
        content_fine_terms=analyzer.fine_grained(content_terms),
        title_terms=title_terms,
        title_fine_terms=analyzer.fine_grained(title_terms),
        important_keywords=keywords,
        important_terms=important_terms,
        question_terms=question_terms,
    )
