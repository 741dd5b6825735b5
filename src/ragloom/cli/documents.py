"""Document commands: ``add``, ``reindex``, ``docs`` (and a document's versions: ``docs versions``, ``docs diff``,
``docs rollback``), ``chunks`` and ``parse``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import typer.core
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

from ragloom.cli._app import CliTable, ConfigOpt, MethodOpt, _config, app, emit, err, state
from ragloom.client import TERMINAL, Client, LocalClient
from ragloom.errors import RagloomError
from ragloom.schemas.chunks import StoredChunk
from ragloom.schemas.documents import Document

if TYPE_CHECKING:
    from typer._click import Context as ClickContext


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
    stage: Annotated[bool, typer.Option("--stage", help="New versions wait, built, for review (`ragloom docs "
                                                        "publish` or `docs discard`) instead of going live.")]
    = False,
) -> None:
    """Add documents to a knowledge base; waits with a progress bar until they are parsed. A file whose
    name is already there becomes a new version of that document (its id, metadata and history kept)."""
    client = state.client()
    files = collect_files(paths)
    if not files:
        raise RagloomError("no files to add")
    docs: list[Document] = []
    for i in range(0, len(files), batch):
        docs.extend(client.upload(kb, [(f.name, f.read_bytes()) for f in files[i : i + batch]],
                                  chunk_method=method, parser_config=_config(config), stage=stage))
    if not wait:
        emit({"documents": docs}, f"Queued {len(docs)} documents"
             + ("" if state.url else " (they are parsed when `ragloom serve` or `ragloom worker` runs)"))
        return
    final = wait_parsed(client, kb, {d.id for d in docs})
    failed = [d for d in final if d.status != "done"]
    if failed:
        table = CliTable("document", "status", "reason", title="Not added", fluid=("reason",))
        for d in failed:
            table.add_row(d.name, d.status, d.message)
        emit({"documents": final, "failed": len(failed)}, table)
        raise typer.Exit(1)
    chunks = sum(d.chunk_count for d in final)
    emit({"documents": final, "failed": 0}, f"Added {len(final)} documents ({chunks} chunks) to {kb}")


def wait_parsed(client: Client, kb: str, ids: set[str]) -> list[Document]:
    """Process (in local mode) and wait, with a progress bar on stderr, until the documents ``ids`` of ``kb``
    have finished (done, failed or cancelled); their final rows.

    Each round lists only the knowledge base's queued and running documents (fewer as the work goes on:
    a list of every document, ten thousand of them, each 0.3 s, took the worker's time in local mode,
    where both share one process), and waits at least nine times as long as the round took (the
    polling takes at most a tenth of the time); the final rows are read once, when none of ``ids`` is
    left unfinished."""
    client.start_processing()
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeElapsedColumn(),
                      console=err, disable=state.json, transient=True) as bar:
            task = bar.add_task("parsing", total=len(ids))
            while True:
                started = time.perf_counter()
                # queued before running: a document that starts between the two calls is still seen (once)
                pending = list({d.id: d for status in ("queued", "running") for d in client.documents(kb, status=status)
                                if d.id in ids}.values())
                if not pending:
                    # a task retried between the calls (running, then queued again) was in neither list
                    mine = [d for d in client.documents(kb) if d.id in ids]
                    if all(d.status in TERMINAL for d in mine):
                        return mine
                    pending = [d for d in mine if d.status not in TERMINAL]
                finished = len(ids) - len(pending)
                running = [d for d in pending if d.status == "running"]
                desc = f"{finished}/{len(ids)} done" + (f" · {running[0].name}: {running[0].message}"
                                                        if running else "")
                bar.update(task, completed=finished + sum(d.progress for d in pending), description=desc[:80])
                time.sleep(max(0.3, 9 * (time.perf_counter() - started)))
    finally:
        client.stop_processing()


@app.command()
def reindex(
    kbs: Annotated[list[str] | None, typer.Argument(help="Knowledge bases (default: all).")] = None,
    drop: Annotated[bool, typer.Option("--drop", help="Delete and recreate the whole search index first; every "
                                                          "knowledge base is then re-parsed.")] = False,
    wait: Annotated[bool, typer.Option("--wait/--no-wait")] = True,
) -> None:
    """Rebuild the search index from the stored files (local mode): every document is parsed again."""
    from ragloom.service.documents import catalog

    client = state.client()
    if not isinstance(client, LocalClient):
        raise RagloomError("reindex works on the data directory; run it without --url")
    started = time.perf_counter()
    with client.ctx.db.session() as s:
        docs = catalog.reindex(client.ctx, s, principal=client.principal, kb_ids=kbs or None, drop=drop)
        by_kb: dict[str, set[str]] = {}
        for d in docs:
            by_kb.setdefault(d.kb_id, set()).add(d.id)
    count = sum(len(v) for v in by_kb.values())
    if not wait:
        emit({"reparsed": count}, f"Re-parsing {count} documents in {len(by_kb)} knowledge bases")
        return
    finished = [d for kb_id, ids in by_kb.items() for d in wait_parsed(client, kb_id, ids)]
    seconds = time.perf_counter() - started
    chunks = sum(d.chunk_count for d in finished if d.status == "done")
    failed = sum(1 for d in finished if d.status != "done")
    rate = f", {chunks / seconds:,.0f} chunks/s" if seconds > 0 and chunks else ""
    emit({"reparsed": count, "chunks": chunks, "failed": failed, "seconds": round(seconds, 1)},
         f"Re-parsed {count} documents in {len(by_kb)} knowledge bases: {chunks:,} chunks in {seconds:,.1f} s{rate}"
         + (f"; {failed} not done (see `ragloom docs KB`)" if failed else ""))


class _ListByDefault(typer.core.TyperGroup):
    """``ragloom docs KB`` lists the documents (``ragloom docs list KB``); ``ragloom docs versions ...``
    and the other sub-commands work on one document's versions."""

    def parse_args(self, ctx: ClickContext, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["list", *args]
        return super().parse_args(ctx, args)


docs_app = typer.Typer(help="A knowledge base's documents (`ragloom docs KB`), and a document's versions: list, "
                       "compare, roll back.", no_args_is_help=True, cls=_ListByDefault)
app.add_typer(docs_app, name="docs")


@docs_app.command("list")
def docs(kb: str) -> None:
    """List a knowledge base's documents with status and progress."""
    rows = state.client().documents(kb)
    table = CliTable("name", "status", "progress", "chunks", "message", optional=("progress",),
                     fluid=("message",))
    for d in rows:
        table.add_row(d.name, d.status, f"{d.progress:.0%}", str(d.chunk_count), d.message[:60])
    emit({"documents": rows}, table)


@docs_app.command("meta")
def docs_meta(
    kb: str, document: Annotated[str, typer.Argument(help="Name or id.")],
    pairs: Annotated[list[str] | None, typer.Argument(help="KEY=VALUE to set (a JSON list or number is read as "
                                                          "one: 'model=[\"X200\",\"X200S\"]'); KEY= removes it.")]
    = None,
) -> None:
    """Show or set a document's metadata (what metadata filters and an assistant's scope match), e.g.
    ``ragloom docs meta manuals x100.pdf model=X100 'firmware=>=2.1,<3'``."""
    import json

    changes: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise RagloomError(f"{pair!r}: give KEY=VALUE (KEY= removes the key)")
        parsed: Any = value
        if value == "":
            parsed = None
        elif value[:1] in "[0123456789-" or value in ("true", "false"):
            try:
                parsed = json.loads(value)
            except ValueError:
                parsed = value
        changes[key.strip()] = parsed
    client = state.client()
    doc: Document | None
    if changes:
        doc = client.set_metadata(kb, document, changes)
    else:
        doc = next((d for d in client.documents(kb) if document in (d.id, d.name)), None)
        if doc is None:
            raise RagloomError(f"document {document!r} not found in {kb!r}")
    meta = doc.metadata
    emit(doc, "\n".join(f"{k}: {v}" for k, v in meta.items()) or "no metadata")


@docs_app.command("versions")
def docs_versions(kb: str, document: Annotated[str, typer.Argument(help="Name or id.")]) -> None:
    """A document's versions, newest first: why and by whom each was made, its file, settings, chunks and
    coverage, and which one readers see (*)."""
    res = state.client().versions(kb, document)
    table = CliTable("", "version", "status", "created", "by", "why", "file", "method", "chunks", "coverage",
                     "kept", title=f"{document}: {len(res.versions)} versions",
                     optional=("created", "file", "method", "coverage"))
    for v in res.versions:
        cov = v.coverage or {}  # the schema's free-form coverage object (words, kept, ...)
        words = cov.get("words") or 0
        why = v.reason + (" · made live by hand" if v.published_by else "") + (
            " · waits for review" if v.staged and v.status == "ready" and not v.published_at else "")
        table.add_row("*" if v.active else "", str(v.number), v.status, (v.created_at or "")[:19],
                      v.created_by_name or v.created_by or "system", why, v.content_hash[:12],
                      v.chunk_method, str(v.chunk_count),
                      f"{cov.get('kept', 0) / words:.0%}" if words else "", "yes" if v.kept else "no")
    emit(res, table)


@docs_app.command("diff")
def docs_diff(
    kb: str, document: Annotated[str, typer.Argument(help="Name or id.")],
    from_version: Annotated[str | None, typer.Option("--from", help="Older version (default: the one before "
                                                                    "--to).")] = None,
    to_version: Annotated[str | None, typer.Option("--to", help="Newer version (default: the active one).")]
    = None,
) -> None:
    """What changed between two versions: chunks added (+), removed (-) and changed (~, the words it lost
    [-...-] and gained {+...+}), and a table chunk's cells."""
    res = state.client().version_diff(kb, document, from_version=from_version, to_version=to_version)
    table = CliTable("", "pages", "chunk", title=f"{document}: version {res.from_version} → {res.to_version}: "
                     f"{res.added} added, {res.removed} removed, {res.changed} changed, "
                     f"{res.unchanged} unchanged", fluid=("chunk",))
    signs = {"added": "+", "removed": "-", "changed": "~"}
    for c in res.changes:
        text = (c.marked if c.change == "changed" else (c.after or c.before)) or ""
        cells = "".join(f"\n  {x.row} · {x.column}: {x.before if x.before is not None else '∅'} → "
                        f"{x.after if x.after is not None else '∅'}" for x in c.cells)
        table.add_row(signs[c.change], ",".join(map(str, c.pages)),
                      escape(text[:400].replace("\n", " ")) + escape(cells))
    emit(res, table)


@docs_app.command("rollback")
def docs_rollback(
    kb: str, document: Annotated[str, typer.Argument(help="Name or id.")],
    version: Annotated[str, typer.Option("--version", "-v", help="The version to make live (number or id).")],
) -> None:
    """Make an earlier version the one readers see, at once (no parsing): searches and answers follow it.
    Only the last RAGLOOM_KEEP_VERSIONS versions keep their chunks."""
    doc = state.client().rollback(kb, document, version)
    emit(doc, f"{doc.name}: {doc.message} ({doc.chunk_count} chunks)")


@docs_app.command("publish")
def docs_publish(
    kb: str, document: Annotated[str, typer.Argument(help="Name or id.")],
    version: Annotated[str, typer.Option("--version", "-v", help="The staged version (number or id).")],
) -> None:
    """Publish a version that waits for review (added with --stage): readers see it at once."""
    doc = state.client().rollback(kb, document, version)
    emit(doc, f"{doc.name}: {doc.message} ({doc.chunk_count} chunks)")


@docs_app.command("discard")
def docs_discard(
    kb: str, document: Annotated[str, typer.Argument(help="Name or id.")],
    version: Annotated[str, typer.Option("--version", "-v", help="The staged version (number or id).")],
) -> None:
    """Turn down a version that waits for review: its chunks are dropped, readers keep what they see."""
    doc = state.client().discard(kb, document, version)
    emit(doc, f"{doc.name}: {doc.message}")


@app.command()
def chunks(kb: str, document: Annotated[str | None, typer.Argument(help="Name or id; all documents if left out.")]
           = None) -> None:
    """List a document's chunks in order: method, content, positions and table HTML."""
    client = state.client()
    names = [document] if document else [d.id for d in client.documents(kb) if d.status == "done"]
    rows: list[StoredChunk] = []
    for doc in names:
        rows.extend(client.chunks(kb, doc))
    table = CliTable("order", "method", "kind", "pages", "tags", "content", optional=("method", "tags"),
                     fluid=("content",))
    for c in rows:
        pages = ",".join(str(p) for p in dict.fromkeys(p[0] for p in c.positions if p[0] > 0))
        table.add_row(str(c.order), c.method, c.kind, pages, _tags_text(c), c.content[:150].replace("\n", " "))
    emit({"chunks": rows, "total": len(rows)}, table)


def _tags_text(chunk: StoredChunk) -> str:
    """A chunk's tags for a table cell: a tag-set row's own tags, else its given tags with weights."""
    if chunk.tag_keywords:
        return ", ".join(chunk.tag_keywords)
    return ", ".join(f"{t} {w:.3g}" for t, w in chunk.tags.items())


@app.command()
def parse(
    file: Path,
    method: Annotated[str, typer.Option("--method", help="Chunk method.")] = "naive",
    config: ConfigOpt = None,
) -> None:
    """Parse and chunk one file without adding it anywhere: see what a parser makes of it."""
    from ragloom.service.documents.chunks import preview_file

    if not file.is_file():
        raise RagloomError(f"no such file: {file}")
    preview = preview_file(file.read_bytes(), file.name, method=method, parser_config=_config(config) or {})
    kept = preview.coverage
    removed = "".join(f"; {n} characters removed as {why.replace('_', ' ')}" for why, n in kept.removed.items())
    title = (f"{file.name}: {len(preview.chunks)} chunks keeping {kept.kept} of {kept.words} words of the parsed text"
             f"{removed}")
    table = CliTable("order", "tokens", "kind", "pages", "content", title=title, fluid=("content",))
    for c in preview.chunks:
        pages = ",".join(str(p) for p in dict.fromkeys(p[0] for p in c.positions if p[0] > 0))
        table.add_row(str(c.order), str(c.tokens), c.kind, pages, c.content[:150].replace("\n", " "))
    emit(preview, table)
