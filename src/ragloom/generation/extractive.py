"""Extractive answers: the evidence sentences that best answer the question, cited.

Used when no chat model is configured. Nothing is generated: every sentence of
the answer is copied from a chunk and followed by that chunk's ``[ID:n]``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragloom.dataflow import Answer, Citation, Evidence
from ragloom.generation.scoring import SimilarityScorer
from ragloom.generation.sentences import attach_markers, is_code, split_sentences

EXTRACTIVE_MODEL = "extractive"
DEFAULT_EMPTY_RESPONSE = "The documents do not contain enough information to answer this question."
_WS = re.compile(r"\s+")


@dataclass(slots=True)
class _Candidate:
    text: str
    evidence_pos: int  # position of its evidence in the input list
    sentence_pos: int  # position of the sentence inside the chunk
    evidence: Evidence
    score: float = 0.0


def _candidates(evidence: Sequence[Evidence], min_chars: int, max_chars: int) -> list[_Candidate]:
    out: list[_Candidate] = []
    for e_pos, ev in enumerate(evidence):
        for s_pos, piece in enumerate(split_sentences(ev.content)):
            text = _WS.sub(" ", piece).strip()
            if min_chars <= len(text) <= max_chars and not is_code(piece):
                out.append(_Candidate(text, e_pos, s_pos, ev))
    return out


def _score(question: str, cands: list[_Candidate], scorer: SimilarityScorer, vector_weight: float) -> np.ndarray | None:
    """Set each candidate's score; returns the candidates' passage vectors (or None)."""
    term = np.array([scorer.term_similarity(question, c.text) for c in cands], dtype=np.float32)
    qvec = scorer.query(question)
    vecs = scorer.passages([c.text for c in cands])
    if qvec is None or vecs is None:
        scores = term
    else:
        vec = scorer.vector_similarity(qvec, vecs)[0]
        scores = vector_weight * vec + (1 - vector_weight) * term
    for c, s in zip(cands, scores, strict=True):
        c.score = float(s)
    return vecs


def _redundant(
    i: int,
    chosen: list[int],
    cands: list[_Candidate],
    vecs: np.ndarray | None,
    scorer: SimilarityScorer,
) -> bool:
    for j in chosen:
        if vecs is not None and float(vecs[i] @ vecs[j]) > 0.97:
            return True
        a, b = cands[i].text, cands[j].text
        if min(scorer.term_similarity(a, b), scorer.term_similarity(b, a)) > 0.8:
            return True
    return False


def extractive_answer(
    question: str,
    evidence: Sequence[Evidence],
    scorer: SimilarityScorer,
    *,
    max_sentences: int = 3,
    max_chars: int = 700,
    floor: float = 0.3,
    relative: float = 0.75,
    vector_weight: float = 0.7,
    empty_response: str = DEFAULT_EMPTY_RESPONSE,
) -> Answer:
    """The best few evidence sentences for ``question``, each followed by its ``[ID:n]``.

    score = ``vector_weight``·calibrated cosine(query, sentence) + the rest ·
    term similarity (term only without an embedder). Sentences are taken best
    first while they score at least ``relative``·best, fit in ``max_chars``
    together and are not near-duplicates of one already taken; they are then
    put in evidence order and reading order. When the best score is below
    ``floor`` the answer is ``empty_response`` with no citations and
    ``insufficient=True``.
    """
    cands = _candidates(evidence, min_chars=12, max_chars=max_chars)
    if not cands:
        return Answer(empty_response, EXTRACTIVE_MODEL, insufficient=True)
    vecs = _score(question, cands, scorer, vector_weight)
    order = sorted(range(len(cands)), key=lambda i: -cands[i].score)
    best = cands[order[0]].score
    if best < floor:
        return Answer(empty_response, EXTRACTIVE_MODEL, insufficient=True)
    chosen: list[int] = []
    used_chars = 0
    for i in order:
        c = cands[i]
        if len(chosen) >= max_sentences or c.score < max(floor, relative * best):
            break
        if chosen and used_chars + len(c.text) > max_chars:
            continue
        if _redundant(i, chosen, cands, vecs, scorer):
            continue
        chosen.append(i)
        used_chars += len(c.text)
    chosen.sort(key=lambda i: (cands[i].evidence_pos, cands[i].sentence_pos))
    picked = [cands[i] for i in chosen]
    text = " ".join(attach_markers(c.text, [c.evidence.index]) for c in picked)
    refs = sorted({id(c.evidence): c.evidence for c in picked}.values(), key=lambda e: e.index)
    citations = [Citation(k, c.evidence.index, round(c.score, 4), True) for k, c in enumerate(picked)]
    return Answer(text, EXTRACTIVE_MODEL, refs, citations, [c.text for c in picked])
