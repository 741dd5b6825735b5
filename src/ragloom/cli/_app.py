"""The Typer application, its global options and the state every command shares.

The command modules (``server``, ``kb``, ``documents``, ``search``) import from here
and register themselves on ``app`` / ``kb_app`` / ``keys_app``; ``ragloom.cli``
imports them, so the order of those imports is the order ``--help`` lists commands in.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from ragloom.client import Client, HttpClient, LocalClient
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


# ---------------------------------------------------------------- options shared by several commands


def _config(text: str | None) -> dict[str, Any] | None:
    from ragloom.service.knowledgebases import parse_config_json

    return None if text is None else parse_config_json(text, "--config")


MethodOpt = Annotated[str | None, typer.Option("--method", help="Chunk method (naive, title, qa, table, ...).")]
ConfigOpt = Annotated[str | None, typer.Option("--config", help="Chunking parameters as a JSON object.")]
