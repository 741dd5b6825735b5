"""API-key commands: ``keys create``, ``keys list`` and ``keys revoke`` (locally, as the data
directory's owner, or against a server with ``--url``); ``audit``, the workspace's audit log."""

from __future__ import annotations

from typing import Annotated

import typer

from ragloom.cli._app import CliTable, app, emit, keys_app, state


@keys_app.command("create")
def keys_create(
    name: Annotated[str, typer.Option(help="A label for the key.")] = "",
    scope: Annotated[str, typer.Option(help="read-write, or read (list, search and ask only).")] = "read-write",
    expires_in_days: Annotated[int | None, typer.Option("--expires-in-days", help="Refused after this many days "
                                                        "(default: never).")] = None,
) -> None:
    """Create an API key; its secret is shown this once."""
    key = state.client().key_create(name=name, scope=scope, expires_in_days=expires_in_days)
    emit({"api_key": key.key, **key.model_dump(mode="json")}, f"New API key ({key.scope}): [bold]{key.key}[/]")


@keys_app.command("list")
def keys_list() -> None:
    """Your API keys (every member's for an owner or admin): never their secrets."""
    keys = state.client().key_list()
    table = CliTable("id", "name", "prefix", "scope", "state", "created", "last used", "expires",
                     optional=("last used", "expires"))
    for k in keys:
        table.add_row(k.id, k.name, k.prefix + "...", k.scope, k.state, k.created_at or "", k.last_used_at or "",
                      k.expires_at or "")
    emit({"keys": keys}, table)


@keys_app.command("revoke")
def keys_revoke(key_id: str) -> None:
    """Revoke an API key: every request with it is refused from now on."""
    key = state.client().key_revoke(key_id)
    emit(key, f"Revoked API key {key.prefix}... ({key.id})")


@app.command("audit")
def audit(
    action: Annotated[str | None, typer.Option(help="Only this action, e.g. key.revoked or auth.failed.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=500, help="Newest events shown.")] = 50,
) -> None:
    """The workspace's audit log, newest first: who did what, when, from where (owners and admins)."""
    log = state.client().audit(action=action, limit=limit)
    table = CliTable("when", "action", "user", "target", "detail", "from", title=f"{log.total} events")
    for e in log.events:
        table.add_row(e.created_at or "", e.action, e.user_id or "", e.target, e.detail, e.origin)
    emit(log, table)
