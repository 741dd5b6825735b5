"""The ``ragloom`` command line (Typer + Rich).

Every command works on ``RAGLOOM_HOME`` directly, or against a server with
``--url`` and ``--api-key``. ``--json`` (before or after the sub-command: the root group moves
it to the front, see ``_app.hoist_json``) prints exactly one JSON document on stdout — logs,
progress and messages go to stderr; failures exit non-zero with a message on stderr (and, with
``--json``, a JSON error object on stdout).

The application, its global options and shared state live in ``_app``; the
commands are registered by importing their modules below, in the order
``--help`` lists them: ``server`` (init, serve, worker), ``quickstart`` (the sample documents),
``keys`` (create, list, revoke), ``users`` (list, password, signup: server administration),
``models`` (list, set, delete, test), ``documents`` (add, reindex, docs, chunks, parse), ``sources`` (kept in
sync), ``groups`` (readers of documents with source permissions), ``builds``
(build raptor, builds), ``search`` (search, ask, eval), ``chat`` (chat, assistants, sessions), ``kb``,
``maintenance`` (gc), ``mcp`` (the MCP server on stdio).
"""

from __future__ import annotations

import importlib
import json
import sys

from rich.markup import escape

from ragloom.cli._app import State, app, emit, err, kb_app, keys_app, main_options, out, state
from ragloom.client import server_packages
from ragloom.errors import RagloomError

# Importing a command module registers its commands; this order is the order ``--help`` lists them in.
for _module in ("server", "quickstart", "keys", "users", "models", "documents", "sources", "groups", "builds",
                "search", "chat", "shares", "kb", "maintenance", "mcp"):
    importlib.import_module(f"ragloom.cli.{_module}")

__all__ = ["State", "app", "emit", "err", "kb_app", "keys_app", "main", "main_options", "out", "state"]


def main() -> None:
    """Run the CLI; a RagloomError exits 2 with its message on stderr (and as JSON on stdout with --json).
    A package of the server extra that is not installed (the base install is the client alone) is one
    too, naming ``pip install 'ragloom[server]'`` (``ragloom.client.server_packages``)."""
    try:
        with server_packages():
            app()
    except RagloomError as exc:
        if state.json:
            sys.stdout.write(json.dumps({"error": type(exc).__name__, "message": exc.message}) + "\n")
        err.print(f"[red]error:[/] {escape(exc.message)}")  # "pip install 'ragloom[plot]'" shown as written
        sys.exit(2)
