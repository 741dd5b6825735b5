"""``ragloom mcp``: the MCP server (:mod:`ragloom.cli.mcp_server`) on stdin/stdout, for an MCP client
(Claude Desktop, an IDE, an agent) to launch. With ``--url`` and ``--api-key`` its tools call that server
with that key's scope; without, the data directory in-process, as every command does. The ``mcp``
package is imported only when the command runs, so other commands do not pay for it."""

from __future__ import annotations

from typing import Annotated

import typer

from ragloom.cli._app import app, state


@app.command("mcp")
def mcp_stdio(
    url: Annotated[str | None, typer.Option(envvar="RAGLOOM_URL", help="Server URL; without it the data "
                                                                       "directory is used in-process.")] = None,
    api_key: Annotated[str | None, typer.Option(envvar="RAGLOOM_API_KEY",
                                                help="API key for --url: the tools act with its scope.")] = None,
) -> None:
    """Serve MCP tools (list_knowledge_bases, search, ask) on stdin/stdout, for an MCP client to launch."""
    from ragloom.cli.mcp_server import build_server

    if url is not None:
        state.url = url
    if api_key is not None:
        state.api_key = api_key
    client = state.client()
    client.kb_list()  # a wrong URL or key fails here, with the server's message, not at the first tool call
    build_server(lambda _ctx: client).run("stdio")
