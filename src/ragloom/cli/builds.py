"""Knowledge builds: ``ragloom build raptor|graph KB`` (with ``--estimate`` first), ``ragloom build delete KB
KIND``, ``ragloom builds KB``
and ``ragloom graph KB`` (the knowledge graph's top entities and communities)."""

from __future__ import annotations

import time
from typing import Annotated, Any

import typer
from rich.console import Group
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

from ragloom.cli._app import CliTable, app, emit, err, state
from ragloom.client import Client, HttpClient
from ragloom.errors import RagloomError
from ragloom.schemas.builds import Build, BuildEstimate
from ragloom.sdk import Ragloom

BUILD_TERMINAL = ("done", "failed", "cancelled")

build_app = typer.Typer(help="Build knowledge over a knowledge base's documents (RAPTOR summaries, a knowledge "
                        "graph).",
                        no_args_is_help=True)
app.add_typer(build_app, name="build")

DocumentOpt = Annotated[list[str] | None, typer.Option("--document", "-d", help="Only this document (name or id); "
                                                       "repeat for several. Default: every document.")]
EstimateOpt = Annotated[bool, typer.Option("--estimate", help="Only say what it would cost (chat-model calls "
                                                              "and tokens); build nothing.")]
WaitOpt = Annotated[bool, typer.Option("--wait/--no-wait", help="Wait with a progress bar until it is done.")]


def _sdk(client: Client) -> Ragloom:
    """The SDK behind the CLI's client (the server's API, or the same app in-process)."""
    if not isinstance(client, HttpClient):
        raise RagloomError("builds need the API client")
    return client.api


@build_app.command("raptor")
def build_raptor(kb: str, document: DocumentOpt = None, estimate: EstimateOpt = False, wait: WaitOpt = True) -> None:
    """RAPTOR summary trees: each document's chunks clustered and summarised layer by layer (by the chat
    model, or extractively without one); documents whose summaries are up to date are skipped."""
    _build(kb, "raptor", document, estimate=estimate, wait=wait)


@build_app.command("graph")
def build_graph(kb: str, document: DocumentOpt = None,
                method: Annotated[str | None, typer.Option(
                    help="offline (no chat model), light or general (the chat model); saved in the knowledge "
                    "base's graphrag settings. Default: its current one.")] = None,
                estimate: EstimateOpt = False, wait: WaitOpt = True) -> None:
    """The knowledge graph: each document's entities and relations extracted (documents up to date are
    skipped), merged into the knowledge base's graph with PageRank (and communities when asked)."""
    if method is not None:
        if method not in ("offline", "light", "general"):
            raise typer.BadParameter("one of offline, light, general", param_hint="--method")
        _sdk(state.client()).update_dataset(kb, graphrag={"method": method})
    _build(kb, "graph", document, estimate=estimate, wait=wait)


@build_app.command("delete")
def delete_built(kb: str, kind: Annotated[str, typer.Argument(help="raptor (every summary) or graph.")],
                 yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False) -> None:
    """Delete what builds of a kind made over a knowledge base: every RAPTOR summary, or the knowledge
    graph. Refused while a build of that kind waits or runs; the knowledge base's settings stay."""
    if not yes and not typer.confirm(f"Delete the {kind} knowledge of {kb}?"):
        raise typer.Exit(1)
    dropped = _sdk(state.client()).delete_knowledge(kb, kind)
    noun = "summaries" if dropped.kind == "raptor" else "entities"
    emit(dropped, f"{kb}: the {dropped.kind} knowledge is deleted ({dropped.removed} {noun})")


def _build(kb: str, kind: str, documents: list[str] | None, *, estimate: bool, wait: bool) -> None:
    client = state.client()
    api = _sdk(client)
    started = api.start_build(kb, kind, document_ids=documents, dry_run=estimate)
    if estimate:
        emit(started.model_dump(mode="json"), _estimate_table(started.estimate))
        return
    ids = [b.id for b in started.builds]
    if not wait:
        emit(started.model_dump(mode="json"), f"Queued {len(ids)} {kind} build(s) of {kb}"
             + ("" if state.url else " (they run when `ragloom serve` or `ragloom worker` runs)"))
        return
    final = _wait(client, api, kb, ids)
    data = {"builds": [b.model_dump(mode="json") for b in final], "estimate": started.estimate.model_dump(mode="json")}
    failed = [b for b in final if b.status != "done"]
    table = _builds_table(final, title=f"{kind} builds of {kb}")
    emit(data, table)
    if failed:
        raise typer.Exit(1)


def _wait(client: Client, api: Ragloom, kb: str, ids: list[str]) -> list[Build]:
    client.start_processing()
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeElapsedColumn(),
                      console=err, disable=state.json, transient=True) as bar:
            task = bar.add_task("waiting", total=len(ids))
            while True:
                builds = [api.get_build(kb, i) for i in ids]
                done = sum(1 for b in builds if b.status in BUILD_TERMINAL)
                running = next((b for b in builds if b.status == "running"), None)
                desc = f"{done}/{len(ids)} done" + (f" · {running.message}" if running else "")
                bar.update(task, completed=sum(1.0 if b.status in BUILD_TERMINAL else float(b.progress)
                                               for b in builds), description=desc[:90])
                if done >= len(ids):
                    return builds
                time.sleep(0.3)
    finally:
        client.stop_processing()


def _estimate_table(e: BuildEstimate) -> CliTable:
    table = CliTable("", "", title=f"{e.kind} build: estimate", caption=e.note, show_header=False)
    rows: list[tuple[str, Any]] = [
        ("mode", e.mode + (f" ({e.model})" if e.model else "")),
        ("documents", f"{e.documents_to_build} to build of {e.documents}"),
        ("chat-model calls", f"{e.llm_calls} ({e.llm_calls_cached} of the first layer already cached)"),
        ("prompt tokens", e.prompt_tokens),
        ("reply tokens (at most)", e.completion_tokens),
        *((k.replace("_", " "), v) for k, v in e.details.items()),
    ]
    for name, value in rows:
        table.add_row(name, str(value))
    return table


def _builds_table(rows: list[Build], *, title: str | None = None) -> CliTable:
    table = CliTable("id", "kind", "document", "status", "progress", "message", title=title,
                     optional=("progress", "document"), fluid=("message",))
    for b in rows:
        table.add_row(b.id, b.kind, b.document_id or "(all)", b.status, f"{float(b.progress):.0%}", b.message[:160])
    return table


@app.command("builds")
def list_builds(kb: str, kind: Annotated[str | None, typer.Option(help="Only builds of this kind.")] = None,
                limit: Annotated[int, typer.Option(help="How many, newest first.")] = 20) -> None:
    """A knowledge base's builds, newest first: status, progress, what they did and cost."""
    listed = _sdk(state.client()).list_builds(kb, kind=kind, page_size=limit)
    emit(listed.model_dump(mode="json"), _builds_table(listed.builds, title=f"builds of {kb} ({listed.total})"))


@app.command("graph")
def show_graph(kb: str, limit: Annotated[int, typer.Option(help="How many entities, by PageRank.")] = 20) -> None:
    """A knowledge base's knowledge graph: its top entities by PageRank and its communities."""
    view = _sdk(state.client()).get_graph(kb, limit=limit)
    entities = CliTable("entity", "type", "pagerank", "community", "documents",
                        title=f"knowledge graph of {kb}: {view.entities} entities, {view.relations} relations",
                        optional=("community", "documents"))
    for n in view.nodes:
        entities.add_row(n.name, n.type, f"{n.pagerank:.4f}", n.community or "", str(len(n.doc_ids)))
    tables = [entities]
    if view.communities:
        groups = CliTable("community", "level", "size", "title", title="communities", fluid=("title",))
        for c in view.communities:
            groups.add_row(c.id, str(c.level), str(c.size), c.title[:120])
        tables.append(groups)
    emit(view.model_dump(mode="json"), Group(*tables))
