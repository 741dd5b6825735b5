"""Server-side commands: ``init``, ``serve`` and ``worker``."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from ragloom.cli._app import app, emit, out, state
from ragloom.errors import RagloomError

if TYPE_CHECKING:
    import uvicorn

    from ragloom.supervisor import WorkerPool


@app.command()
def init() -> None:
    """Create the data directory, the database, the default tenant and an admin API key."""
    from ragloom.service import accounts

    ctx = state.context()
    with ctx.db.session() as s:
        boot = accounts.bootstrap(s)
    key = boot.new_key.key if boot.new_key else None
    emit({"home": str(ctx.settings.home), "tenant_id": boot.principal.tenant_id, "api_key": key,
          "admin_email": accounts.ADMIN_EMAIL if boot.password else None, "admin_password": boot.password},
         f"Data directory: {ctx.settings.home}\n"
         + (f"Admin API key (shown once, keep it): [bold]{key}[/]\n{sign_in_line(boot.password)}" if key
            else "Already initialised; no new key."))


def sign_in_line(password: str | None) -> str:
    """How the first administrator signs in, said once."""
    from ragloom.service import accounts

    return (f"Sign in as [bold]{accounts.ADMIN_EMAIL}[/] with the password [bold]{password}[/] (shown once; "
            "change it with POST /api/v1/auth/password; `ragloom users password EMAIL` sets a new one)"
            ) if password else ""


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Listen address.")] = None,
    port: Annotated[int | None, typer.Option(help="Port.")] = None,
    workers: Annotated[int | None, typer.Option(help="Embedded ingestion worker processes.")] = None,
    no_workers: Annotated[bool, typer.Option(
        "--no-workers", help="Serve the API only: the tasks are run by `ragloom worker` processes, on this "
                             "machine or others sharing the database, object store and search store.")] = False,
) -> None:
    """Serve the API and status page with supervised workers. Ctrl-C or SIGTERM drains and stops everything."""
    import uvicorn

    from ragloom.api.app import create_app
    from ragloom.cli.mcp_server import mount_http
    from ragloom.service import accounts
    from ragloom.supervisor import WorkerPool

    settings = state.settings()
    if no_workers and workers:
        raise typer.BadParameter("--no-workers runs no worker; leave out --workers", param_hint="--workers")
    updates = {k: v for k, v in (("host", host), ("port", port), ("workers", 0 if no_workers else workers))
               if v is not None}
    settings = settings.model_copy(update=updates)
    _check_port_free(settings.host, settings.port)  # before any worker starts
    ctx = state.context()
    with ctx.db.session() as s:
        boot = accounts.bootstrap(s)
    if boot.new_key:
        out.print(f"[bold green]Admin API key (shown once, keep it):[/] {boot.new_key.key}")
        out.print(sign_in_line(boot.password))
    pool = WorkerPool(settings, settings.workers, ctx=ctx).start()
    api = create_app(context=ctx, pool=pool)
    mount_http(api)  # the MCP tools at /mcp (cli/mcp_server.py)
    server = uvicorn.Server(uvicorn.Config(api, host=settings.host,
                                           port=settings.port, log_level="warning", timeout_graceful_shutdown=10))
    _announce_when_listening(server, f"ragloom serving on http://{settings.host}:{settings.port} "
                             f"(data: {settings.home}, "
                             + (f"{settings.workers} workers" if settings.workers else
                                "no workers here: `ragloom worker` runs the tasks")
                             + f"; web UI: "
                             f"http://{settings.host}:{settings.port}/ui/) — Ctrl-C to stop")
    with _stop_signals(pool, server):
        try:
            server.run()
        finally:
            out.print("stopping: workers hand their tasks back")
            pool.stop()
            ctx.close()
    out.print("stopped")


def _check_port_free(host: str, port: int) -> None:
    """Fail with a clear error (exit 2) when ``host:port`` cannot be listened on, e.g. another server has it."""
    import errno
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise RagloomError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: TIME_WAIT is no clash
        try:
            sock.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise RagloomError(f"port {port} is in use (on {host}); stop what listens there or pass "
                                   "--port") from exc
            raise RagloomError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc


def _announce_when_listening(server: uvicorn.Server, line: str) -> None:
    """Print ``line`` once ``server`` is accepting connections, never if it fails to start."""

    def wait() -> None:
        while not server.should_exit:
            if server.started:
                out.print(line)
                return
            time.sleep(0.05)

    threading.Thread(target=wait, name="ragloom-announce", daemon=True).start()


@app.command()
def worker(
    processes: Annotated[int, typer.Option(min=1, help="Worker processes to run and supervise.")] = 1,
) -> None:
    """Run ingestion workers in the foreground, supervised (restarted when they die). Ctrl-C or SIGTERM
    drains and stops them."""
    from ragloom.supervisor import WorkerPool

    settings = state.settings()
    ctx = state.context()  # migrations
    pool = WorkerPool(settings, processes, ctx=ctx).start()
    done = threading.Event()
    out.print(f"{processes} ragloom worker(s) running on {settings.home} — Ctrl-C to stop")
    with _stop_signals(pool, None, done):
        try:
            done.wait()
        finally:
            pool.stop()
    out.print("stopped")


@contextmanager
def _stop_signals(pool: WorkerPool, server: uvicorn.Server | None,
                  done: threading.Event | None = None) -> Iterator[None]:
    """SIGTERM (systemd, Docker) and SIGINT (Ctrl-C) both stop the server, then drain the pool; a
    second signal while draining kills the workers at once.

    uvicorn replaces these handlers while it serves, restores them when it stops and then
    re-raises the signal it caught: the restored handler must take that without dying (the
    default SIGTERM action would end the process before the workers are stopped)."""
    import signal

    caught: list[int] = []

    def handle(sig: int, _frame: object) -> None:
        caught.append(sig)
        if server is not None and not server.should_exit:
            server.should_exit = True
            return
        if done is not None and not done.is_set():
            done.set()
            return
        if len(caught) >= 2:  # the first was the one uvicorn re-raised, or the one that set `done`
            pool.kill()

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
