"""Retrieval evaluation (``ragloom eval``): labelled sets, metrics, side-by-side modes, reports;
with gold answers, answer evaluation too (:mod:`ragloom.evaluation.answers`).

The shipped labelled sets live in ``data/en`` and ``data/zh`` (:func:`shipped_set`).
"""

from __future__ import annotations

from pathlib import Path

from ragloom.evaluation.answers import AnswererResult, AnswerOutcome, AnswerReport, evaluate_answers
from ragloom.evaluation.dataset import CorpusItem, Dataset, LabelledQuery, load_dataset
from ragloom.evaluation.ingest import Progress, no_progress
from ragloom.evaluation.report import EvalReport, ModeResult, QueryOutcome
from ragloom.evaluation.runner import (
    DEFAULT_MODES,
    RERANK_MODE,
    SEARCH_MODES,
    evaluate,
    rank_ids,
    run_eval,
)

DATA_DIR = Path(__file__).parent / "data"


def shipped_set(language: str) -> Path:
    """The directory of one of the repository's own labelled sets: ``en``, ``zh`` or ``multidoc`` (two-hop)."""
    path = DATA_DIR / language
    if not path.is_dir():
        raise ValueError(f"no shipped evaluation set for language {language!r}")
    return path


__all__ = [
    "DATA_DIR", "AnswerOutcome", "AnswerReport", "AnswererResult", "evaluate_answers",
    "DEFAULT_MODES", "RERANK_MODE", "SEARCH_MODES", "CorpusItem", "Dataset", "EvalReport",
    "LabelledQuery", "ModeResult", "Progress", "QueryOutcome", "evaluate", "load_dataset", "no_progress",
    "rank_ids", "run_eval", "shipped_set",
]
