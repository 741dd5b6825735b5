"""A workspace's providers reach only public addresses and the ranges an administrator allows (issue 24).

Server-side request forgery, reproduced on loopback: a live server whose administrator allows
``127.0.0.2/32`` (``RAGLOOM_OUTBOUND_ALLOW``) — a stand-in for a local Ollama — while ``127.0.0.1`` (the
server's own loopback, like every other address of 127/8, private, link-local or metadata range)
stays refused. Real HTTP servers stand for the providers: the OpenAI-compatible fake on each address,
and small scripted servers that redirect or answer with a page that is not JSON. Each refused call
is also checked on the refused server's side: it never got a request.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from sqlalchemy import update

from ragloom.config import Settings
from ragloom.db.models import ModelProvider
from ragloom.models.http import GuardedTransport, OutboundPolicy, address_kind
from ragloom.service.accounts import identity
from ragloom.worker import run_one
from tests.fakes.openai_server import FakeOpenAIServer
from tests.live import Live, live_server

pytestmark = pytest.mark.slow

ALLOWED = "127.0.0.2"  # the administrator's allowed range: 127.0.0.2/32
KEY = "sk-workspace-provider-key-wxyz"
SECRET = "INTERNAL-ONLY: db password hunter2"  # what an internal page holds


Reply = tuple[int, dict[str, str], bytes]


@dataclass
class Scripted:
    """A real HTTP server on ``host`` answering every request with ``reply(path)``; requests recorded."""

    host: str
    reply: Callable[[str], Reply]
    paths: list[str] = field(default_factory=list)
    _httpd: ThreadingHTTPServer | None = None

    def __enter__(self) -> Scripted:
        scripted = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                scripted.paths.append(self.path)
                status, headers, body = scripted.reply(self.path)
                self.send_response(status)
                for k, v in {**headers, "Content-Length": str(len(body))}.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer((self.host, 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._httpd is not None
        self._httpd.shutdown()
        self._httpd.server_close()

    @property
    def base_url(self) -> str:
        assert self._httpd is not None
        return f"http://{self.host}:{self._httpd.server_address[1]}/v1"


@dataclass
class World:
    live: Live
    api: httpx.Client  # the workspace owner's key
    member: httpx.Client  # a member's key, same workspace
    allowed: FakeOpenAIServer  # on 127.0.0.2
    denied: FakeOpenAIServer  # on 127.0.0.1


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    home = tmp_path_factory.mktemp("outbound") / "home"
    settings = Settings(home=home, workers=0, rate_limit_per_minute=0, outbound_allow=f"{ALLOWED}/32",
                        _env_file=None)  # type: ignore[arg-type]  # the environment's form: a string
    with FakeOpenAIServer(default_reply="pong", host=ALLOWED) as allowed, FakeOpenAIServer() as denied, \
            live_server(settings, workers=0) as live:
        with live.ctx.db.session() as s:
            boot = identity.bootstrap(s)
            assert boot.new_key is not None
            bo = identity.add_member(s, tenant_id=boot.principal.tenant_id, email="bo@example.com")
            member_key = identity.create_api_key(s, tenant_id=boot.principal.tenant_id, user_id=bo.id).key
        with live.client(boot.new_key.key) as api, live.client(member_key) as member:
            yield World(live, api, member, allowed, denied)


def _put(world: World, base_url: str, kind: str = "chat") -> httpx.Response:
    return world.api.put(f"/providers/{kind}", json={"base_url": base_url, "model": f"m-{kind}", "api_key": KEY})


def _test(world: World, kind: str = "chat") -> dict[str, Any]:
    res = world.api.post(f"/providers/{kind}/test")
    assert res.status_code == 200, res.text
    return dict(res.json())


def _stored_url(world: World, kind: str, base_url: str) -> None:
    """Make the stored provider point elsewhere, as a name that now resolves to another address would."""
    with world.live.ctx.db.session() as s:
        s.execute(update(ModelProvider).where(ModelProvider.kind == kind).values(base_url=base_url))


def _refused_addresses(denied: FakeOpenAIServer) -> list[tuple[str, str, str]]:
    port = denied.base_url.rsplit(":", 1)[1].split("/")[0]
    cases = [
        (f"http://127.0.0.1:{port}/v1", "127.0.0.1", "loopback"),
        (f"http://127.1:{port}/v1", "127.0.0.1", "loopback"),  # a short form of the same address
        (f"http://localhost:{port}/v1", "resolves to", "loopback"),  # a name
        (f"http://[::1]:{port}/v1", "::1", "loopback"),
        (f"http://[::ffff:127.0.0.1]:{port}/v1", "::ffff:", "loopback"),  # IPv4-mapped IPv6
        (f"http://0.0.0.0:{port}/v1", "0.0.0.0", "unspecified"),
        ("http://169.254.169.254/latest/meta-data", "169.254.169.254", "metadata"),
        ("http://[fd00:ec2::254]/latest", "fd00:ec2::254", "metadata"),
        ("http://10.0.0.5/v1", "10.0.0.5", "private"),
        ("https://192.168.1.20/v1", "192.168.1.20", "private"),
        ("http://172.16.0.1/v1", "172.16.0.1", "private"),
        ("http://100.64.0.1/v1", "100.64.0.1", "carrier-grade NAT"),
        ("http://[fe80::1]/v1", "fe80::1", "link-local"),
        ("http://224.0.0.1/v1", "224.0.0.1", "multicast"),
    ]
    host = socket.gethostname()  # this machine's own name: refused when it resolves to no public address
    try:
        own = {info[4][0] for info in socket.getaddrinfo(host, 80, type=socket.SOCK_STREAM)}
    except OSError:
        own = set()
    import ipaddress

    if own and any(address_kind(ipaddress.ip_address(a.split("%")[0])) for a in own):
        cases.append((f"http://{host}:{port}/v1", "resolves to", "address"))
    return cases


# --- the tests ------------------------------------------------------------------------------------

def test_a_base_url_that_resolves_to_a_refused_address_is_refused_when_set(world: World) -> None:
    for url, address, kind in _refused_addresses(world.denied):
        res = _put(world, url)
        message = res.json().get("message", "")
        assert res.status_code == 400, (url, res.status_code, res.text)
        assert address in message and kind in message and "RAGLOOM_OUTBOUND_ALLOW" in message, (url, message)
    assert world.api.get("/providers").json()["providers"] == []
    assert world.denied.requests == []


def test_an_allowed_range_is_reached_with_its_host_name_and_key(world: World) -> None:
    for kind in ("chat", "embedding", "rerank"):
        assert _put(world, world.allowed.base_url, kind).status_code == 200
        assert _test(world, kind)["ok"] is True
    last = world.allowed.requests[-1]
    assert last.headers["Authorization"] == f"Bearer {KEY}"
    assert last.headers["Host"] == world.allowed.base_url.split("/")[2]  # the name the URL gave, kept
    for kind in ("embedding", "rerank"):
        assert world.api.delete(f"/providers/{kind}").status_code == 204


def test_the_check_holds_at_every_connection_after_the_address_changes(world: World) -> None:
    """A provider accepted when it was set whose host now resolves to a refused address (here: its
    stored URL changed behind the API's back) is refused when it is called — the connection test and a
    real answer alike — and the refused server never hears of it."""
    assert _put(world, world.allowed.base_url).status_code == 200
    port = world.denied.base_url.rsplit(":", 1)[1].split("/")[0]
    _stored_url(world, "chat", f"http://localhost:{port}/v1")
    tested = _test(world)
    assert tested["ok"] is False and "refused" in tested["message"] and "loopback" in tested["message"], tested
    kb = world.api.post("/datasets", json={"name": "pumps"}).json()
    up = world.api.post(f"/datasets/{kb['id']}/documents",
                        files=[("file", ("pump.txt", b"The pump needs grease every 450 hours.", "text/plain"))])
    assert up.status_code == 201, up.text
    while run_one(world.live.ctx, "test"):
        pass
    answer = world.api.post("/answer", json={"question": "How often does the pump need grease?",
                                             "dataset_ids": [kb["id"]]})
    assert answer.status_code == 502 and "refused" in answer.json()["message"], answer.text
    assert world.denied.requests == []
    _stored_url(world, "chat", world.allowed.base_url)
    assert _test(world)["ok"] is True


def test_a_redirect_to_a_refused_address_is_not_followed(world: World) -> None:
    target = world.denied.base_url + "/chat/completions"
    with Scripted(ALLOWED, lambda path: (307, {"Location": target}, b"")) as redirector:
        assert _put(world, redirector.base_url).status_code == 200
        tested = _test(world)
        assert tested["ok"] is False and "307" in tested["message"], tested
        assert redirector.paths == ["/v1/chat/completions"]
        # a client that follows redirects is stopped at the connection to the refused address
        policy = OutboundPolicy.allowing([f"{ALLOWED}/32"])
        with httpx.Client(transport=GuardedTransport(policy), follow_redirects=True, timeout=10) as client, \
                pytest.raises(httpx.ConnectError, match="refused: 127.0.0.1 is a loopback address"):
            client.post(redirector.base_url + "/chat/completions", json={})
    assert world.denied.requests == []


@pytest.mark.parametrize(("status", "kind"), [(200, "text/html"), (404, "text/html"), (500, "text/plain"),
                                              (200, "application/json")])
def test_a_reply_that_is_not_an_openai_one_is_described_never_echoed(world: World, status: int, kind: str) -> None:
    body = (json.dumps({"note": SECRET}) if kind == "application/json" else
            f"<html><body><h1>Intranet</h1><p>{SECRET}</p></body></html>").encode()
    with Scripted(ALLOWED, lambda path: (status, {"Content-Type": kind}, body)) as internal:
        assert _put(world, internal.base_url).status_code == 200
        res = world.api.post("/providers/chat/test")
    assert res.status_code == 200 and res.json()["ok"] is False, res.text
    message = res.json()["message"]
    assert SECRET not in res.text and "hunter2" not in res.text and "Intranet" not in res.text, message
    assert str(status) in message and kind in message and "not an OpenAI-compatible reply" in message, message


def test_a_json_error_s_own_message_is_shown(world: World) -> None:
    error = json.dumps({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})
    with Scripted(ALLOWED, lambda path: (401, {"Content-Type": "application/json"}, error.encode())) as provider:
        assert _put(world, provider.base_url).status_code == 200
        message = _test(world)["message"]
    assert "401" in message and "Incorrect API key provided" in message, message


def test_only_owners_and_admins_see_the_last_characters_of_a_provider_key(world: World) -> None:
    assert _put(world, world.allowed.base_url).status_code == 200
    (own,) = world.api.get("/providers").json()["providers"]
    (seen,) = world.member.get("/providers").json()["providers"]
    assert own["api_key_hint"] == "...wxyz" and own["has_api_key"] is True
    assert seen["api_key_hint"] is None and seen["has_api_key"] is True and "wxyz" not in json.dumps(seen)
