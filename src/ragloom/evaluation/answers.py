"""``ragloom eval --answers``: answer every query that has gold answers, and score the answers.

Each query goes through the answer use case the API's ``/answer`` runs
(:func:`ragloom.service.search.answers.answer`: its ``top_n`` best chunks as evidence, the
default :class:`~ragloom.schemas.options.EvidenceOptions`), once per *answerer*: the
extractive answerer (always) and the configured chat model (``RAGLOOM_CHAT_*``, when there
is one), side by side over the same knowledge base.

Per answerer:

- **accuracy**: share of the answerable queries whose answer text contains one of the query's gold
  answers, both normalised by :func:`normalise` (a refused or failed answer is wrong);
- **unanswerable refused**: share of the ``unanswerable`` queries (the documents do not answer
  them) whose answer is marked ``insufficient``; ``None`` when the set has none;
- **citation support**: share of the cited answer sentences (every sentence that carried a
  citation, kept or removed by verification) with a citation whose verification says
  ``supported`` (:attr:`Citation.verdict`; when a citation has no verdict, its ``supported``
  flag); ``None`` when no sentence was cited;
- **refusal rate**: share of the answers to answerable queries marked ``insufficient``;
- **gold in evidence**: share of the answerable queries whose evidence (the ``top_n`` chunks the
  answer was written from, found again by :func:`ragloom.service.search.answers.find_evidence` outside the
  timed call) contains a gold answer — a wrong answer with the gold in its evidence is the
  answerer's miss, one without it retrieval's; **unanswerable without evidence**: share of the
  unanswerable queries for which retrieval found no chunk at all;
- **latency p50 / p95**: wall time of one ``answer`` call (retrieval included), in ms; a first,
  unmeasured call per answerer loads the models.

A chat model failing on a query (:class:`~ragloom.errors.RagloomError`) counts that query as
wrong and as an error; its latency is left out.
"""

from __future__ import annotations

import contextlib
import re
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from rich.table import Table

from ragloom.context import Context, Principal
from ragloom.dataflow import Answer, Citation
from ragloom.errors import InvalidRequestError, RagloomError
from ragloom.evaluation import metrics as M
from ragloom.evaluation.dataset import Dataset, LabelledQuery
from ragloom.evaluation.ingest import Progress, no_progress
from ragloom.generation.extractive import EXTRACTIVE_MODEL
from ragloom.generation.thresholds import SUPPORTED_VERDICT
from ragloom.schemas.options import EvidenceOptions, RetrievalOptions
from ragloom.service.search.answers import answer, find_evidence

DEFAULT_TOP_N = 6  # the API's /answer default
_MARKER = re.compile(r"\[ID:\d+\]")


def normalise(text: str) -> str:
    """Text as answers are compared: citation markers removed, Unicode NFKC (full-width letters,
    digits and punctuation become half-width, ``℃`` becomes ``°C``), case folded, every
    punctuation mark and all whitespace removed (``"4.2 kg"`` and ``"4.2kg"`` match, as do
    ``「战史演武」&「争霸演武」`` and ``战史演武 争霸演武``)."""
    text = unicodedata.normalize("NFKC", _MARKER.sub(" ", text)).casefold()
    return "".join(ch for ch in text if not ch.isspace() and not unicodedata.category(ch).startswith("P"))


def contains_gold(answer_text: str, gold: Sequence[str]) -> bool:
    """True when the normalised answer contains one of the normalised gold answers (empty ones ignored)."""
    got = normalise(answer_text)
    return any(g and g in got for g in (normalise(a) for a in gold))


def _says_supported(c: Citation) -> bool:
    return c.verdict == SUPPORTED_VERDICT if c.verdict is not None else c.supported


def cited_sentences(ans: Answer) -> tuple[int, int]:
    """(sentences that carried a citation, those of them with a supported citation)."""
    by_sentence: dict[int, bool] = {}
    for c in ans.citations:
        by_sentence[c.sentence] = by_sentence.get(c.sentence, False) or _says_supported(c)
    return len(by_sentence), sum(by_sentence.values())


@dataclass(slots=True)
class AnswerOutcome:
    """One query answered by one answerer."""

    query_id: str
    text: str
    correct: bool
    refused: bool
    cited: int  # sentences carrying a citation
    supported: int  # of them, with a supported citation
    latency_ms: float | None  # None when the answer failed
    error: str | None = None
    unanswerable: bool = False  # right when refused
    evidence: int = 0  # chunks of evidence the answer had
    gold_in_evidence: bool = False  # a gold answer occurs in them

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.query_id, "answer": self.text, "correct": self.correct, "refused": self.refused,
                "cited_sentences": self.cited, "supported_sentences": self.supported,
                "latency_ms": None if self.latency_ms is None else round(self.latency_ms, 2), "error": self.error,
                "unanswerable": self.unanswerable, "evidence": self.evidence,
                "gold_in_evidence": self.gold_in_evidence}


@dataclass(slots=True)
class AnswererResult:
    """The scores of one answerer: ``extractive`` or the chat model (``kind`` ``model``, ``name`` its name)."""

    name: str
    kind: str
    outcomes: list[AnswerOutcome] = field(default_factory=list)

    @property
    def queries(self) -> int:
        return len(self.outcomes)

    def _share(self, flag: str, unanswerable: bool = False) -> float:
        some = [o for o in self.outcomes if o.unanswerable == unanswerable]
        return sum(1 for o in some if getattr(o, flag)) / len(some) if some else 0.0

    @property
    def accuracy(self) -> float:
        """Over the answerable queries."""
        return self._share("correct")

    @property
    def refusal_rate(self) -> float:
        """Over the answerable queries."""
        return self._share("refused")

    @property
    def gold_in_evidence(self) -> float:
        """Over the answerable queries."""
        return self._share("gold_in_evidence")

    @property
    def unanswerable_without_evidence(self) -> float | None:
        """Share of the unanswerable queries whose retrieval found no chunk; ``None`` when there are none."""
        some = [o for o in self.outcomes if o.unanswerable]
        return sum(1 for o in some if o.evidence == 0) / len(some) if some else None

    @property
    def unanswerable(self) -> int:
        return sum(1 for o in self.outcomes if o.unanswerable)

    @property
    def unanswerable_refused(self) -> float | None:
        """Share of the unanswerable queries refused; ``None`` when there are none."""
        return self._share("refused", unanswerable=True) if self.unanswerable else None

    @property
    def cited_sentences(self) -> int:
        return sum(o.cited for o in self.outcomes)

    @property
    def citation_support(self) -> float | None:
        cited = self.cited_sentences
        return sum(o.supported for o in self.outcomes) / cited if cited else None

    @property
    def errors(self) -> int:
        return sum(1 for o in self.outcomes if o.error is not None)

    def latency(self, p: float) -> float:
        return M.percentile([o.latency_ms for o in self.outcomes if o.latency_ms is not None], p)

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        support = self.citation_support
        out: dict[str, Any] = {
            "answerer": self.name, "kind": self.kind, "queries": self.queries,
            "accuracy": round(self.accuracy, 4),
            "citation_support": None if support is None else round(support, 4),
            "cited_sentences": self.cited_sentences, "refusal_rate": round(self.refusal_rate, 4),
            "unanswerable": self.unanswerable,
            "unanswerable_refused": None if self.unanswerable_refused is None else round(self.unanswerable_refused, 4),
            "gold_in_evidence": round(self.gold_in_evidence, 4),
            "unanswerable_without_evidence": (None if self.unanswerable_without_evidence is None
                                              else round(self.unanswerable_without_evidence, 4)),
            "errors": self.errors, "latency_p50_ms": round(self.latency(50), 2),
            "latency_p95_ms": round(self.latency(95), 2),
        }
        if per_query:
            out["per_query"] = [o.to_dict() for o in self.outcomes]
        return out


@dataclass(slots=True)
class AnswerReport:
    """The answer part of an evaluation: one :class:`AnswererResult` per answerer, side by side."""

    queries: int  # queries with gold answers (the ones answered)
    top_n: int
    answerers: list[AnswererResult]
    notes: list[str] = field(default_factory=list)

    def answerer(self, name_or_kind: str) -> AnswererResult:
        """The result of one answerer by name (or ``model`` / ``extractive`` by kind); ``KeyError`` if absent."""
        for a in self.answerers:
            if name_or_kind in (a.name, a.kind):
                return a
        raise KeyError(name_or_kind)

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        return {"queries": self.queries, "top_n": self.top_n,
                "answerers": [a.to_dict(per_query=per_query) for a in self.answerers], "notes": list(self.notes)}

    def table(self) -> Table:
        """A Rich table: one row per answerer, the best accuracy and citation support in bold."""
        title = f"answers: {self.queries} queries with gold answers, top {self.top_n} chunks as evidence"
        absent = any(a.unanswerable for a in self.answerers)
        table = Table("answerer", "accuracy", "gold in evidence", "citation support", "refusals",
                      *(["unanswerable refused"] if absent else []), "errors", "p50 ms", "p95 ms",
                      title=title, caption="; ".join(self.notes) if self.notes else None)
        best_acc = max((a.accuracy for a in self.answerers), default=0.0)
        supports = [s for s in (a.citation_support for a in self.answerers) if s is not None]
        best_sup = max(supports, default=None)

        def cell(value: float | None, best: float | None) -> str:
            if value is None:
                return "-"
            text = f"{value:.3f}"
            return f"[bold]{text}[/]" if len(self.answerers) > 1 and value == best else text

        for a in self.answerers:
            label = a.name if a.kind == "extractive" else f"{a.name} (chat model)"
            refused = [cell(a.unanswerable_refused, None)] if absent else []
            table.add_row(label, cell(a.accuracy, best_acc), cell(a.gold_in_evidence, None),
                          cell(a.citation_support, best_sup),
                          f"{a.refusal_rate:.3f}", *refused, str(a.errors), f"{a.latency(50):.1f}",
                          f"{a.latency(95):.1f}")
        return table


class _WithoutChatModel:
    """A view of a :class:`Context` whose chat model is None (so ``answer`` answers extractively);
    everything else — database, index, embedders, reranker — is the real context's, shared."""

    chat_model = None

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)


def answerers(ctx: Context) -> list[tuple[AnswererResult, Context]]:
    """The extractive answerer and, when one is configured, the chat model, each with the context it runs in."""
    out: list[tuple[AnswererResult, Context]] = [
        (AnswererResult(EXTRACTIVE_MODEL, "extractive"), cast(Context, _WithoutChatModel(ctx)))]
    model = ctx.chat_model
    if model is not None:
        out.append((AnswererResult(model.name, "model"), ctx))
    return out


def _one(ctx: Context, principal: Principal, kb_id: str, q: LabelledQuery, top_n: int) -> AnswerOutcome:
    start = time.perf_counter()
    try:
        ans = answer(ctx, principal=principal, kb_ids=[kb_id], question=q.query, top_n=top_n,
                     options=EvidenceOptions())
    except RagloomError as exc:
        return AnswerOutcome(q.id, "", correct=False, refused=False, cited=0, supported=0, latency_ms=None,
                             error=f"{type(exc).__name__}: {exc.message}", unanswerable=q.unanswerable)
    ms = (time.perf_counter() - start) * 1000
    cited, supported = cited_sentences(ans)
    _, evidence = find_evidence(ctx, principal=principal, kb_ids=[kb_id], question=q.query,
                                options=RetrievalOptions.of_answer(EvidenceOptions(), top_n))
    # a refusal is wrong on an answerable query even when what it lists as nearest holds the gold answer
    correct = ans.insufficient if q.unanswerable else not ans.insufficient and contains_gold(ans.text, q.answers)
    return AnswerOutcome(q.id, ans.text, correct=correct, refused=ans.insufficient, cited=cited, supported=supported,
                         latency_ms=ms, unanswerable=q.unanswerable, evidence=len(evidence),
                         gold_in_evidence=contains_gold("\n".join(e.content for e in evidence), q.answers))


def check_answers(dataset: Dataset, top_n: int) -> list[LabelledQuery]:
    """The queries with gold answers and the unanswerable ones; :class:`InvalidRequestError` when there are no
    gold answers or ``top_n`` is out of range."""
    if not 1 <= top_n <= 64:
        raise InvalidRequestError("answer top_n must be between 1 and 64")
    gold = [q for q in dataset.queries if q.answers or q.unanswerable]
    if not any(q.answers for q in gold):
        raise InvalidRequestError(f"{dataset.directory}: no query has gold answers (measuring answers needs "
                                  "\"answer\": [...] in queries.jsonl)")
    return gold


def evaluate_answers(ctx: Context, principal: Principal, dataset: Dataset, kb_id: str, *,
                     top_n: int = DEFAULT_TOP_N, progress: Progress = no_progress) -> AnswerReport:
    """Answer the queries of ``dataset`` that have gold answers from an ingested knowledge base, and score them.

    Raises :class:`InvalidRequestError` when no query has a gold answer or ``top_n`` is out of range.
    """
    gold = check_answers(dataset, top_n)
    notes: list[str] = []
    if len(gold) < len(dataset.queries):
        notes.append(f"{len(dataset.queries) - len(gold)} queries without gold answers not answered")
    runs = answerers(ctx)
    if len(runs) == 1:
        notes.append("no chat model configured (RAGLOOM_CHAT_*): extractive answers only")
    for _, run_ctx in runs:  # unmeasured: loading models and dictionaries is not answer latency
        with contextlib.suppress(RagloomError):  # a failure here shows in the measured call
            answer(run_ctx, principal=principal, kb_ids=[kb_id], question=gold[0].query, top_n=top_n)
    for i, q in enumerate(gold, 1):
        for result, run_ctx in runs:
            result.outcomes.append(_one(run_ctx, principal, kb_id, q, top_n))
        progress("answer", i, len(gold))
    for result, _ in runs:
        if result.errors:
            first = next(o.error for o in result.outcomes if o.error is not None)
            notes.append(f"{result.name}: {result.errors} answers failed (first: {first})")
    return AnswerReport(queries=len(gold), top_n=top_n, answerers=[r for r, _ in runs], notes=notes)
