"""The smaller findings of issue 24, each on a live server: what a server shows and to whom, and how
long it holds a silent connection.

- ``ragloom serve`` whose output is no terminal leaves the first administrator's key and password in a
  0600 file of its data directory, never in its output (a log); it closes a connection that does not
  finish its request's headers in ``RAGLOOM_HEADER_TIMEOUT_SECONDS``.
- ``/health`` shows workers and queue only to a caller with a key or a session.
- sign-in cookies are ``Secure`` and ``__Host-`` prefixed behind an HTTPS proxy;
- sign-up with an existing address counts as a failed sign-in (throttled like one);
- names lose NUL, bidi overrides and other invisible characters;
- ``GET /datasets`` pages.
"""

from __future__ import annotations

import os
import socket
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ragloom.config import Settings
from ragloom.service.accounts import identity
from tests.live import Live, live_server
from tests.processes import admin_key, served

pytestmark = pytest.mark.slow

PASSWORD = "correct horse battery staple"
HEADER_TIMEOUT = 2.0


# --- ragloom serve --------------------------------------------------------------------------------

def _closed_after(port: int, first: bytes, *, limit: float = 30.0) -> float:
    """Seconds until the server closes a connection that sent ``first`` and then nothing."""
    with socket.create_connection(("127.0.0.1", port), timeout=limit) as sock:
        sock.sendall(first)
        start = time.monotonic()
        while sock.recv(65536):
            pass  # a response to a complete request first, then the close
        return time.monotonic() - start


def test_serve_keeps_the_first_secrets_out_of_its_output_and_drops_silent_connections(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with served(home, workers_=0, RAGLOOM_HEADER_TIMEOUT_SECONDS=str(HEADER_TIMEOUT)) as (_, url):
        credentials = home / "first-admin.txt"
        key = admin_key(home, url)
        password = next(ln.split("=", 1)[1] for ln in credentials.read_text().splitlines()
                        if ln.startswith("password="))
        assert stat.S_IMODE(os.stat(credentials).st_mode) == 0o600
        output = (home.parent / f"serve-{url.rsplit(':', 1)[1]}.log").read_text()
        assert key not in output and password not in output and str(credentials) in output, output
        signed_in = httpx.post(url + "/api/v1/auth/login", json={"email": "admin@localhost", "password": password})
        assert signed_in.status_code == 200, signed_in.text

        port = int(url.rsplit(":", 1)[1])
        # a request line that never ends, headers that never end, nothing at all: closed at the deadline
        for first in (b"GET /api/v1/health HTT", b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: 1", b""):
            took = _closed_after(port, first)
            assert HEADER_TIMEOUT - 0.5 < took < HEADER_TIMEOUT + 3, (first, took)
        # a complete request is answered, and the next request on the connection gets the same deadline
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
            assert sock.recv(65536).startswith(b"HTTP/1.1 503")  # no workers here
            time.sleep(1)
            sock.sendall(b"GET /api/v1/health HTTP/1.1\r\n")
            start = time.monotonic()
            while sock.recv(65536):
                pass
            assert time.monotonic() - start < HEADER_TIMEOUT + 3
        # while the server is fine: a slow client's complete request is still answered
        assert httpx.get(url + "/api/v1/health").status_code == 503


# --- a live server --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Live, str]]:
    home = tmp_path_factory.mktemp("exposure") / "home"
    settings = Settings(home=home, workers=0, rate_limit_per_minute=0, login_attempts=2, _env_file=None)
    with live_server(settings, workers=0) as server:
        with server.ctx.db.session() as s:
            boot = identity.bootstrap(s)
        assert boot.new_key is not None
        yield server, boot.new_key.key


def test_health_shows_its_workers_and_queue_only_to_a_known_caller(live: tuple[Live, str]) -> None:
    server, key = live
    anonymous = httpx.get(server.url + "/api/v1/health")
    assert anonymous.status_code == 503 and set(anonymous.json()) == {"status", "version", "message"}
    keyed = httpx.get(server.url + "/api/v1/health", headers={"Authorization": f"Bearer {key}"})
    assert keyed.status_code == 503 and {"workers", "queue"} <= set(keyed.json())
    assert httpx.get(server.url + "/api/v1/health", headers={"Authorization": "Bearer rgl-made-up"}).status_code == 401
    with httpx.Client(base_url=server.url + "/api/v1", timeout=60) as browser:
        assert browser.post("/auth/signup", json={"email": "hal@example.org", "password": PASSWORD}).status_code == 201
        assert "queue" in browser.get("/health").json()  # a session


def test_cookies_are_secure_and_host_prefixed_behind_an_https_proxy(live: tuple[Live, str]) -> None:
    server, _ = live
    proxied = {"X-Forwarded-Proto": "https"}  # from 127.0.0.1, a proxy uvicorn trusts by default
    with httpx.Client(base_url=server.url + "/api/v1", headers=proxied, timeout=60) as browser:
        res = browser.post("/auth/signup", json={"email": "sec@example.org", "password": PASSWORD})
        assert res.status_code == 201, res.text
        cookies = res.headers.get_list("set-cookie")
        assert sorted(c.split("=", 1)[0] for c in cookies) == ["__Host-ragloom_csrf", "__Host-ragloom_session"]
        assert all("Secure" in c and "Path=/" in c and "Domain" not in c for c in cookies), cookies
        token = browser.cookies["__Host-ragloom_session"]
        me = httpx.get(server.url + "/api/v1/auth/me", headers=proxied, cookies={"__Host-ragloom_session": token})
        assert me.status_code == 200 and me.json()["via"] == "session"
        # over HTTPS only the prefixed cookie counts: a planted unprefixed one signs nobody in
        planted = httpx.get(server.url + "/api/v1/auth/me", headers=proxied, cookies={"ragloom_session": token})
        assert planted.status_code == 401
    with httpx.Client(base_url=server.url + "/api/v1", timeout=60) as plain:  # plain HTTP: no Secure, no prefix
        res = plain.post("/auth/login", json={"email": "sec@example.org", "password": PASSWORD})
        assert sorted(c.split("=", 1)[0] for c in res.headers.get_list("set-cookie")) == ["ragloom_csrf",
                                                                                          "ragloom_session"]
        assert not any("Secure" in c for c in res.headers.get_list("set-cookie"))


def test_signing_up_with_a_known_address_is_throttled_like_a_failed_sign_in(live: tuple[Live, str]) -> None:
    server, _ = live
    with httpx.Client(base_url=server.url + "/api/v1", timeout=60) as http:
        assert http.post("/auth/signup", json={"email": "ann@example.org", "password": PASSWORD}).status_code == 201
        http.cookies.clear()
        answers = [http.post("/auth/signup", json={"email": "ann@example.org", "password": f"guess {i} x"})
                   for i in range(3)]
        assert [a.status_code for a in answers] == [409, 409, 429], [a.text for a in answers]  # login_attempts=2
        assert "Retry-After" in answers[-1].headers
        # the address's sign-in is throttled by the same count (the right password waits too)
        assert http.post("/auth/login", json={"email": "ann@example.org", "password": PASSWORD}).status_code == 429


def test_names_lose_nul_bidi_overrides_and_invisible_characters(live: tuple[Live, str]) -> None:
    server, key = live
    with server.client(key) as api:
        kb = api.post("/datasets", json={"name": "invoice\x00\u202efdp.exe\u200b  2024"})
        assert kb.status_code == 201 and kb.json()["name"] == "invoicefdp.exe 2024", kb.text
        renamed = api.patch(f"/datasets/{kb.json()['id']}", json={"name": "\u2066plans\u2069\tQ3"})
        assert renamed.json()["name"] == "plans Q3"
        assert api.post("/datasets", json={"name": "\u202e\u200b\x00"}).status_code == 422
        workspace = api.get("/workspaces").json()["workspaces"][0]["id"]
        ws = api.patch(f"/workspaces/{workspace}", json={"name": "Acme\u202e\x07 team"})
        assert ws.status_code == 200 and ws.json()["name"] == "Acme team", ws.text
        chat = api.post("/chats", json={"name": "help\u2067desk", "dataset_ids": [kb.json()["id"]]})
        assert chat.status_code == 201 and chat.json()["name"] == "helpdesk", chat.text
        made = api.post("/keys", json={"name": "laptop\u202e"})
        assert made.status_code == 201 and made.json()["name"] == "laptop"
    with httpx.Client(base_url=server.url + "/api/v1", timeout=60) as http:
        res = http.post("/auth/signup", json={"email": "rtl@example.org", "password": PASSWORD, "name": "Eve\u202eliA"})
        assert res.status_code == 201 and res.json()["user"]["name"] == "EveliA"
        bad = http.post("/auth/signup", json={"email": "rt\u202el@example.org", "password": PASSWORD})
        assert bad.status_code == 400


def test_datasets_are_listed_a_page_at_a_time(live: tuple[Live, str]) -> None:
    server, key = live
    with server.client(key) as api:
        for i in range(5):
            assert api.post("/datasets", json={"name": f"paged-{i}"}).status_code == 201
        names = [d["name"] for d in api.get("/datasets", params={"page_size": 1000}).json()["datasets"]]
        assert [n for n in names if n.startswith("paged-")] == [f"paged-{i}" for i in range(5)]  # by name
        walked = []
        for page in range(1, len(names) + 2):
            body = api.get("/datasets", params={"page": page, "page_size": 2}).json()
            assert body["total"] == len(names) and len(body["datasets"]) <= 2
            walked += [d["name"] for d in body["datasets"]]
        assert walked == names
        assert api.get("/datasets", params={"page_size": 0}).status_code == 422
        assert api.get("/datasets", params={"page_size": 1001}).status_code == 422
