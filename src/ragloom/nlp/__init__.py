"""Natural-language processing for search: analysis, term weights, queries, similarity.

Typical use::

    analyzer = Analyzer()                          # once per process
    terms = analyze_chunk(analyzer, text, title)   # at indexing -> ChunkRecord fields
    weigher = TermWeigher(analyzer, doc_freq=...)  # per request (doc_freq optional)
    qa = build_fulltext_query(question, analyzer, weigher)
    sims = token_similarities(qa.keywords, records)
"""

from ragloom.nlp.analysis import ChunkTerms, analyze_chunk
from ragloom.nlp.query import (
    FINE_FIELDS,
    MAX_KEYWORDS,
    QueryAnalysis,
    Synonyms,
    build_fulltext_query,
    is_chinese_query,
)
from ragloom.nlp.similarity import (
    HasTerms,
    pair_key,
    query_weights,
    text_similarity,
    token_similarities,
    token_similarity,
)
from ragloom.nlp.stopwords import CHINESE_STOP_WORDS, ENGLISH_STOP_WORDS
from ragloom.nlp.term_weight import DocFreq, TermWeigher, idf
from ragloom.nlp.tokenizer import Analyzer, has_han, is_han

__all__ = [
    "CHINESE_STOP_WORDS",
    "ENGLISH_STOP_WORDS",
    "FINE_FIELDS",
    "MAX_KEYWORDS",
    "Analyzer",
    "ChunkTerms",
    "DocFreq",
    "HasTerms",
    "QueryAnalysis",
    "Synonyms",
    "TermWeigher",
    "analyze_chunk",
    "build_fulltext_query",
    "has_han",
    "idf",
    "is_chinese_query",
    "is_han",
    "pair_key",
    "query_weights",
    "text_similarity",
    "token_similarities",
    "token_similarity",
]
