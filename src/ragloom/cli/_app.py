"""The Typer application, its global options and the state every command shares.

The command modules (``server``, ``kb``, ``documents``, ``search``) import from here
and register themselves on ``app`` / ``kb_app`` / ``keys_app``; ``ragloom.cli``
imports them, so the order of those imports is the order ``--help`` lists commands in.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any

import typer
import typer.core
from pydantic import BaseModel
from rich import box
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.table import Table

from ragloom.client import Client, HttpClient, LocalClient, server_packages
from ragloom.config import Settings
from ragloom.errors import RagloomError
from ragloom.schemas.base import parse_json_object

if TYPE_CHECKING:
    # typer vendors click: the contexts it passes are this class (``typer.Context`` is a subclass).
    from typer._click import Context as ClickContext

    from ragloom.context import Context

JSON_FLAG = "--json"


class _JsonAnywhereGroup(typer.core.TyperGroup):
    """The root group: ``--json`` may come before or after the sub-command.

    ``--json`` is a global option (``main_options``); before click parses anything, every ``--json``
    found before a ``--`` is moved to the front, so ``ragloom search KB Q --json`` is
    ``ragloom --json search KB Q``. Done here rather than in ``main()`` so that every way of running
    the application (the console script, ``python -m ragloom.cli``, a test's ``CliRunner``) agrees."""

    def parse_args(self, ctx: ClickContext, args: list[str]) -> list[str]:
        return super().parse_args(ctx, hoist_json(args))


def hoist_json(args: list[str]) -> list[str]:
    """``args`` with every ``--json`` before a ``--`` moved to the front (once)."""
    end = args.index("--") if "--" in args else len(args)
    found = JSON_FLAG in args[:end]
    rest = [a for a in args[:end] if a != JSON_FLAG] + args[end:]
    return [JSON_FLAG, *rest] if found else rest


def _flag_type(self: typer.core.TyperOption, ctx: ClickContext) -> str | None:
    """Flags take no value, so ``--help`` shows no type after them (typer prints ``<bool>`` there)."""
    if self.is_flag or self.count:
        return None
    return _option_type(self, ctx)


_option_type = typer.core.TyperOption.display_type_rich
# typer has no hook for this: replace the method on the class (mypy forbids assigning to a method).
typer.core.TyperOption.display_type_rich = _flag_type  # type: ignore[method-assign]

app = typer.Typer(help="ragloom: ask your documents, get cited answers. --json (before or after the "
                  "command) prints one JSON document on stdout; messages go to stderr.", no_args_is_help=True,
                  pretty_exceptions_enable=False, cls=_JsonAnywhereGroup)
kb_app = typer.Typer(help="Knowledge bases.", no_args_is_help=True)
keys_app = typer.Typer(help="API keys.", no_args_is_help=True)
app.add_typer(kb_app, name="kb")
app.add_typer(keys_app, name="keys")

def _pipe_width() -> int | None:
    """Piped without COLUMNS set: no width limit, so every table row stays on one line (grep-able)."""
    return None if "COLUMNS" in os.environ or sys.stdout.isatty() else 1000


out = Console(soft_wrap=True, width=_pipe_width())  # never break an API key or a path across lines
err = Console(stderr=True, soft_wrap=True)
log = logging.getLogger("ragloom.cli")


class State:
    def __init__(self) -> None:
        self.home: Path | None = None
        self.url: str | None = None
        self.api_key: str | None = None
        self.json = False
        self.stdout: IO[str] | None = None  # the real stdout while --json sends everything else to stderr
        self._client: Client | None = None
        self._ctx: Context | None = None

    def settings(self) -> Settings:
        return Settings(home=self.home) if self.home else Settings()

    def context(self) -> Context:
        """The data directory's context (local mode: needs the server extra)."""
        if self._ctx is None:
            with server_packages():
                from ragloom.context import Context

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
                with server_packages():
                    from ragloom.service.accounts import identity

                ctx = self.context()
                with ctx.db.session() as s:
                    boot = identity.bootstrap(s)
                if boot.new_key is not None:
                    err.print(f"[bold]Created the default tenant. Admin API key (shown once):[/] {boot.new_key.key}")
                    err.print(f"Sign in as {identity.ADMIN_EMAIL} with the password {boot.password} (shown once)")
                self._client = LocalClient(ctx, boot.principal)
        return self._client


state = State()


def jsonable(data: object) -> object:
    """``data`` as JSON values: an API model (:mod:`ragloom.schemas`, what the client returns) as the API
    sends it (``model_dump(mode="json")``: its fields in order, absent-unless fields left out), also inside
    the dicts and lists a command wraps results in."""
    if isinstance(data, BaseModel):
        return data.model_dump(mode="json")
    if isinstance(data, dict):
        return {k: jsonable(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [jsonable(v) for v in data]
    return data


def emit(data: object, human: RenderableType | None = None) -> None:
    """Print JSON with --json (API models as the API's JSON: :func:`jsonable`), else the human rendering
    (a Rich renderable or text)."""
    if state.json:
        stream = state.stdout or sys.stdout
        stream.write(json.dumps(jsonable(data), ensure_ascii=False, indent=2) + "\n")
        stream.flush()
    elif human is not None:
        out.print(human)


def _json_stdout(ctx: ClickContext) -> None:
    """Under --json stdout carries exactly one JSON document: until the command ends, anything else
    written to ``sys.stdout`` (a stray print, a console message) goes to stderr; ``emit`` writes the
    JSON to the real stdout."""
    real = sys.stdout
    state.stdout = real
    sys.stdout = sys.stderr

    def restore() -> None:
        if sys.stdout is sys.stderr:
            sys.stdout = real
        state.stdout = None

    ctx.call_on_close(restore)


class CliTable:
    """A table that fits where it is printed.

    On a wide terminal it is an ordinary Rich table. Narrower than 100 columns, the ``optional``
    columns are left out and the borders thinned; piped (not a terminal) the borders are plain. No
    cell is ever cut with an ellipsis: long names and ids wrap (fold) instead, so an id can be copied."""

    NARROW = 100

    def __init__(self, *headers: str, title: str | None = None, caption: str | None = None,
                 show_header: bool = True, optional: Iterable[str] = (), fluid: Iterable[str] = ()) -> None:
        self.headers = list(headers)
        self.title, self.caption, self.show_header = title, caption, show_header
        self.optional, self.fluid = set(optional), set(fluid)
        self.rows: list[tuple[str, ...]] = []

    def add_row(self, *cells: str) -> None:
        self.rows.append(cells)

    def render(self, width: int, terminal: bool) -> Table:
        narrow = width < self.NARROW
        keep = [i for i, h in enumerate(self.headers) if not (narrow and h in self.optional)]
        plain = narrow or not terminal
        table = Table(title=self.title, caption=self.caption, show_header=self.show_header,
                      box=box.SIMPLE_HEAD if plain else box.HEAVY_HEAD, show_edge=not plain)
        for i in keep:
            h = self.headers[i]
            table.add_column(h, overflow="fold", min_width=20 if h in self.fluid else None)
        for row in self.rows:
            table.add_row(*(row[i] for i in keep))
        return table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.render(options.max_width, console.is_terminal)


@app.callback()
def main_options(
    ctx: typer.Context,
    home: Annotated[Path | None, typer.Option(envvar="RAGLOOM_HOME", help="Data directory.")] = None,
    url: Annotated[str | None, typer.Option(envvar="RAGLOOM_URL", help="Server URL (http://127.0.0.1:9380).")] = None,
    api_key: Annotated[str | None, typer.Option(envvar="RAGLOOM_API_KEY", help="API key for --url.")] = None,
    json_out: Annotated[bool, typer.Option(JSON_FLAG, help="Machine-readable output: one JSON document on "
                                                          "stdout (also accepted after the command).")] = False,
    log_level: Annotated[str, typer.Option(envvar="RAGLOOM_LOG_LEVEL", help="Level of ragloom's own log "
                                                                             "lines on stderr.")] = "WARNING",
    verbose: Annotated[bool, typer.Option("--verbose", envvar="RAGLOOM_VERBOSE", help="Log at INFO, third-party "
                                          "libraries' lines too (OCR and layout models, onnxruntime...): "
                                          "without it they show warnings and errors only.")] = False,
) -> None:
    from ragloom.logs import setup_logging

    level = "INFO" if verbose and logging.getLevelName(log_level.upper()) in (logging.WARNING, logging.ERROR,
                                                                            logging.CRITICAL) else log_level
    setup_logging(level, verbose_libraries=verbose)
    state.home, state.url, state.api_key, state.json = home, url, api_key, json_out
    if json_out:
        _json_stdout(ctx)


# ---------------------------------------------------------------- options shared by several commands


def _config(text: str | None) -> dict[str, Any] | None:
    return None if text is None else parse_json_object(text, "--config")


MethodOpt = Annotated[str | None, typer.Option("--method", help="Chunk method (naive, title, qa, table, ...).")]
ConfigOpt = Annotated[str | None, typer.Option("--config", help="Chunking parameters as a JSON object.")]
