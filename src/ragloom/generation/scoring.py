"""Similarity between answer sentences, questions and evidence.

Two signals are combined everywhere in generation:

* **term similarity** — by default :func:`term_overlap`, the share of the first
  text's content terms found in the second; a caller may plug in another
  ``(query, text) -> float in [0, 1]`` function (e.g. ``ragloom.nlp``'s);
* **vector similarity** — cosine of embeddings, *calibrated*: many embedding
  models (e5 among them) place unrelated texts at cosine 0.7–0.8, so a raw
  threshold means nothing. :class:`SimilarityScorer` measures each vector's
  cosine to a few fixed unrelated probe texts and rescales
  ``(cos - baseline) / (1 - baseline)``, clipped to [0, 1], so 0 means "as
  related as random text" for any model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np
import snowballstemmer

from ragloom.dataflow import Evidence
from ragloom.generation.sentences import sentence_text, split_sentences
from ragloom.models.embedding import Embedder

TermSimilarity = Callable[[str, str], float]

_STOPWORD_TEXT = """
a an the and or but if then else of to in on at by for with from as is are was were be
been being it its this that these those there here what which who whom whose when where
why how do does did done not no yes can could would should will shall may might must have
has had i you he she we they me him her us them my your his our their about into over than
so such also just very any all each some more most other only own same too s t
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_LATIN = re.compile(r"[^\W\d_]+|\d+(?:[.,]\d+)*", re.UNICODE)
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")

_PROBES = (
    "The weather was pleasant yesterday afternoon.",
    "Instructions for assembling the shelf are included in the box.",
    "My cat likes to sleep on the warm windowsill.",
    "会议将于下周二在三楼举行。",
    "La reunión se ha aplazado hasta el lunes.",
    "Der Zug nach Berlin hat zehn Minuten Verspätung.",
)


@lru_cache(maxsize=1)
def _stemmer() -> snowballstemmer.stemmer:
    return snowballstemmer.stemmer("english")


def terms(text: str) -> list[str]:
    """Content terms: stemmed lower-case words minus stop words, numbers, CJK bigrams."""
    out: list[str] = []
    cjk_free = _CJK_RUN.sub(" ", text)
    for w in _LATIN.findall(cjk_free.lower()):
        if w[0].isdigit():
            out.append(w.replace(",", ""))
        elif w not in _STOPWORDS and len(w) > 1:
            out.append(_stemmer().stemWord(w))
    for run in _CJK_RUN.findall(text):
        out.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
    return out


def term_overlap(query: str, text: str) -> float:
    """Share of ``query``'s distinct content terms that occur in ``text`` (0 when none)."""
    q = set(terms(query))
    if not q:
        return 0.0
    return len(q & set(terms(text))) / len(q)


def numbers(text: str) -> set[str]:
    """The numbers written in ``text``, normalised (thousands commas removed)."""
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


def chunk_sentences(content: str) -> list[str]:
    """The sentences of a chunk (markers removed, at least 5 characters), in order."""
    return [t for t in (sentence_text(p) for p in split_sentences(content)) if len(t) >= 5]


def _cosine_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    an = a / np.maximum(np.linalg.norm(a, axis=-1, keepdims=True), 1e-12)
    bn = b / np.maximum(np.linalg.norm(b, axis=-1, keepdims=True), 1e-12)
    cosines: np.ndarray = an @ bn.T
    return cosines


class SimilarityScorer:
    """Calibrated vector similarity plus term similarity, for one embedder.

    Without an embedder every vector similarity is ``None`` and callers fall
    back to term similarity alone. Evidence vectors missing from
    :class:`Evidence` are embedded once and stored back on the evidence.
    With ``sentence_level`` (default) :meth:`vector_support` also compares with
    each sentence of a chunk (one extra embedding call per answer, cached).
    """

    def __init__(
        self,
        embedder: Embedder | None,
        term_similarity: TermSimilarity | None = None,
        *,
        sentence_level: bool = True,
    ) -> None:
        self.embedder = embedder
        self.sentence_level = sentence_level
        self.term_similarity: TermSimilarity = term_similarity or term_overlap
        self._probes: np.ndarray | None = None
        self._sentences: dict[tuple[int, str], np.ndarray] = {}

    @property
    def has_vectors(self) -> bool:
        return self.embedder is not None

    def _probe_vectors(self) -> np.ndarray:
        if self._probes is None:
            assert self.embedder is not None
            self._probes = np.asarray(self.embedder.embed_passages(list(_PROBES)), dtype=np.float32)
        return self._probes

    def passages(self, texts: Sequence[str]) -> np.ndarray | None:
        """Passage vectors for ``texts`` (``None`` without an embedder)."""
        if self.embedder is None:
            return None
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.asarray(self.embedder.embed_passages(list(texts)), dtype=np.float32)

    def query(self, text: str) -> np.ndarray | None:
        """The query vector for ``text`` (``None`` without an embedder)."""
        if self.embedder is None:
            return None
        return np.asarray(self.embedder.embed_query(text), dtype=np.float32).reshape(-1)

    def evidence_vectors(self, evidence: Sequence[Evidence]) -> np.ndarray | None:
        """One row per evidence; missing (or wrong-sized) vectors are embedded and stored."""
        if self.embedder is None or not evidence:
            return None
        dim = self.embedder.dim
        missing = [ev for ev in evidence if ev.vector is None or np.asarray(ev.vector).reshape(-1).shape[0] != dim]
        if missing:
            vecs = self.passages([ev.content for ev in missing])
            assert vecs is not None
            for ev, v in zip(missing, vecs, strict=True):
                ev.vector = v
        return np.vstack([np.asarray(ev.vector, dtype=np.float32).reshape(-1) for ev in evidence])

    def vector_similarity(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Calibrated cosine matrix (len(rows) x len(cols)), values in [0, 1]."""
        rows = np.atleast_2d(rows)
        cols = np.atleast_2d(cols)
        baseline = _cosine_rows(rows, self._probe_vectors()).mean(axis=1, keepdims=True)
        baseline = np.clip(baseline, 0.0, 0.95)
        calibrated: np.ndarray = np.clip((_cosine_rows(rows, cols) - baseline) / (1.0 - baseline), 0.0, 1.0)
        return calibrated

    def term_matrix(self, rows: Sequence[str], cols: Sequence[str]) -> np.ndarray:
        """``term_similarity(row, col)`` for every pair."""
        m = np.zeros((len(rows), len(cols)), dtype=np.float32)
        for i, r in enumerate(rows):
            for j, c in enumerate(cols):
                m[i, j] = self.term_similarity(r, c)
        return m

    def _sentence_vectors(self, evidence: Sequence[Evidence]) -> list[np.ndarray]:
        """Passage vectors of each evidence's sentences (cached per evidence)."""
        todo = [ev for ev in evidence if (ev.index, ev.chunk_id) not in self._sentences]
        texts: list[list[str]] = []
        for ev in todo:
            pieces = chunk_sentences(ev.content)
            texts.append(pieces if len(pieces) > 1 else [])
        flat = self.passages([t for group in texts for t in group])
        start = 0
        for ev, group in zip(todo, texts, strict=True):
            assert flat is not None
            self._sentences[(ev.index, ev.chunk_id)] = flat[start : start + len(group)]
            start += len(group)
        return [self._sentences[(ev.index, ev.chunk_id)] for ev in evidence]

    def supporting_sentence(self, sentence: str, ev: Evidence, vector: np.ndarray | None = None) -> tuple[str, float]:
        """The sentence of ``ev`` that best supports ``sentence`` and its score: 0.5 x calibrated
        vector similarity + 0.5 x term similarity (term alone without an embedder).
        ``vector`` is ``sentence``'s passage vector when the caller has it."""
        pieces = chunk_sentences(ev.content) or [ev.content.strip()]
        term = np.array([self.term_similarity(sentence, p) for p in pieces], dtype=np.float32)
        scores = term
        if self.embedder is not None:
            vec = self.passages([sentence]) if vector is None else np.atleast_2d(vector)
            assert vec is not None
            cached = self._sentence_vectors([ev])[0]
            rows = cached if len(cached) == len(pieces) else self.passages(pieces)
            assert rows is not None
            scores = 0.5 * self.vector_similarity(vec, rows)[0] + 0.5 * term
        best = int(np.argmax(scores))
        return pieces[best], float(scores[best])

    def vector_support(self, rows: np.ndarray, evidence: Sequence[Evidence]) -> np.ndarray | None:
        """Calibrated similarity of each row vector to each evidence (rows x evidence).

        The best of the whole chunk and each of its sentences: a one-sentence
        claim is compared with the sentence that states it, not only with the
        chunk's average meaning. ``None`` without an embedder.
        """
        ev_vecs = self.evidence_vectors(evidence)
        if ev_vecs is None:
            return None
        out = self.vector_similarity(rows, ev_vecs)
        if not self.sentence_level:
            return out
        for j, sent_vecs in enumerate(self._sentence_vectors(evidence)):
            if len(sent_vecs):
                best = self.vector_similarity(rows, sent_vecs).max(axis=1)
                out[:, j] = np.maximum(out[:, j], best)
        return out
