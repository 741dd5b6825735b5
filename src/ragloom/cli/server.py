"""Server-side commands: ``init``, ``serve``, ``worker`` and ``keys create``."""

from __future__ import annotations

from typing import Annotated

import typer

from ragloom.cli._app import app, emit, keys_app, out, state


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
