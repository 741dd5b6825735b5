"""Server-side commands: ``init``, ``serve`` and ``worker``.

``serve`` shows the first administrator's API key and password once, written straight to the
terminal (never a log record). When its output is no terminal — a service manager, a container, a
redirected log — they go to :data:`CREDENTIALS_FILE` in the data directory instead (mode 0600), and
the output only says where.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ragloom.cli._app import app, emit, out, state
from ragloom.config import Settings
from ragloom.errors import RagloomError

if TYPE_CHECKING:
    import uvicorn

    from ragloom.service.accounts.identity import Bootstrap
    from ragloom.supervisor import WorkerPool

CREDENTIALS_FILE = "first-admin.txt"
"""Where ``serve`` leaves the first administrator's key and password when its output is no terminal."""


@app.command()
def init() -> None:
    """Create the data directory, the database, the default tenant and an admin API key."""
    from ragloom.service.accounts import identity

    ctx = state.context()
    with ctx.db.session() as s:
        boot = identity.bootstrap(s)
    key = boot.new_key.key if boot.new_key else None
    emit({"home": str(ctx.settings.home), "tenant_id": boot.principal.tenant_id, "api_key": key,
          "admin_email": identity.ADMIN_EMAIL if boot.password else None, "admin_password": boot.password},
         f"Data directory: {ctx.settings.home}\n"
         + (f"Admin API key (shown once, keep it): [bold]{key}[/]\n{sign_in_line(boot.password)}" if key
            else "Already initialised; no new key."))


def sign_in_line(password: str | None) -> str:
    """How the first administrator signs in, said once."""
    from ragloom.service.accounts import identity

    return (f"Sign in as [bold]{identity.ADMIN_EMAIL}[/] with the password [bold]{password}[/] (shown once; "
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
    from ragloom.service.accounts import identity
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
        boot = identity.bootstrap(s)
    if boot.new_key:
        show_first_admin(boot, settings.home, terminal=sys.stdout.isatty())
        out.print(quickstart_hint(settings.home))
    pool = WorkerPool(settings, settings.workers, ctx=ctx).start()
    api = create_app(context=ctx, pool=pool)
    mount_http(api)  # the MCP tools at /mcp (cli/mcp_server.py)
    server = uvicorn.Server(uvicorn.Config(api, host=settings.host, port=settings.port, log_level="warning",
                                           timeout_graceful_shutdown=10,
                                           http=header_deadline_protocol(settings.header_timeout_seconds)))
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


def show_first_admin(boot: Bootstrap, home: Path, *, terminal: bool) -> None:
    """The first administrator's key and password, once: on the terminal, else in a file only this
    user may read (see the module's docstring)."""
    from ragloom.service.accounts import identity

    assert boot.new_key is not None
    if terminal:
        out.print(f"[bold green]Admin API key (shown once, keep it):[/] {boot.new_key.key}")
        out.print(sign_in_line(boot.password))
        return
    path = home / CREDENTIALS_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        os.fchmod(f.fileno(), 0o600)
        f.write("# ragloom's first administrator: keep these, then delete this file\n"
                f"api_key={boot.new_key.key}\nemail={identity.ADMIN_EMAIL}\npassword={boot.password}\n")
    out.print(f"The first administrator's API key and password are in {path} (readable by this user only): "
              "keep them, then delete the file")


def quickstart_hint(home: Path) -> str:
    """The line of the first start that points at ``ragloom quickstart`` (sample documents to try)."""
    default = Path(Settings.model_fields["home"].default)  # the data directory without --home or RAGLOOM_HOME
    program = ".venv/bin/ragloom" if Path(".venv/bin/ragloom").exists() else "ragloom"
    where = "" if home.resolve() == default.resolve() else f" --home {shlex.quote(str(home))}"
    return (f"To try it with sample documents, run `{program}{where} quickstart` in another terminal: it loads "
            "them into a knowledge base 'samples' with an assistant 'sample helper' and prints questions to ask")


def header_deadline_protocol(seconds: float) -> type[asyncio.Protocol]:
    """uvicorn's HTTP/1.1 protocol (h11) with a deadline on a request's headers.

    uvicorn bounds an idle kept-alive connection (``timeout_keep_alive``) but not one that has started
    a request and never finishes its headers: it is held open for good, one socket per slow client. A
    connection here gets ``seconds`` from its start, and from the first byte of each next request, to
    complete the request's headers; then it is closed. A body, and the app's time to answer, are not
    bounded by it."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderDeadline(H11Protocol):
        deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                if self.deadline is None and self.conn.trailing_data[0]:
                    self._arm()  # the next request has begun
            else:
                self._disarm()  # its headers are in

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._disarm()  # idle between requests: timeout_keep_alive's; armed again by the next byte
            if self.conn.their_state is h11.IDLE and self.conn.trailing_data[0]:
                self._arm()  # a pipelined request that is not complete yet

        def _arm(self) -> None:
            self._disarm()
            self.deadline = self.loop.call_later(seconds, self._expired)

        def _disarm(self) -> None:
            if self.deadline is not None:
                self.deadline.cancel()
                self.deadline = None

        def _expired(self) -> None:
            self.deadline = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return HeaderDeadline


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
