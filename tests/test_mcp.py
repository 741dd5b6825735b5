"""The MCP server (cli/mcp.py, cli/mcp_server.py) driven by the ``mcp`` package's own client against a real
``ragloom serve``: over stdio (``python -m ragloom.cli mcp --url ... --api-key ...`` spawned by the client,
and in-process on a data directory) and over streamable HTTP at ``/mcp`` on the server. Every tool is
listed and called; a key sees its own tenant's knowledge bases only; a bad key is a clear error."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx
import httpx2
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from ragloom.config import Settings
from ragloom.context import Context
from ragloom.service.accounts import identity
from tests.live import wait_documents
from tests.processes import admin_key, served

pytestmark = pytest.mark.slow

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[1]
QUESTION = "How often must the pump be serviced?"
NOTES = {
    "pump.md": "# Pump service\n\nThe pump must be serviced every 500 hours of operation.\n",
    "fan.md": "# Fan\n\nThe cooling fan runs at 1200 rpm and needs no service during its life.\n",
    "bread.md": "# Bread\n\nKnead the dough for ten minutes and let it rise for an hour before baking.\n",
}
TOOLS = {"list_knowledge_bases", "search", "ask"}


@dataclass
class Server:
    url: str
    home: Path
    key: str
    other_key: str
    kb: str
    other_kb: str


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("mcp") / "home"
    with served(home, workers_=1) as (_, url):
        key = admin_key(home, url)
        ctx = Context(Settings(home=home, _env_file=None))
        try:
            with ctx.db.session() as s:
                tenant, user = identity.create_tenant(s, name="neighbour", owner_email="neighbour@example.test")
                other_key = identity.create_api_key(s, tenant_id=tenant.id, user_id=user.id).key
        finally:
            ctx.close()
        ids = []
        for k, name, notes in ((key, "manuals", NOTES), (other_key, "secret-plans", {"plans.md": NOTES["pump.md"]})):
            api = httpx.Client(base_url=url + "/api/v1", headers={"Authorization": f"Bearer {k}"}, timeout=120)
            kb = api.post("/datasets", json={"name": name, "description": f"the {name}"}).json()["id"]
            api.post(f"/datasets/{kb}/documents", files=[("file", (n, t.encode())) for n, t in notes.items()])
            assert {d["status"] for d in wait_documents(api, kb)} == {"done"}
            ids.append(kb)
        yield Server(url, home, key, other_key, ids[0], ids[1])


def _run(fn: Callable[[], Awaitable[T]]) -> T:
    return anyio.run(fn)


def _stdio(args: list[str], home: Path, cwd: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "ragloom.cli", "mcp", *args], cwd=cwd,
                                 env={"RAGLOOM_HOME": str(home), "RAGLOOM_LOG_LEVEL": "WARNING"})


def _http(server: Server, key: str | None) -> Any:
    headers = {"Authorization": f"Bearer {key}"} if key is not None else {}
    return streamable_http_client(server.url + "/mcp", http_client=httpx2.AsyncClient(headers=headers, timeout=120))


def _mcp_error(exc: BaseException) -> MCPError | None:
    """The MCPError inside (possibly nested) exception groups."""
    if isinstance(exc, MCPError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _mcp_error(inner)
            if found is not None:
                return found
    return None


async def _every_tool(target: Any) -> dict[str, Any]:
    """List the tools and call each of them as a client would; the results, by name."""
    async with Client(target, read_timeout_seconds=120) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        kbs = await client.call_tool("list_knowledge_bases", {})
        names = [kb["name"] for kb in (kbs.structured_content or {})["knowledge_bases"]]
        mine = names[0] if names else "none"
        found = await client.call_tool("search", {"question": QUESTION, "knowledge_bases": [mine], "top_n": 2})
        answer = await client.call_tool("ask", {"question": QUESTION, "knowledge_bases": [mine]})
        foreign = await client.call_tool("search", {"question": QUESTION, "knowledge_bases": ["secret-plans"]})
        return {"tools": tools, "names": names, "search": found, "ask": answer, "foreign": foreign}


def _check_tools(result: dict[str, Any]) -> None:
    tools = result["tools"]
    assert set(tools) == TOOLS
    assert set(tools["search"].input_schema["required"]) == {"question", "knowledge_bases"}
    assert "top_n" in tools["search"].input_schema["properties"]
    assert set(tools["ask"].input_schema["required"]) == {"question", "knowledge_bases"}
    assert all(t.description for t in tools.values())


def _check_answers(result: dict[str, Any]) -> None:
    found = result["search"]
    assert not found.is_error, found.content
    chunks = found.structured_content["chunks"]
    assert 1 <= len(chunks) <= 2
    assert set(chunks[0]) == {"document", "document_id", "knowledge_base_id", "page", "pages", "score", "text"}
    assert chunks[0]["document"] == "pump.md" and "500 hours" in chunks[0]["text"]
    assert 0 <= chunks[0]["score"] <= 1 and chunks[0]["page"] == (chunks[0]["pages"] or [None])[0]
    answer = result["ask"]
    assert not answer.is_error, answer.content
    body = answer.structured_content
    assert "500 hours" in body["answer"] and "[ID:" in body["answer"]
    assert body["references"] and body["references"][0]["document"] == "pump.md"
    assert set(body) == {"answer", "model", "insufficient", "references"} and body["insufficient"] is False


def test_stdio_against_a_live_server(server: Server, tmp_path: Path) -> None:
    params = _stdio(["--url", server.url, "--api-key", server.key], tmp_path / "unused-home", tmp_path)
    result = _run(lambda: _every_tool(params))
    _check_tools(result)
    assert result["names"] == ["manuals"]  # the key's tenant only: the neighbour's knowledge base is not listed
    _check_answers(result)
    foreign = result["foreign"]  # ... nor searchable: it does not exist for this key
    assert foreign.is_error and "404: knowledge base 'secret-plans' not found" in foreign.content[0].text


def test_stdio_acts_with_the_keys_scope(server: Server, tmp_path: Path) -> None:
    params = _stdio(["--url", server.url, "--api-key", server.other_key], tmp_path / "unused-home", tmp_path)

    async def scenario() -> tuple[list[str], Any]:
        async with Client(params, read_timeout_seconds=120) as client:
            kbs = await client.call_tool("list_knowledge_bases", {})
            theirs = await client.call_tool("search", {"question": QUESTION, "knowledge_bases": [server.kb]})
            return [kb["id"] for kb in kbs.structured_content["knowledge_bases"]], theirs

    ids, theirs = _run(scenario)
    assert ids == [server.other_kb]
    assert theirs.is_error and "not found" in theirs.content[0].text


def test_stdio_with_a_bad_key_fails_clearly(server: Server, tmp_path: Path) -> None:
    params = _stdio(["--url", server.url, "--api-key", "rl-wrong"], tmp_path / "unused-home", tmp_path)
    log = tmp_path / "stderr.log"

    async def connect() -> None:
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
                await client.list_tools()

    with pytest.raises(BaseException) as caught:  # the server exits before the handshake
        _run(connect)
    assert not isinstance(caught.value, AssertionError)
    assert "401: invalid API key" in log.read_text()


def test_stdio_in_process_on_the_data_directory(server: Server, tmp_path: Path) -> None:
    """Without --url the tools use the data directory in-process, as the data directory's owner."""
    params = _stdio([], server.home, tmp_path)

    async def scenario() -> list[str]:
        async with Client(params, read_timeout_seconds=120) as client:
            kbs = await client.call_tool("list_knowledge_bases", {})
            return [kb["name"] for kb in kbs.structured_content["knowledge_bases"]]

    assert _run(scenario) == ["manuals"]


def test_http_on_the_api_server(server: Server) -> None:
    result = _run(lambda: _every_tool(_http(server, server.key)))
    _check_tools(result)
    assert result["names"] == ["manuals"]
    _check_answers(result)
    assert result["foreign"].is_error and "not found" in result["foreign"].content[0].text


def test_http_scope_is_each_requests_key(server: Server) -> None:
    other = _run(lambda: _every_tool(_http(server, server.other_key)))
    assert other["names"] == ["secret-plans"]
    assert not other["foreign"].is_error  # its own knowledge base


@pytest.mark.parametrize(("key", "message"), [("rl-wrong", "401: invalid API key"),
                                              (None, "401: missing API key")], ids=["bad", "none"])
def test_http_without_a_valid_key_is_refused(server: Server, key: str | None, message: str) -> None:
    async def connect() -> None:
        async with Client(_http(server, key), read_timeout_seconds=60) as client:
            await client.list_tools()

    with pytest.raises(BaseException) as caught:
        _run(connect)
    error = _mcp_error(caught.value)
    assert error is not None, caught.value
    assert str(error).startswith(message) or message in str(error)
    raw = httpx.post(server.url + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                     headers={"Authorization": f"Bearer {key}"} if key else {})
    assert raw.status_code == 401 and raw.headers["www-authenticate"] == "Bearer"
    assert raw.json()["error"]["data"]["error"] == "AuthenticationError"


def test_the_readmes_client_configuration(server: Server, tmp_path: Path) -> None:
    """The MCP client configuration the README shows, with this checkout's path, the server's URL and a key."""
    readme = (ROOT / "README.md").read_text()
    block = next(b for b in re.findall(r"```json\n(.*?)```", readme, re.S) if '"mcpServers"' in b)
    entry = json.loads(block)["mcpServers"]["ragloom"]
    assert entry["command"] == "/path/to/ragloom/.venv/bin/ragloom"
    params = StdioServerParameters(
        command=str(ROOT / ".venv" / "bin" / "ragloom"), cwd=tmp_path,
        args=[a.replace("http://127.0.0.1:9380", server.url) for a in entry["args"]],
        env={**{k: v.replace("<key>", server.key) for k, v in entry["env"].items()},
             "RAGLOOM_HOME": str(tmp_path / "unused-home")})

    async def scenario() -> tuple[set[str], list[str]]:
        async with Client(params, read_timeout_seconds=120) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            kbs = await client.call_tool("list_knowledge_bases", {})
            return tools, [kb["name"] for kb in kbs.structured_content["knowledge_bases"]]

    assert _run(scenario) == (TOOLS, ["manuals"])
    assert "http://127.0.0.1:9380/mcp" in readme and "ragloom mcp" in readme
