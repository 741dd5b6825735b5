"""Search and answer commands: ``search``, ``ask`` and ``eval``, with the tables they render."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

from ragloom.cli._app import CliTable, app, emit, err, out, state
from ragloom.client import LocalClient
from ragloom.errors import RagloomError
from ragloom.schemas.retrieval import Explain, RoutingChoice

if TYPE_CHECKING:
    from ragloom.context import Context, Principal
    from ragloom.evaluation.report import EvalReport


@app.command()
def search(
    kb: Annotated[str, typer.Argument(help="Knowledge base; with --route: a comma-separated list to route "
                                           "among, or '*' for all you can read.")],
    question: str, top_n: Annotated[int, typer.Option("--top-n", help="Chunks to return.")] = 6,
    mode: Annotated[str, typer.Option(help="hybrid, keyword or vector")] = "hybrid",
    explain: Annotated[bool, typer.Option("--explain", help="Show every candidate's scores and fate.")] = False,
    toc: Annotated[bool, typer.Option("--toc", help="Re-score with the best document's table of contents.")]
    = False,
    route: Annotated[bool, typer.Option("--route", help="Search only the knowledge bases whose description "
                                                        "fits the question; shows the routing scores.")] = False,
    fusion: Annotated[str | None, typer.Option(help="Hybrid scoring: normalized or weighted (the reference's); "
                                                    "default: the server's setting.")] = None,
) -> None:
    """Retrieve the chunks that best match a question."""
    kbs: str | list[str] = ([] if kb.strip() == "*" else [k.strip() for k in kb.split(",") if k.strip()]) \
        if route else kb
    res = state.client().search(kbs, question, top_n=top_n, mode=mode, explain=explain, toc_enhance=toc,
                                route=route, fusion=fusion)
    if route and not state.json:
        out.print(_routing_table(res.routing or []))
    table = CliTable("#", "similarity", "relevance", "term", "vector", "document", "pages", "content",
                     optional=("relevance", "term", "vector"), fluid=("content",))
    for i, c in enumerate(res.chunks):
        pages = ",".join(sorted({str(p[0]) for p in c.positions if p[0] > 0}))
        relevance = "-" if c.relevance is None else f"{c.relevance:.3f}"
        table.add_row(str(i), f"{c.similarity:.3f}", relevance, f"{c.term_similarity:.3f}",
                      f"{c.vector_similarity:.3f}", c.document_name, pages, c.content[:120].replace("\n", " "))
    if explain and not state.json and res.explain is not None:
        out.print(table)
        table = _explain_table(res.explain)
    emit(res, table)


def _routing_table(routing: list[RoutingChoice]) -> CliTable:
    """Which knowledge bases the router kept, and their scores (description fit to the question)."""
    table = CliTable("knowledge base", "score", "searched",
                     title="routing: how well each description fits the question")
    for r in routing:
        score = "-" if r.score is None else f"{r.score:.3f}"
        table.add_row(r.name or r.kb_id, score, "yes" if r.chosen else "no")
    if not routing:
        table.caption = "no knowledge base to route among"
    elif all(r.score is None for r in routing):
        table.caption = "not scored: only one candidate (or different embedding models)"
    return table


def _explain_table(explained: Explain) -> CliTable:
    q = explained.query or {}  # the schema's free-form query-level facts (keys depend on the query's path)
    retried = ", retried at 0.1" if q.get("gate_retried_at_0_1") else ""
    title = (f"candidates: {q.get('text_hits', 0)} by text (gate msm {q.get('minimum_should_match')}{retried}), "
             f"{q.get('vector_only_hits', 0)} by vector only")
    if q.get("query_tags"):
        title += "; question tags: " + ", ".join(f"{t} {w:.3g}" for t, w in q["query_tags"].items())
    table = CliTable("rank", "stage", "gate", "term", "vector", "feature", "rerank", "final", "relevance", "document",
                     "reason", title=title, optional=("gate", "term", "vector", "feature", "rerank", "relevance"),
                     fluid=("reason",))

    def f(v: float | None) -> str:
        return "-" if v is None else f"{v:.3f}"

    for row in explained.candidates:
        table.add_row(str(row.rank or "-"), row.stage, "yes" if row.passed_gate else "no",
                      f(row.term_similarity), f(row.vector_similarity), f(row.rank_feature), f(row.rerank_score),
                      f(row.similarity), f(row.relevance), row.document_name, row.reason)
    return table


@app.command()
def ask(kb: str, question: str, top_n: Annotated[int, typer.Option("--top-n")] = 6) -> None:
    """Answer a question from a knowledge base, with citations."""
    res = state.client().ask(kb, question, top_n=top_n)
    lines = [res.answer, "", f"[dim]model: {res.model}[/]"]
    for ref in res.references:
        pages = ",".join(sorted({str(p[0]) for p in ref.positions if p[0] > 0}))
        lines.append(f"[bold][ID:{ref.id}][/] {ref.document_name}" + (f" p.{pages}" if pages else ""))
    emit(res, "\n".join(lines))


@app.command("eval")
def eval_(
    directory: Annotated[str, typer.Argument(
        help="Folder with corpus.jsonl and queries.jsonl, or builtin:en / builtin:zh / builtin:multidoc for the "
             "shipped sets.")],
    corpus: Annotated[Path | None, typer.Option(
        "--corpus", help="Directory the corpus's \"path\" entries are relative to (default: the set's folder), "
                         "for a set over documents kept elsewhere.")] = None,
    kb: Annotated[str | None, typer.Option(
        "--kb", help="Measure this existing knowledge base of the data directory as it stands (its documents "
                     "named as the corpus names them; nothing is uploaded) instead of a scratch one.")] = None,
    mode: Annotated[list[str] | None, typer.Option(
        "--mode", help="keyword, vector, hybrid, hybrid-weighted, hybrid+rerank")] = None,
    top_k: Annotated[int, typer.Option("--top-k")] = 10,
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Write a comparison chart (PNG; needs matplotlib: pip install 'ragloom\\[plot]').")] = None,
    keep: Annotated[bool, typer.Option(
        "--keep", help="Keep the scratch data directory (and its knowledge base) and print where it is.")]
    = False,
    answers: Annotated[bool, typer.Option(
        "--answers", help="Also answer the queries that have gold answers (\"answer\": [...]) and score the "
                          "answers: extractive and, when one is configured, the chat model side by side.")]
    = False,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Only the first N queries (the whole "
                                                                     "corpus is still ingested).")] = None,
    corpus_limit: Annotated[int | None, typer.Option(
        "--corpus-limit", min=1, help="Only the first N corpus items, and the queries whose relevant items "
                                      "are all among them (a sample of a large set).")] = None,
    grade_order: Annotated[str, typer.Option(
        "--grade-order", help="higher: a higher grade is more relevant (TREC); lower: grade 1 is the most "
                              "relevant (Cranfield's relevance codes).")] = "higher",
    language: Annotated[str | None, typer.Option(
        "--language", help="The scratch knowledge base's language (en, zh, de, fr, es, it, pt, nl, ru, ja, ko, ar, "
                           "auto); default: detected from the corpus. --language en over another language's set "
                           "measures it without that language's own analysis.")] = None,
    enrich: Annotated[list[str] | None, typer.Option(
        "--enrich", help="Also measure hybrid with this enrichment built, beside its build time and chat-model "
                         "calls: kg (knowledge graph, use_kg), raptor (summary trees), keywords (chat-model "
                         "keywords and questions per chunk). Repeat for several.")] = None,
) -> None:
    """Measure retrieval on a labelled set: keyword, vector, hybrid (and + reranker) side by side; with
    --answers, answer accuracy, citation support, refusals and latency too. The corpus is ingested in
    a scratch data directory of its own (deleted afterwards unless --keep), never in yours; --kb
    measures one of your knowledge bases instead, reading your data directory only."""
    from ragloom.evaluation import DEFAULT_MODES, run_eval, shipped_set
    from ragloom.evaluation.report import require_matplotlib
    from ragloom.evaluation.scratch import scratch_home

    if plot is not None:
        require_matplotlib()  # before any work, not after the whole run
    if directory.startswith("builtin:"):
        try:
            folder = shipped_set(directory.removeprefix("builtin:"))
        except ValueError as exc:
            raise RagloomError(str(exc)) from exc
    else:
        folder = Path(directory)
    if state.url:
        raise RagloomError("eval works on a data directory; run it without --url")
    with Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeElapsedColumn(),
                  console=err, disable=state.json, transient=True) as bar:
        tasks: dict[str, Any] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        def run(ctx: Context, principal: Principal) -> EvalReport:
            return run_eval(ctx, principal, folder, kb=kb, modes=tuple(mode or DEFAULT_MODES), top_k=top_k,
                            plot=plot, keep=keep, progress=progress, answers=answers, max_queries=limit,
                            max_corpus=corpus_limit, grade_order=grade_order, enrich=tuple(enrich or ()),
                            corpus_root=corpus, language=language)

        if kb is not None:
            client = state.client()
            if not isinstance(client, LocalClient):
                raise RagloomError("eval works on a data directory; run it without --url")
            report = run(client.ctx, client.principal)
        else:
            with scratch_home(state.settings(), keep=keep) as scratch:
                report = run(scratch.ctx, scratch.principal)
            report.notes.extend(scratch.notes)
            if keep:
                report.notes.append(f"scratch data directory kept: {scratch.home} "
                                    f"(RAGLOOM_HOME={scratch.home} ragloom kb list)")
                err.print(f"Scratch data directory kept: {scratch.home}")
    emit(report.to_dict(), report.render())
