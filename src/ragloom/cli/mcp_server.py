"""An MCP server (the ``mcp`` package): tools that list the caller's knowledge bases, search them and
answer from them with citations.

Two transports share the tools:

- stdio: ``ragloom mcp`` (``--url`` and ``--api-key`` for a server, else the data directory in-process,
  as every command); its tools act with that key's scope.
- HTTP: ``ragloom serve`` mounts :func:`mount_http` — MCP's streamable HTTP at ``/mcp`` on the API's
  port. Each request needs ``Authorization: Bearer <key>`` (else 401, with a JSON-RPC error), and its
  tool calls act with *that request's* key, whoever opened the session.

Either way a tool calls the REST API through :class:`ragloom.client.HttpClient` — over the network,
or in-process (the CLI's local mode, and ``/mcp``, which calls the app it is mounted on with the
request's key: the same authentication, scope and rate limits as any API call) — never a use case.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from mcp.server.mcpserver import Context as McpContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import Field
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ragloom import __version__
from ragloom.client import LOCAL_URL, Client, HttpClient
from ragloom.errors import AuthenticationError, RagloomError
from ragloom.schemas.mcp import AnswerReference, CitedAnswer, FoundChunk, KnowledgeBase, KnowledgeBases, SearchResult

MCP_PATH = "/mcp"
T = TypeVar("T")

INSTRUCTIONS = ("ragloom is a document knowledge base. Call list_knowledge_bases to see the knowledge bases "
                "you may read, search to find the passages (with document and page) that match a question, "
                "and ask for an answer that cites its sources as [ID:n].")


# --- what the tools return ------------------------------------------------------------------------


def _pages(positions: Sequence[Sequence[float]]) -> list[int]:
    return sorted({int(p[0]) for p in positions if int(p[0]) > 0})  # 0: the HTML view


def _first(pages: list[int]) -> int | None:
    return pages[0] if pages else None


# --- the tools ------------------------------------------------------------------------------------

ClientFor = Callable[[McpContext], Client]
KnowledgeBasesArg = Annotated[list[str], Field(
    min_length=1, max_length=100,
    description="knowledge base ids or names (from list_knowledge_bases), searched together")]
QuestionArg = Annotated[str, Field(min_length=1, max_length=4000)]


def build_server(client_for: ClientFor) -> MCPServer:
    """The MCP server whose tools call the API through ``client_for(context)`` (a client per call or one
    for all); an API error becomes the tool's error, with the API's message."""
    server: MCPServer = MCPServer("ragloom", version=__version__, instructions=INSTRUCTIONS,
                                  log_level="WARNING")

    def call(ctx: McpContext, method: Callable[[Client], T]) -> T:
        try:
            return method(client_for(ctx))
        except RagloomError as exc:
            raise ToolError(exc.message) from exc

    @server.tool()
    def list_knowledge_bases(ctx: McpContext) -> KnowledgeBases:
        """The knowledge bases you may read: id, name, description, language and document count."""
        listed = call(ctx, lambda c: c.kb_list())
        return KnowledgeBases(knowledge_bases=[
            KnowledgeBase(id=d.id, name=d.name, description=d.description, language=d.language,
                          documents=d.document_count) for d in listed])

    @server.tool()
    def search(question: QuestionArg, knowledge_bases: KnowledgeBasesArg, ctx: McpContext,
               top_n: Annotated[int, Field(ge=1, le=64, description="chunks to return")] = 6) -> SearchResult:
        """The passages of the knowledge bases that best match the question, best first, each with its
        document, page and score (hybrid full-text and vector search)."""
        found = call(ctx, lambda c: c.search(knowledge_bases, question, top_n=top_n))
        return SearchResult(total=found.total, chunks=[
            FoundChunk(document=c.document_name, document_id=c.doc_id, knowledge_base_id=c.kb_id,
                       page=_first(_pages(c.positions)), pages=_pages(c.positions),
                       score=c.similarity, text=c.content) for c in found.chunks])

    @server.tool()
    def ask(question: QuestionArg, knowledge_bases: KnowledgeBasesArg, ctx: McpContext,
            top_n: Annotated[int, Field(ge=1, le=64, description="passages the answer may use")] = 6) -> CitedAnswer:
        """An answer to the question from the knowledge bases, citing the passages it rests on as [ID:n];
        references lists each cited passage with its document and pages."""
        res = call(ctx, lambda c: c.ask(knowledge_bases, question, top_n=top_n))
        return CitedAnswer(answer=res.answer, model=res.model, insufficient=res.insufficient, references=[
            AnswerReference(id=r.id, document=r.document_name, document_id=r.doc_id,
                            pages=_pages(r.positions), text=r.content) for r in res.references])

    return server


# --- HTTP: /mcp on the API server -----------------------------------------------------------------

def _bearer_key(headers: Any) -> str:
    header = str(headers.get("authorization", "")) if headers is not None else ""
    scheme, _, key = header.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise ToolError("missing API key: send 'Authorization: Bearer <key>'")
    return key.strip()


def in_process_client(api: FastAPI, key: str) -> HttpClient:
    """An API client that calls ``api`` in this process with ``key``, as a request from outside would."""
    from fastapi.testclient import TestClient

    http = TestClient(api, base_url=LOCAL_URL + "/api/v1", headers={"Authorization": f"Bearer {key}"},
                      raise_server_exceptions=False)
    return HttpClient(LOCAL_URL, key, http=http)


UNAUTHORIZED = -32001  # a JSON-RPC server error (-32000..-32099): MCP reserves no code for a refused key


class _KeyRequired:
    """Lets a request through to ``inner`` only with a valid API key, else answers 401 with
    ``WWW-Authenticate: Bearer`` and a JSON-RPC error (what an MCP client reports) whose ``data`` is the
    API's error body."""

    def __init__(self, api: FastAPI, inner: ASGIApp) -> None:
        self.api, self.inner = api, inner

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from ragloom.api.deps import authenticate
        from ragloom.api.responses import error_body

        request = Request(scope)
        try:
            header = request.headers.get("authorization", "") or "Bearer "  # MCP clients: API keys only
            await anyio.to_thread.run_sync(authenticate, self.api.state.ctx, header, None)
        except AuthenticationError as exc:
            error = {"code": UNAUTHORIZED, "message": f"401: {exc.message}",
                     "data": error_body(type(exc).__name__, exc.message)}
            reply = JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, status_code=401,
                                 headers={"WWW-Authenticate": "Bearer"})
            await reply(scope, receive, send)
            return
        await self.inner(scope, receive, send)


def mount_http(api: FastAPI) -> MCPServer:
    """Serve the MCP tools at ``/mcp`` on ``api`` (streamable HTTP, stateless, JSON replies), each tool
    call acting with the Bearer key of its own request; the session manager runs with the app."""

    def client_for(ctx: McpContext) -> Client:
        return in_process_client(api, _bearer_key(ctx.headers))

    server = build_server(client_for)
    # DNS-rebinding protection (Host/Origin allow-lists) is off: every request needs an API key, which a
    # page rebound to this host does not have; the allow-lists would refuse the server's real host names.
    server.streamable_http_app(stateless_http=True, json_response=True,
                               transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    api.router.routes.append(Route(MCP_PATH, _KeyRequired(api, StreamableHTTPASGIApp(server.session_manager)),
                                   methods=["GET", "POST", "DELETE"], include_in_schema=False))
    served = api.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app_: FastAPI) -> AsyncIterator[Any]:
        async with served(app_) as app_state, server.session_manager.run():
            yield app_state

    api.router.lifespan_context = lifespan
    return server
