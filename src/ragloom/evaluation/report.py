"""The result of an evaluation run: per-mode metrics (and answer scores), JSON form, Rich tables, a bar chart."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.table import Table

from ragloom.errors import MissingDependencyError
from ragloom.evaluation.answers import AnswerReport


@dataclass(slots=True)
class QueryOutcome:
    """One query under one mode: the ranked corpus ids (``None`` = not a corpus item) and the latency."""

    query_id: str
    ranked: list[str | None]
    latency_ms: float
    ndcg: float


@dataclass(slots=True)
class ModeResult:
    """Averages over the queries of one mode. ``metrics`` keys: hit@1, hit@5, MRR@k, nDCG@k, Recall@k."""

    name: str
    metrics: dict[str, float]
    latency_p50_ms: float
    latency_p95_ms: float
    queries: int
    outcomes: list[QueryOutcome] = field(default_factory=list)

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"mode": self.name, "queries": self.queries,
                               **{k: round(v, 4) for k, v in self.metrics.items()},
                               "latency_p50_ms": round(self.latency_p50_ms, 2),
                               "latency_p95_ms": round(self.latency_p95_ms, 2)}
        if per_query:
            out["per_query"] = [{"id": o.query_id, "ranked": o.ranked, "latency_ms": round(o.latency_ms, 2),
                                 "ndcg": round(o.ndcg, 4)} for o in self.outcomes]
        return out


@dataclass(slots=True)
class EnrichmentResult:
    """``hybrid`` with one enrichment (or two): its metrics, what building it took, and how."""

    name: str
    result: ModeResult
    build_seconds: float
    llm_calls: int
    how: str  # e.g. "offline", "extractive", "chat model gpt-x"

    def to_dict(self) -> dict[str, Any]:
        return {"enrichment": self.name, "build_seconds": round(self.build_seconds, 2), "llm_calls": self.llm_calls,
                "how": self.how, **self.result.to_dict()}


@dataclass(slots=True)
class EvalReport:
    """Everything ``ragloom eval`` prints. ``notes`` explain skipped modes and failed documents."""

    dataset: str
    knowledge_base: str
    scratch: bool
    corpus_size: int
    query_count: int
    top_k: int
    candidate_window: int
    graded: bool
    modes: list[ModeResult]
    notes: list[str] = field(default_factory=list)
    ingest_seconds: float = 0.0
    answers: AnswerReport | None = None  # with ``--answers``
    enrichments: list[EnrichmentResult] = field(default_factory=list)  # with ``--enrich``

    @property
    def metric_names(self) -> list[str]:
        return list(self.modes[0].metrics) if self.modes else []

    def mode(self, name: str) -> ModeResult:
        """The result of one mode; ``KeyError`` when it was not run."""
        for m in self.modes:
            if m.name == name:
                return m
        raise KeyError(name)

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        """A JSON-ready summary (what ``--json`` prints)."""
        return {
            "dataset": self.dataset, "knowledge_base": self.knowledge_base, "scratch": self.scratch,
            "corpus_size": self.corpus_size, "queries": self.query_count, "top_k": self.top_k,
            "candidate_window": self.candidate_window, "graded": self.graded,
            "ingest_seconds": round(self.ingest_seconds, 2),
            "modes": [m.to_dict(per_query=per_query) for m in self.modes], "notes": list(self.notes),
            **({"answers": self.answers.to_dict(per_query=per_query)} if self.answers is not None else {}),
            **({"enrichments": [e.to_dict() for e in self.enrichments]} if self.enrichments else {}),
        }

    def table(self) -> Table:
        """A Rich table: one row per mode, best value of each metric in bold."""
        names = self.metric_names
        caption = "; ".join(self.notes) if self.notes else None
        title = (f"{self.dataset}: {self.query_count} queries, {self.corpus_size} documents, "
                 f"{self.candidate_window} candidates" + (" (graded nDCG)" if self.graded else ""))
        table = Table("mode", *names, "p50 ms", "p95 ms", title=title, caption=caption)
        best = {n: max(m.metrics[n] for m in self.modes) for n in names}
        for m in self.modes:
            cells = [f"[bold]{m.metrics[n]:.3f}[/]" if m.metrics[n] == best[n] else f"{m.metrics[n]:.3f}"
                     for n in names]
            table.add_row(m.name, *cells, f"{m.latency_p50_ms:.1f}", f"{m.latency_p95_ms:.1f}")
        return table

    def enrichment_table(self) -> Table:
        """``hybrid`` without and with each enrichment, with what building it took."""
        names = self.metric_names
        base = next((m for m in self.modes if m.name == "hybrid"), None)
        table = Table("hybrid with", *names, "build s", "LLM calls", "how", title="Enrichments: worth their cost?")
        if base is not None:
            table.add_row("(nothing)", *(f"{base.metrics[n]:.3f}" for n in names), "-", "-", "")
        for e in self.enrichments:
            cells = []
            for n in names:
                value, delta = e.result.metrics[n], e.result.metrics[n] - (base.metrics[n] if base else 0.0)
                cells.append(f"{value:.3f}" + (f" ({delta:+.3f})" if base is not None else ""))
            table.add_row(e.name, *cells, f"{e.build_seconds:.1f}", str(e.llm_calls), e.how)
        return table

    def render(self) -> Table | Group:
        """What ``ragloom eval`` prints: the retrieval table, then the enrichment and answer tables when measured."""
        parts: list[Table] = [self.table()]
        if self.enrichments:
            parts.append(self.enrichment_table())
        if self.answers is not None:
            parts.append(self.answers.table())
        return parts[0] if len(parts) == 1 else Group(*parts)

    def plot(self, path: Path | str) -> Path:
        """Draw a grouped bar chart (metrics x modes) with latencies as a second panel; returns the path.

        Needs matplotlib (the ``plot`` extra); :class:`MissingDependencyError` otherwise.
        """
        require_matplotlib()
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        out = Path(path)
        names = self.metric_names
        fig, (ax, lat) = plt.subplots(1, 2, figsize=(12, 4.5), gridspec_kw={"width_ratios": [3, 1]})
        width = 0.8 / max(len(self.modes), 1)
        for i, m in enumerate(self.modes):
            xs = [j + i * width for j in range(len(names))]
            bars = ax.bar(xs, [m.metrics[n] for n in names], width, label=m.name)
            ax.bar_label(bars, fmt="%.2f", fontsize=7)
            lat.bar([i], [m.latency_p50_ms], 0.6, label=m.name)
            lat.errorbar([i], [m.latency_p50_ms], yerr=[[0], [max(m.latency_p95_ms - m.latency_p50_ms, 0)]],
                         fmt="none", ecolor="black", capsize=3)
        ax.set_xticks([j + width * (len(self.modes) - 1) / 2 for j in range(len(names))], names)
        ax.set_ylim(0, 1.18)
        ax.set_title(f"{self.dataset} ({self.query_count} queries)")
        ax.legend(fontsize=8, loc="upper center", ncols=len(self.modes), frameon=False)
        lat.set_xticks(range(len(self.modes)), [m.name for m in self.modes], rotation=30, fontsize=8)
        lat.set_ylabel("ms")
        lat.set_title("latency p50 (bar) to p95")
        fig.tight_layout()
        fig.savefig(out, dpi=110)
        plt.close(fig)
        return out


def require_matplotlib() -> None:
    """Raise :class:`MissingDependencyError` naming the ``plot`` extra (``pip install 'ragloom[plot]'``)
    when matplotlib cannot be imported: ``--plot`` checks it before any work."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise MissingDependencyError("matplotlib", "plot") from None
