"""Model-provider commands: ``models list``, ``models set``, ``models delete`` and ``models test`` — the
workspace's own chat, embedding and rerank models (locally, as the data directory's owner, or against a
server with ``--url``). An API key is never printed."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ragloom.cli._app import CliTable, app, emit, state
from ragloom.schemas.providers import ProviderInfo

models_app = typer.Typer(help="The workspace's own chat, embedding and rerank models (OpenAI-compatible APIs); "
                         "without them the server's (RAGLOOM_CHAT_*, RAGLOOM_EMBEDDING_*, RAGLOOM_RERANK_*).",
                         no_args_is_help=True)
app.add_typer(models_app, name="models")

KindArg = Annotated[str, typer.Argument(help="chat, embedding or rerank.")]


def _key_text(provider: ProviderInfo | None) -> str:
    if provider is None:
        return ""
    if not provider.has_api_key:
        return "none"
    return provider.api_key_hint or "set"


@models_app.command("list")
def models_list() -> None:
    """The model of each kind this workspace uses: its own provider's, else the server's (never an API key)."""
    res = state.client().provider_list()
    own = {p.kind: p for p in res.providers}
    table = CliTable("kind", "model", "source", "base url", "api key", "updated", optional=("updated",))
    for m in res.in_use:
        p = own.get(m.kind)
        table.add_row(m.kind, m.model or "-", m.source, p.base_url if p else "", _key_text(p),
                      (p.updated_at or "") if p else "")
    emit(res, table)


@models_app.command("set")
def models_set(
    kind: KindArg,
    base_url: Annotated[str, typer.Option("--base-url", help="The API's base URL, e.g. https://api.openai.com/v1 "
                                                             "or http://127.0.0.1:11434/v1.")],
    model: Annotated[str, typer.Option("--model", help="The model name sent to the API.")],
    api_key: Annotated[str | None, typer.Option(
        "--api-key", envvar="RAGLOOM_PROVIDER_API_KEY", show_default=False,
        help="The API key (stored encrypted, never shown). Not given: asked for on a terminal, else the stored "
        "key is kept (same base URL only); '' for none.")] = None,
) -> None:
    """Create or replace the workspace's provider of KIND (owners and admins)."""
    if api_key is None and sys.stdin.isatty():
        api_key = typer.prompt("API key (empty: keep the stored one, or none)", default="", hide_input=True,
                               show_default=False) or None
    provider = state.client().provider_set(kind, base_url=base_url, model=model, api_key=api_key)
    key = "an API key" if provider.has_api_key else "no API key"
    emit(provider, f"The workspace's {provider.kind} model is now [bold]{provider.model}[/] at "
                   f"{provider.base_url} ({key})")


@models_app.command("delete")
def models_delete(kind: KindArg) -> None:
    """Remove the workspace's provider of KIND: the server's default applies again."""
    state.client().provider_delete(kind)
    emit({"deleted": kind}, f"Deleted the workspace's {kind} provider; the server's default applies")


@models_app.command("test")
def models_test(kind: KindArg) -> None:
    """One minimal call with the workspace's provider of KIND; exits 1 when it fails."""
    res = state.client().provider_test(kind)
    verdict = "[green]ok[/]" if res.ok else "[red]failed[/]"
    emit(res, f"{verdict} {res.kind} model {res.model!r} ({res.latency_ms} ms): {res.message}")
    if not res.ok:
        raise typer.Exit(1)
