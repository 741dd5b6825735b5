"""Citation markers in answers: repair, check, insert, verify.

The canonical marker is ``[ID:n]`` where ``n`` is an :attr:`Evidence.index`.
A typical pipeline is ``repair_citation_formats`` → ``check_citations`` →
``insert_citations`` (only when the model cited nothing) → ``verify_citations``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

import numpy as np

from ragloom.dataflow import Citation, Evidence
from ragloom.generation.scoring import SimilarityScorer, TermSimilarity, numbers
from ragloom.generation.sentences import (
    _CODE,
    _MARKER_WITH_SPACE,
    attach_markers,
    cited_ids,
    sentence_text,
    split_sentences,
    strip_markers,
)
from ragloom.generation.thresholds import WEAK, verdict
from ragloom.models.embedding import Embedder

MAX_PER_SENTENCE = 4

_SEP = r"\s*[,，、;；]\s*"
_ID = r"(?:ID\s*[:：]?\s*)?"
# [1], [ID: 1], [ID:1, ID:2], [1, 2], 【ID: 1】 (bare numbers allowed in square brackets)
_BRACKETED = re.compile(rf"[\[【]\s*{_ID}\d+(?:{_SEP}{_ID}\d+)*\s*[\]】]", re.IGNORECASE)
# (ID: 1), （ID:1，ID:2） (parentheses need the "ID" to tell them from prose)
_PARENTHESISED = re.compile(rf"[(（]\s*ID\s*[:：]?\s*\d+(?:{_SEP}{_ID}\d+)*\s*[)）]", re.IGNORECASE)
# ref 3, (ref 3), [ref:3]
_REF = re.compile(r"(?:[\[(（【]\s*)?\bref\s*[:.]?\s*(\d+)\b(?:\s*[\])）】])?", re.IGNORECASE)
_ENUMERATOR = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")


def _canonical(match: re.Match[str]) -> str:
    return "".join(f"[ID:{n}]" for n in re.findall(r"\d+", match.group(0)))


def _repair_prose(text: str) -> str:
    text = _BRACKETED.sub(_canonical, text)
    text = _PARENTHESISED.sub(_canonical, text)
    return _REF.sub(lambda m: f"[ID:{m.group(1)}]", text)


def repair_citation_formats(answer: str) -> str:
    """Rewrite the marker variants models produce into ``[ID:n]`` (code blocks untouched).

    Handles ``(ID: n)``, ``[ID: n]``, ``【ID: n】``, ``ref n``, ``[n]`` and lists
    such as ``[ID:1, ID:2]`` or ``[1, 2]`` (one marker per number).
    """
    out: list[str] = []
    pos = 0
    for m in _CODE.finditer(answer):
        out.append(_repair_prose(answer[pos : m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_repair_prose(answer[pos:]))
    return "".join(out)


# what a piece of a stream may end in that the next piece could make part of a marker: spaces before
# one, an unclosed bracket (up to 40 characters), "ref 1", or a word ("re" + "f 3")
_OPEN_TAIL = re.compile(r"[ \t]*(?:[\[(（【][^\])）】\n]{0,40}|\bref\s*[:.]?\s*\d*|[A-Za-z]*)$", re.IGNORECASE)


class MarkerFilter:
    """Citation markers left out of a stream of text pieces, in every format a model writes them
    (:func:`repair_citation_formats`): what could still become a marker with the next piece is held
    back. The pieces it returns (then :meth:`flush`) join to
    ``strip_markers(repair_citation_formats(whole text))`` — an answer without citations, streamed."""

    def __init__(self) -> None:
        self.pending = ""

    def feed(self, piece: str) -> str:
        text = self.pending + piece
        match = _OPEN_TAIL.search(text)
        cut = match.start() if match else len(text)
        self.pending = text[cut:]
        return strip_markers(repair_citation_formats(text[:cut]))

    def flush(self) -> str:
        out, self.pending = strip_markers(repair_citation_formats(self.pending)), ""
        return out


def check_citations(answer: str, valid_ids: Collection[int], max_per_sentence: int = MAX_PER_SENTENCE) -> str:
    """Drop markers whose number is not in ``valid_ids``, repeats within a sentence,
    and markers beyond ``max_per_sentence`` in one sentence (the first ones are kept)."""
    valid = set(valid_ids)
    pieces = split_sentences(answer)
    for i, piece in enumerate(pieces):
        kept: list[int] = []

        def keep(m: re.Match[str], kept: list[int] = kept) -> str:
            n = int(m.group(1))
            if n in valid and n not in kept and len(kept) < max_per_sentence:
                kept.append(n)
                return m.group(0)
            return ""

        pieces[i] = _MARKER_WITH_SPACE.sub(keep, piece)
    return "".join(pieces)


def _combined(
    scorer: SimilarityScorer,
    texts: list[str],
    evidence: Sequence[Evidence],
    vector_weight: float,
    term_weight: float,
) -> np.ndarray:
    term = scorer.term_matrix(texts, [ev.content for ev in evidence])
    text_vecs = scorer.passages(texts)
    vec = None if text_vecs is None else scorer.vector_support(text_vecs, evidence)
    if vec is None:
        return term
    return vector_weight * vec + term_weight * term


def _pick(row: np.ndarray, floor: float, used: set[int], limit: int) -> list[int]:
    """Evidence positions scoring within 1 % of the row's best (best >= floor), not in ``used``."""
    best = 0.99 * float(row.max())
    if best < floor:
        return []
    return [int(j) for j in np.argsort(-row) if row[j] > best and int(j) not in used][:limit]


def insert_citations(
    answer: str,
    evidence: Sequence[Evidence],
    embedder: Embedder | None = None,
    *,
    term_similarity: TermSimilarity | None = None,
    scorer: SimilarityScorer | None = None,
    vector_weight: float = 0.9,
    term_weight: float = 0.1,
    max_per_sentence: int = MAX_PER_SENTENCE,
    min_score: float | None = None,
) -> str:
    """Add ``[ID:n]`` markers to sentences that have none, by sentence-to-evidence similarity.

    Follows the reference algorithm: score = ``vector_weight``·vector +
    ``term_weight``·term (term only without an embedder); a threshold starts at
    0.63 and is multiplied by 0.8 until something is cited or it falls to 0.3.
    A sentence cites the evidence scoring within 1 % of its best (at most
    ``max_per_sentence``); each evidence is cited at most once in that pass.
    Sentences shorter than 5 characters are skipped.

    The reference stops lowering the threshold as soon as one sentence is
    cited, so a weaker but genuine match elsewhere stays uncited. With
    ``min_score`` set, a second pass also cites every still-uncited sentence
    whose best score reaches ``min_score`` (evidence may be reused there);
    :func:`verify_citations` is the safety net for such weaker matches.
    """
    if not evidence:
        return answer
    scorer = scorer or SimilarityScorer(embedder, term_similarity)
    pieces = split_sentences(answer)
    targets = [i for i, p in enumerate(pieces) if len(sentence_text(p)) >= 5 and not cited_ids(p)]
    if not targets:
        return answer
    if not scorer.has_vectors:
        vector_weight, term_weight = 0.0, 1.0
    scores = _combined(scorer, [sentence_text(pieces[i]) for i in targets], evidence, vector_weight, term_weight)
    cites: dict[int, list[int]] = {}
    threshold = 0.63
    while threshold > 0.3 and not cites:
        used: set[int] = set()
        for row, i in enumerate(targets):
            chosen = _pick(scores[row], threshold, used, max_per_sentence)
            if chosen:
                used.update(chosen)
                cites[i] = chosen
        threshold *= 0.8
    if min_score is not None:
        for row, i in enumerate(targets):
            if i not in cites:
                cites[i] = _pick(scores[row], min_score, set(), max_per_sentence)
    for i, chosen in cites.items():
        pieces[i] = attach_markers(pieces[i], [evidence[j].index for j in chosen])
    return "".join(pieces)


@dataclass(slots=True)
class Verification:
    """The outcome of :func:`verify_citations`."""

    text: str
    sentences: list[str] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    insufficient: bool = False


def _support_scores(scorer: SimilarityScorer, sentence: str, cited: list[Evidence]) -> tuple[list[float], list[str]]:
    """The support of each cited chunk for ``sentence`` and the chunk's best-matching sentence."""
    term = [scorer.term_similarity(sentence, ev.content) for ev in cited]
    sent_vec = scorer.passages([sentence])
    vecs = None if sent_vec is None else scorer.vector_support(sent_vec, cited)
    if vecs is None:
        scores = term
    else:
        vec = vecs[0]
        scores = [0.5 * float(v) + 0.5 * t for v, t in zip(vec, term, strict=True)]
    stated = numbers(_ENUMERATOR.sub("", sentence))
    if stated:
        available = set().union(*(numbers(ev.content) for ev in cited))
        if not stated <= available:
            scores = [s * 0.25 for s in scores]
    supporting = [scorer.supporting_sentence(sentence, ev, sent_vec)[0] for ev in cited]
    return scores, supporting


def _keep_markers(ok: set[int]) -> Callable[[re.Match[str]], str]:
    """A substitution keeping a ``[ID:n]`` marker (with its leading space) when ``n`` is in ``ok``."""

    def keep(m: re.Match[str]) -> str:
        return m.group(0) if int(m.group(1)) in ok else ""

    return keep


def verify_citations(
    answer: str,
    evidence: Sequence[Evidence],
    embedder: Embedder | None = None,
    *,
    term_similarity: TermSimilarity | None = None,
    scorer: SimilarityScorer | None = None,
    threshold: float = WEAK,
    inserted: bool = False,
) -> Verification:
    """Score each citation against its chunk; remove the ones that do not support their sentence.

    support = 0.5·calibrated vector similarity + 0.5·term similarity (term
    alone without an embedder), quartered when the sentence states a number
    that none of its cited chunks contains. Citations scoring below ``threshold`` are
    removed from the text and returned with ``supported=False``. Every citation gets its
    verdict (:func:`~ragloom.generation.thresholds.verdict`: ``supported`` from
    :data:`~ragloom.generation.thresholds.SUPPORTED`, ``weak`` from ``threshold``, else
    ``unsupported``) and the sentence of its chunk that best matches the answer sentence.
    The answer is ``insufficient`` when no sentence keeps a supported citation. Markers whose
    number matches no evidence are removed too (run :func:`check_citations` first
    to get the usual repairs). ``inserted`` flags every citation as added by
    similarity.
    """
    scorer = scorer or SimilarityScorer(embedder, term_similarity)
    by_index = {ev.index: ev for ev in evidence}
    pieces = split_sentences(answer)
    citations: list[Citation] = []
    sentences: list[str] = []
    for i, piece in enumerate(pieces):
        sentence = sentence_text(piece)
        sentences.append(sentence)
        ids = [n for n in dict.fromkeys(cited_ids(piece)) if n in by_index]
        if not ids:
            pieces[i] = piece if not cited_ids(piece) else _MARKER_WITH_SPACE.sub("", piece)
            continue
        scores, supporting = _support_scores(scorer, sentence, [by_index[n] for n in ids])
        ok = {n for n, s in zip(ids, scores, strict=True) if s >= threshold}
        for n, s, best in zip(ids, scores, supporting, strict=True):
            citations.append(Citation(i, n, round(s, 4), n in ok, inserted,
                                      verdict=verdict(s, threshold), supporting_sentence=best))
        pieces[i] = _MARKER_WITH_SPACE.sub(_keep_markers(ok), piece)
    insufficient = not any(c.supported for c in citations)
    return Verification("".join(pieces), sentences, citations, insufficient)
