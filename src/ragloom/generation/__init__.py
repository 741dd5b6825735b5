"""Answer generation: prompt with a token budget, chat, citations (check, insert, verify)."""

from ragloom.dataflow import Answer, Citation, Evidence
from ragloom.generation.answer import finish_answer, generate_answer, stream_answer, strip_think
from ragloom.generation.citations import (
    Verification,
    check_citations,
    insert_citations,
    repair_citation_formats,
    verify_citations,
)
from ragloom.generation.extractive import DEFAULT_EMPTY_RESPONSE, extractive_answer
from ragloom.generation.followup import Rewrite, rewrite_question
from ragloom.generation.prompt import DEFAULT_SYSTEM_PROMPT, Prompt, build_prompt
from ragloom.generation.scoring import SimilarityScorer, TermSimilarity, term_overlap
from ragloom.generation.sentences import split_sentences
from ragloom.generation.thresholds import verdict

__all__ = [
    "DEFAULT_EMPTY_RESPONSE",
    "DEFAULT_SYSTEM_PROMPT",
    "Answer",
    "Citation",
    "Evidence",
    "Prompt",
    "Rewrite",
    "SimilarityScorer",
    "TermSimilarity",
    "Verification",
    "build_prompt",
    "check_citations",
    "extractive_answer",
    "finish_answer",
    "generate_answer",
    "insert_citations",
    "repair_citation_formats",
    "rewrite_question",
    "split_sentences",
    "stream_answer",
    "strip_think",
    "term_overlap",
    "verdict",
    "verify_citations",
]
