"""Sources kept in sync: ``ragloom sources add|list|show|sync|syncs|check|pause|resume|remove``.

``ragloom sources add KB --type folder --path DIR`` (or ``--type web --url URL``) adds a source;
``ragloom sources sync KB SOURCE`` syncs it now and, by default, waits for the sync and for the
documents it added or changed to be parsed (without a server, this process runs the work)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

import typer
from rich.console import Group
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from ragloom.cli._app import CliTable, app, emit, err, state
from ragloom.client import Client, HttpClient
from ragloom.errors import RagloomError
from ragloom.schemas.sources import Source, Sync
from ragloom.sdk import Ragloom

SYNC_TERMINAL = ("done", "failed", "cancelled")
DOC_TERMINAL = ("done", "failed", "cancelled")

sources_app = typer.Typer(help="Sources a knowledge base is kept in sync with (a folder, a web site, an S3 bucket, "
                               "a Git repository, a WebDAV folder, a mailbox, Confluence spaces, Notion pages).",
                          no_args_is_help=True)
app.add_typer(sources_app, name="sources")

WaitOpt = Annotated[bool, typer.Option("--wait/--no-wait", help="Wait until the sync is done and its documents "
                                                                 "are parsed.")]


def _sdk(client: Client) -> Ragloom:
    if not isinstance(client, HttpClient):
        raise RagloomError("sources need the API client")
    return client.api


def _counts(job: Sync | None) -> str:
    if job is None:
        return "never synced"
    st = job.stats
    return (f"{job.status}: {st.listed} listed, {st.new} new, {st.changed} changed, {st.deleted} deleted, "
            f"{st.unchanged} unchanged, {st.skipped} skipped, {st.failed} failed")


def _where(src: Source) -> str:
    settings = src.settings
    if "path" in settings:
        return str(settings["path"])
    if "urls" in settings:
        return ", ".join(str(u) for u in settings["urls"])
    for key in ("url", "repository", "bucket", "host", "api_url"):
        if key in settings:
            return str(settings[key])
    return ""


def _source_table(rows: list[Source], *, title: str) -> CliTable:
    table = CliTable("name", "type", "where", "schedule", "documents", "last sync", title=title,
                     optional=("schedule",), fluid=("where", "last sync"))
    for src in rows:
        every = f"every {src.schedule_minutes} min" if src.schedule_minutes else "manual"
        table.add_row(src.name, src.type, _where(src), every + (" (paused)" if src.paused else ""),
                      str(src.documents), _counts(src.last_sync))
    return table


def _sync_table(rows: list[Sync], *, title: str) -> Group:
    table = CliTable("id", "trigger", "status", "listed", "new", "changed", "deleted", "unchanged", "skipped",
                     "failed", "finished", title=title, optional=("id", "trigger", "finished"))
    errors = CliTable("sync", "item", "error", title="errors", fluid=("error",))
    for j in rows:
        st = j.stats
        table.add_row(j.id, j.trigger, j.status, str(st.listed), str(st.new), str(st.changed), str(st.deleted),
                      str(st.unchanged), str(st.skipped), str(st.failed), j.finished_at or "")
        for e in j.errors:
            errors.add_row(j.id[:8], e.item, e.message)
    return Group(table, errors) if errors.rows else Group(table)


@sources_app.command("add")
def add(kb: str,
        type_: Annotated[str, typer.Option("--type", help="folder or web here; s3, git, webdav, imap, confluence, "
                                                          "notion or a plugin's type through the API or SDK "
                                                          "(their settings and credentials).")],
        path: Annotated[Path | None, typer.Option(help="folder: the folder (inside RAGLOOM_SOURCE_ROOTS).")] = None,
        url: Annotated[list[str] | None, typer.Option(help="web: a start URL; repeat for several.")] = None,
        name: Annotated[str | None, typer.Option(help="Its name in the knowledge base (default: the folder's "
                                                      "name or the site's host).")] = None,
        every: Annotated[int | None, typer.Option(help="Sync every this many minutes (default: only when "
                                                        "asked).")] = None,
        include: Annotated[list[str] | None, typer.Option(help="Keep only paths matching this glob; repeat.")] = None,
        exclude: Annotated[list[str] | None, typer.Option(help="Leave out paths matching this glob; repeat.")] = None,
        types: Annotated[str | None, typer.Option(help="Keep only these file types, e.g. md,pdf.")] = None,
        max_size_mb: Annotated[float | None, typer.Option(help="Leave out items larger than this.")] = None,
        max_depth: Annotated[int | None, typer.Option(help="web: links followed from a start URL (default 2).")] = None,
        max_pages: Annotated[int | None, typer.Option(help="web: most pages (default 200).")] = None,
        reader: Annotated[list[str] | None, typer.Option(
            help="Who may read its items when the source does not say: user:<e-mail> or group:<name>; repeat. "
                 "Applied when the knowledge base has source permissions (ragloom kb set KB --source-permissions)."
        )] = None) -> None:
    """Add a source to a knowledge base (nothing is synced until `ragloom sources sync` or its schedule)."""
    settings: dict[str, Any] = {}
    if path is not None:
        settings["path"] = str(path.expanduser().resolve())
    if url:
        settings["urls"] = list(url)
    if max_depth is not None:
        settings["max_depth"] = max_depth
    if max_pages is not None:
        settings["max_pages"] = max_pages
    default = (path.name if path is not None else (urlsplit(url[0]).hostname or "") if url else "") or type_
    created = _sdk(state.client()).add_source(
        kb, name or default, type_, settings=settings, include=include, exclude=exclude,
        file_types=[t for t in types.split(",") if t.strip()] if types else None, max_size_mb=max_size_mb,
        schedule_minutes=every, readers=reader or [])
    emit(created.model_dump(mode="json"), f"Added the {created.type} source {created.name!r} to {kb} "
         f"({'every ' + str(every) + ' min' if every else 'synced when asked: ragloom sources sync'})")


@sources_app.command("list")
def list_(kb: str) -> None:
    """A knowledge base's sources with their last sync."""
    listed = _sdk(state.client()).list_sources(kb)
    emit(listed.model_dump(mode="json"), _source_table(listed.sources, title=f"sources of {kb} ({listed.total})"))


@sources_app.command("show")
def show(kb: str, source: str) -> None:
    """One source: its settings, filters, schedule and recent syncs."""
    api = _sdk(state.client())
    src = api.get_source(kb, source)
    history = api.list_syncs(kb, source, page_size=10)
    info = CliTable("", "", title=f"source {src.name} of {kb}", show_header=False, fluid=("",))
    for key, value in (("id", src.id), ("type", src.type), ("settings", src.settings),
                       ("filters", src.filters.model_dump(exclude_defaults=True) or "none"),
                       ("credentials", "stored" if src.has_credentials else "none"),
                       ("schedule", f"every {src.schedule_minutes} min" if src.schedule_minutes else "manual"),
                       ("paused", src.paused), ("next run", src.next_run_at or ""), ("documents", src.documents)):
        info.add_row(key, str(value))
    data = {"source": src.model_dump(mode="json"), "syncs": history.model_dump(mode="json")}
    emit(data, Group(info, _sync_table(history.syncs, title=f"syncs ({history.total})")))


@sources_app.command("sync")
def sync(kb: str, source: str, wait: WaitOpt = True) -> None:
    """Sync a source now: new and changed items become documents or new versions, the documents of items
    gone are deleted; unchanged items are not read."""
    client = state.client()
    api = _sdk(client)
    job = api.sync_source(kb, source)
    if not wait:
        emit(job.model_dump(mode="json"), f"Queued sync {job.id} of {source}"
             + ("" if state.url else " (it runs when `ragloom serve` or `ragloom worker` runs)"))
        return
    client.start_processing()
    try:
        with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=err,
                      disable=state.json, transient=True) as bar:
            task = bar.add_task("syncing")
            while job.status not in SYNC_TERMINAL:
                time.sleep(0.2)
                job = api.get_sync(kb, source, job.id)
                bar.update(task, description=f"syncing {source}: {job.message}"[:90])
            bar.update(task, description="parsing the documents")
            api.wait_for_documents(kb)
    finally:
        client.stop_processing()
    emit(job.model_dump(mode="json"), _sync_table([job], title=f"sync of {source}: {job.message}"))
    if job.status != "done":
        raise typer.Exit(1)


@sources_app.command("syncs")
def syncs(kb: str, source: str, limit: Annotated[int, typer.Option(help="How many, newest first.")] = 20) -> None:
    """A source's syncs, newest first, with their counts and errors."""
    history = _sdk(state.client()).list_syncs(kb, source, page_size=limit)
    emit(history.model_dump(mode="json"), _sync_table(history.syncs, title=f"syncs of {source} ({history.total})"))


@sources_app.command("check")
def check(kb: str, source: str) -> None:
    """Test a source's connection."""
    result = _sdk(state.client()).check_source(kb, source)
    emit(result.model_dump(mode="json"), ("ok: " if result.ok else "failed: ") + result.message)
    if not result.ok:
        raise typer.Exit(1)


@sources_app.command("pause")
def pause(kb: str, source: str) -> None:
    """Stop a source's scheduled syncs (a sync can still be asked for)."""
    src = _sdk(state.client()).pause_source(kb, source)
    emit(src.model_dump(mode="json"), f"Paused {src.name}")


@sources_app.command("resume")
def resume(kb: str, source: str) -> None:
    """Resume a source's scheduled syncs."""
    src = _sdk(state.client()).resume_source(kb, source)
    emit(src.model_dump(mode="json"), f"Resumed {src.name}")


@sources_app.command("remove")
def remove(kb: str, source: str,
           keep_documents: Annotated[bool, typer.Option(help="Keep the documents it made.")] = False) -> None:
    """Remove a source and (unless --keep-documents) the documents it made."""
    _sdk(state.client()).remove_source(kb, source, keep_documents=keep_documents)
    emit({"removed": source, "documents_kept": keep_documents},
         f"Removed {source}" + (" (its documents kept)" if keep_documents else " and its documents"))
