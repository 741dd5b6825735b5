"""Issue 24: no caller takes the service from the others.

Rate limits are per caller (an API key; a signed-in user in a workspace; a visitor's address on the
public routes), requests refused as malformed (422) spend nothing, uploads are received straight to
disk (the server's memory stays flat while large files arrive in parallel), and the upload bytes in
flight are capped per server and per caller (429 with ``Retry-After``, decided before the body is
read). The live tests run real servers on loopback: uvicorn in a thread, or ``ragloom serve``.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from fastapi.routing import APIRoute, iter_route_contexts

from ragloom.api.app import create_app
from ragloom.api.ratelimit import InflightBudget, RateLimiter, address_key
from ragloom.config import Settings
from ragloom.errors import PayloadTooLargeError, RateLimitedError
from ragloom.service.accounts import identity
from ragloom.supervisor import process_rss_mb
from tests.live import live_server
from tests.processes import admin_key, served, wait

log = logging.getLogger(__name__)

MIB = 1024 * 1024
PASSWORD = "correct horse battery"


# ---------------------------------------------------------------- units


def test_a_refund_gives_the_token_back_and_refusals_say_what_the_limit_is_per() -> None:
    now = [0.0]
    limiter = RateLimiter(2, setting="RAGLOOM_RATE_LIMIT_PUBLIC_PER_MINUTE", per="address", clock=lambda: now[0])
    limiter.check("address:10.0.0.1", "login")
    limiter.refund("address:10.0.0.1", "login")  # refused as malformed: as if never taken
    limiter.check("address:10.0.0.1", "login")
    limiter.check("address:10.0.0.1", "login")
    with pytest.raises(RateLimitedError) as refused:
        limiter.check("address:10.0.0.1", "login")
    assert "per address (RAGLOOM_RATE_LIMIT_PUBLIC_PER_MINUTE)" in refused.value.message
    limiter.refund("address:10.0.0.2", "login")  # a full bucket stays at its burst
    for _ in range(2):
        limiter.check("address:10.0.0.2", "login")
    with pytest.raises(RateLimitedError) as per_user:
        limiter.check("address:10.0.0.2", "login", per="user in a workspace")
    assert "per user in a workspace" in per_user.value.message


def test_addresses_are_keyed_by_host_and_ipv6_by_its_64() -> None:
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:ffff::9") == "address:2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("::ffff:192.0.2.7") == address_key("192.0.2.7") == "address:192.0.2.7"
    assert address_key("192.0.2.7") != address_key("192.0.2.8")
    assert address_key("testclient") == "address:testclient"


def test_the_inflight_budget_counts_per_server_and_per_caller() -> None:
    budget = InflightBudget(total_mb=10, share_mb=6)
    budget.reserve("a", 5 * MIB, per="API key")
    with pytest.raises(RateLimitedError) as mine:  # a's share is full, another caller's is not
        budget.reserve("a", 2 * MIB, per="API key")
    assert "RAGLOOM_MAX_UPLOAD_INFLIGHT_PER_PRINCIPAL_MB" in mine.value.message and mine.value.retry_after > 0
    budget.reserve("b", 5 * MIB, per="API key")
    with pytest.raises(RateLimitedError) as server:
        budget.reserve("c", 1 * MIB, per="API key")
    assert "RAGLOOM_MAX_UPLOAD_INFLIGHT_MB" in server.value.message
    with pytest.raises(PayloadTooLargeError):  # never fits: 413, not "retry"
        budget.reserve("c", 7 * MIB, per="API key")
    budget.release("a", 5 * MIB)
    budget.reserve("c", 5 * MIB, per="API key")
    budget.release("b", 5 * MIB)
    budget.release("c", 5 * MIB)
    assert budget.in_flight == 0
    unlimited = InflightBudget(total_mb=0, share_mb=0)
    unlimited.reserve("a", 1 << 40, per="API key")


def test_every_public_route_is_rate_limited_per_address(tmp_path: Path) -> None:
    app = create_app(Settings(home=tmp_path / "home", workers=0, _env_file=None))
    routes = [(c.path, c.original_route) for c in iter_route_contexts(app.routes)]
    public = {path: r for path, r in routes
              if isinstance(r, APIRoute) and (r.openapi_extra or {}).get("x-ragloom-public")}
    assert set(public) >= {"/api/v1/auth/signup", "/api/v1/auth/login"}
    for path, route in public.items():
        calls = {getattr(d.call, "__qualname__", "") for d in route.dependant.dependencies}
        assert any(c.startswith("limited_per_address.") for c in calls), path
        assert "429" in {str(code) for code in route.responses}, path


# ---------------------------------------------------------------- rate limits on a live server


def _signed_in(url: str, email: str, *, invitation: str = "", local_address: str | None = None) -> httpx.Client:
    """A browser-like client signed up (and so signed in) with a session cookie and its CSRF header."""
    transport = httpx.HTTPTransport(local_address=local_address) if local_address else None
    client = httpx.Client(base_url=url + "/api/v1", timeout=60, transport=transport)
    r = client.post("/auth/signup", json={"email": email, "password": PASSWORD, "invitation": invitation})
    assert r.status_code == 201, r.text
    client.headers["X-CSRF-Token"] = r.json()["csrf_token"]
    return client


def _dataset(client: httpx.Client, name: str) -> dict[str, object]:
    r = client.post("/datasets", json={"name": name, "permission": "team"})
    assert r.status_code == 201, r.text
    return {"question": "pump", "dataset_ids": [r.json()["id"]], "mode": "keyword"}


def _note(name: str) -> list[tuple[str, tuple[str, bytes, str]]]:
    return [("file", (name, b"The pump is serviced weekly.", "text/plain"))]


@pytest.mark.slow
def test_one_callers_burst_never_limits_another(tmp_path: Path) -> None:
    """Alice (signed in, workspace A) sends 40 malformed searches and uploads and then her full burst:
    the malformed ones cost nothing, her own limit holds, and nobody else is limited by it — not Bob
    (another workspace), not Carol (signed in to Alice's workspace), not Alice's API key, not Alice in
    her second workspace. Sign-in is limited per address: another address still signs in."""
    settings = Settings(home=tmp_path / "home", workers=0, rate_limit_per_minute=5, rate_limit_public_per_minute=4,
                        _env_file=None)
    with live_server(settings, workers=0) as live:
        alice = _signed_in(live.url, "alice@example.test")
        bob = _signed_in(live.url, "bob@example.test")
        invite = alice.post("/invitations", json={"role": "member"})
        assert invite.status_code == 201, invite.text
        carol = _signed_in(live.url, "carol@example.test", invitation=invite.json()["token"])
        query_a, query_b = _dataset(alice, "a-notes"), _dataset(bob, "b-notes")
        assert carol.get("/auth/me").json()["workspace"]["name"] == alice.get("/auth/me").json()["workspace"]["name"]

        malformed = [alice.post("/retrieval", json={}).status_code for _ in range(40)]
        assert set(malformed) == {422}
        burst = [alice.post("/retrieval", json=query_a).status_code for _ in range(6)]
        assert burst == [200] * 5 + [429], burst  # the 422s took no token; then her own limit
        refused = alice.post("/retrieval", json=query_a)
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
        message = refused.json()["message"]
        assert "RAGLOOM_RATE_LIMIT_PER_MINUTE" in message and "per user in a workspace" in message, message
        assert bob.post("/retrieval", json=query_b).status_code == 200  # another workspace
        assert carol.post("/retrieval", json=query_a).status_code == 200  # another user, same workspace
        key = alice.post("/keys", json={"name": "script"})
        assert key.status_code == 201, key.text
        by_key = httpx.Client(base_url=live.url + "/api/v1", headers={"Authorization": f"Bearer {key.json()['key']}"},
                              timeout=60)
        assert by_key.post("/retrieval", json=query_a).status_code == 200  # her API key: a bucket of its own
        second = alice.post("/workspaces", json={"name": "alice-two"})
        assert second.status_code == 201, second.text
        assert alice.post("/auth/workspace", json={"workspace_id": second.json()["id"]}).status_code == 200
        assert alice.post("/retrieval", json=_dataset(alice, "two-notes")).status_code == 200  # her other workspace

        uploads = f"/datasets/{query_a['dataset_ids'][0]}/documents"  # type: ignore[index]
        alice.post("/auth/workspace", json={"workspace_id": carol.get("/auth/me").json()["workspace"]["id"]})
        no_file = [alice.post(uploads, data={"chunk_method": "naive"}).status_code for _ in range(20)]
        assert set(no_file) == {422}  # refused as malformed: refunded, though the token was taken before the body
        sent = [alice.post(uploads, files=_note(f"n{i}.txt")).status_code for i in range(6)]
        assert sent == [201] * 5 + [429], sent
        carols = f"/datasets/{_dataset(carol, 'carol-notes')['dataset_ids'][0]}/documents"  # type: ignore[index]
        assert carol.post(carols, files=_note("carol.txt")).status_code == 201  # her uploads: her own bucket

        login = httpx.Client(base_url=live.url + "/api/v1", timeout=60)
        assert {login.post("/auth/login", json={"email": "x"}).status_code for _ in range(20)} == {422}
        ok = [login.post("/auth/login", json={"email": "bob@example.test", "password": PASSWORD}).status_code
              for _ in range(5)]
        assert ok == [200] * 4 + [429], ok
        limited = login.post("/auth/login", json={"email": "bob@example.test", "password": PASSWORD})
        assert "per address (RAGLOOM_RATE_LIMIT_PUBLIC_PER_MINUTE)" in limited.json()["message"]
        assert int(limited.headers["retry-after"]) >= 1
        elsewhere = httpx.Client(base_url=live.url + "/api/v1", timeout=60,
                                 transport=httpx.HTTPTransport(local_address="127.0.0.2"))
        r = elsewhere.post("/auth/login", json={"email": "bob@example.test", "password": PASSWORD})
        assert r.status_code == 200, r.text  # another address has its own bucket
        assert bob.post("/retrieval", json=query_b).status_code == 200  # signed-in work goes on


# ---------------------------------------------------------------- upload bytes in flight


def _multipart(name: str, size: int, boundary: str = "inflightboundary") -> tuple[bytes, bytes, int]:
    """The head and tail of a one-file multipart body around ``size`` bytes of content, and its length."""
    head = (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    return head, tail, len(head) + size + len(tail)


def _headers_only(url: str, path: str, key: str, length: int) -> tuple[int, dict[str, str], str]:
    """Send an upload's headers and not a byte of its body; the server's answer (it closes)."""
    parts = urlsplit(url)
    head = (f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n"
            f"Content-Type: multipart/form-data; boundary=inflightboundary\r\nContent-Length: {length}\r\n\r\n")
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(head.encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    header, _, payload = data.partition(b"\r\n\r\n")
    lines = header.decode().split("\r\n")
    fields = {k.lower(): v for k, v in (line.split(": ", 1) for line in lines[1:])}
    return int(lines[0].split()[1]), fields, payload.decode()


@pytest.mark.slow
def test_upload_bytes_in_flight_are_capped_per_server_and_per_caller(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = Settings(home=home, workers=0, max_upload_mb=64, max_upload_request_mb=128,
                        max_upload_inflight_mb=96, max_upload_inflight_per_principal_mb=64, _env_file=None)
    with live_server(settings, workers=0) as live:
        with live.ctx.db.session() as s:
            boot = identity.bootstrap(s)
            assert boot.new_key is not None
            tenant, user = identity.create_tenant(s, name="other", owner_email="owner@other.test")
            other = identity.create_api_key(s, tenant_id=tenant.id, user_id=user.id).key
            third = identity.create_api_key(s, tenant_id=tenant.id, user_id=user.id).key
        mine = boot.new_key.key
        a, b = live.client(mine), live.client(other)
        ds_a = a.post("/datasets", json={"name": "big"}).json()["id"]
        ds_b = b.post("/datasets", json={"name": "notes"}).json()["id"]
        path_a = f"/api/v1/datasets/{ds_a}/documents"

        # a 48 MiB upload of A's that sends its first MiB and then waits: its 48 MiB count from the start
        head, tail, length = _multipart("held.bin", 48 * MIB)
        go_on = threading.Event()
        held: list[httpx.Response] = []

        def slow_body() -> Iterator[bytes]:
            yield head + os.urandom(MIB)
            go_on.wait(60)
            for _ in range(47):
                yield os.urandom(MIB)
            yield tail

        def send_held() -> None:
            held.append(a.post(f"/datasets/{ds_a}/documents", content=slow_body(), headers={
                "Content-Length": str(length), "Content-Type": "multipart/form-data; boundary=inflightboundary"}))

        sender = threading.Thread(target=send_held)
        sender.start()
        try:
            wait(lambda: any(p.stat().st_size for p in (home / "uploads").glob(".upload-*")), 30,
                 "the held upload to be receiving")
            status, headers, body = _headers_only(live.url, path_a, mine, 32 * MIB)  # A again: over A's share
            assert status == 429 and int(headers["retry-after"]) >= 1, body
            assert "RAGLOOM_MAX_UPLOAD_INFLIGHT_PER_PRINCIPAL_MB" in body
            status, _, body = _headers_only(live.url, f"/api/v1/datasets/{ds_b}/documents", third, 56 * MIB)
            assert status == 429 and "RAGLOOM_MAX_UPLOAD_INFLIGHT_MB" in body, body  # over the server's cap
            status, _, body = _headers_only(live.url, path_a, mine, 80 * MIB)  # larger than a share: never fits
            assert status == 413 and "RAGLOOM_MAX_UPLOAD_INFLIGHT_PER_PRINCIPAL_MB" in body, body
            r = b.post(f"/datasets/{ds_b}/documents", files=_note("note.txt"))
            assert r.status_code == 201, r.text  # another caller, within the server's cap

            def chunked() -> Iterator[bytes]:  # no Content-Length: counted as it arrives, refused past 16 MiB
                c_head, c_tail, _ = _multipart("chunked.bin", 17 * MIB)
                yield c_head
                for _ in range(17):
                    yield b"c" * MIB
                yield c_tail

            r = a.post(f"/datasets/{ds_a}/documents", content=chunked(),
                       headers={"Content-Type": "multipart/form-data; boundary=inflightboundary"})
            assert "content-length" not in r.request.headers
            assert r.status_code == 429 and "RAGLOOM_MAX_UPLOAD_INFLIGHT_PER_PRINCIPAL_MB" in r.json()["message"]
        finally:
            go_on.set()
            sender.join(60)
        assert held and held[0].status_code == 201, held and held[0].text
        # a client that goes away mid-body: its spool file is deleted and its bytes released
        head, _, length = _multipart("gone.bin", 40 * MIB)
        parts = urlsplit(live.url)
        with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
            sock.sendall(f"POST {path_a} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {mine}\r\nContent-Type: "
                         f"multipart/form-data; boundary=inflightboundary\r\nContent-Length: {length}\r\n\r\n"
                         .encode() + head + os.urandom(2 * MIB))
            wait(lambda: any(p.stat().st_size for p in (home / "uploads").glob(".upload-*")), 30, "the upload")
        wait(lambda: not list((home / "uploads").iterdir()), 30, "the abandoned upload's spool file to go")
        r = a.post(f"/datasets/{ds_a}/documents", files=[("file", ("after.bin", os.urandom(60 * MIB)))])
        assert r.status_code == 201, r.text  # the held and the abandoned bytes were released
        assert not list((home / "uploads").iterdir())  # every spool file moved into the store or deleted


def test_spool_files_left_by_a_killed_server_are_swept_at_start(tmp_path: Path) -> None:
    from ragloom.service.documents.uploads import SPOOL_PREFIX, spool_dir, sweep_spool

    folder = spool_dir(Settings(home=tmp_path / "home", _env_file=None))
    old, young, other = folder / f"{SPOOL_PREFIX}old", folder / f"{SPOOL_PREFIX}young", folder / "keep.txt"
    for f in (old, young, other):
        f.write_bytes(b"x")
    then = time.time() - 2 * 24 * 3600
    os.utime(old, (then, then))
    os.utime(other, (then, then))
    assert sweep_spool(folder) == 1
    assert not old.exists() and young.exists() and other.exists()


# ---------------------------------------------------------------- large uploads in parallel


FILES, REQUESTS, FILE_MIB = 4, 3, 64
RSS_GROWTH_BOUND_MB = 96  # the server's growth while 768 MiB arrive (it was +800 holding them in memory)


def _big_files(folder: Path) -> list[list[Path]]:
    """REQUESTS x FILES distinct files of FILE_MIB MiB (one random MiB repeated, a distinct first line)."""
    block = os.urandom(MIB)
    out = []
    for r in range(REQUESTS):
        row = []
        for f in range(FILES):
            path = folder / f"big-{r}-{f}.bin"
            with path.open("wb") as w:
                w.write(f"file {r}-{f}\n".encode())
                for _ in range(FILE_MIB):
                    w.write(block)
            row.append(path)
        out.append(row)
    return out


@pytest.mark.slow
def test_parallel_large_uploads_leave_the_servers_memory_flat(tmp_path: Path) -> None:
    home = tmp_path / "home"
    files = _big_files(tmp_path)
    with served(home, workers_=1) as (proc, url):
        api = httpx.Client(base_url=url + "/api/v1", headers={"Authorization": f"Bearer {admin_key(home, url)}"},
                           timeout=300)
        assert api.post("/datasets", json={"name": "big"}).status_code == 201
        idle = peak = process_rss_mb(proc.pid) or 0.0
        done = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not done.wait(0.02):
                peak = max(peak, process_rss_mb(proc.pid) or 0.0)

        sampler = threading.Thread(target=sample)
        sampler.start()
        results: list[httpx.Response] = []

        def upload(row: list[Path]) -> None:
            with contextlib.ExitStack() as stack:
                parts = [("file", (p.name, stack.enter_context(p.open("rb")), "application/octet-stream"))
                         for p in row]
                results.append(api.post("/datasets/big/documents", files=parts))

        started = time.monotonic()
        senders = [threading.Thread(target=upload, args=(row,)) for row in files]
        for t in senders:
            t.start()
        for t in senders:
            t.join(300)
        took = time.monotonic() - started
        done.set()
        sampler.join()
        assert [r.status_code for r in results] == [201] * REQUESTS, [r.text[:300] for r in results]
        growth = peak - idle
        log.info("server RSS idle %.0f MiB, peak %.0f MiB (+%.0f) while %d x %d x %d MiB arrived in %.1f s",
                 idle, peak, growth, REQUESTS, FILES, FILE_MIB, took)
        assert growth < RSS_GROWTH_BOUND_MB, (idle, peak)
        listed = {d["name"]: d for d in api.get("/datasets/big/documents").json()["documents"]}
        assert sorted(listed) == sorted(p.name for row in files for p in row)
        some = files[1][2]
        doc = listed[some.name]
        versions = api.get(f"/datasets/big/documents/{doc['id']}/versions").json()["versions"]
        with some.open("rb") as f:
            digest = hashlib.file_digest(f, "sha256").hexdigest()
        assert versions[0]["size"] == some.stat().st_size and versions[0]["content_hash"] == digest
        assert not list((home / "uploads").iterdir())  # every spool file became a stored object


def test_a_pdf_is_split_into_page_ranges_from_its_spool_file_and_again_on_reparse(tmp_path: Path) -> None:
    """The page count is read from the spooled upload (and, on a re-parse, from a copy out of the
    store), never from bytes held by the server."""
    from sqlalchemy import select

    from ragloom.db.models import Task
    from tests.ingest.hostile import many_pages_pdf
    from tests.live import app_client

    home = tmp_path / "home"
    with app_client(Settings(home=home, workers=0, _env_file=None)) as (client, ctx, auth):
        client.post("/api/v1/datasets", json={"name": "kb"}, headers=auth)
        up = client.post("/api/v1/datasets/kb/documents", files=[("file", ("p.pdf", many_pages_pdf(30)))],
                         headers=auth)
        assert up.status_code == 201, up.text
        doc = up.json()["documents"][0]["id"]
        again = client.post(f"/api/v1/datasets/kb/documents/{doc}/reparse", headers=auth)
        assert again.status_code == 202, again.text
        with ctx.db.session() as s:
            ranges = sorted((t.version_id, t.from_page, t.to_page) for t in s.scalars(select(Task)))
        assert len({v for v, _, _ in ranges}) == 2  # two versions, each split the same way
        assert sorted((a, b) for _, a, b in ranges) == sorted([(1, 12), (13, 24), (25, 30)] * 2)
    assert not list((home / "uploads").iterdir())
