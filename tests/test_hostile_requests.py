"""Hostile requests against a real server on loopback: every one is answered 4xx with the limit
named, and the server is still alive afterwards (issue 8, "bounds on every request")."""

from __future__ import annotations

import json
import socket
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit

import httpx
import pytest

from ragloom.config import Settings
from ragloom.service.accounts import identity
from tests.live import Live, live_server, wait_documents

pytestmark = pytest.mark.slow

MIB = 1024 * 1024
PUMP = b"Pump maintenance\n\nThe coolant pump is serviced every 450 operating hours.\n"


def _settings(home: Path, **overrides: object) -> Settings:
    base: dict[str, object] = dict(home=home, workers=0, worker_poll_seconds=0.05, max_upload_mb=1,
                                   max_upload_request_mb=2, max_upload_files=3, _env_file=None)
    base.update(overrides)
    return Settings(**base)  # type: ignore[arg-type]


class World:
    """One server with an owner (admin key), a member of the same tenant and a second tenant."""

    def __init__(self, live: Live) -> None:
        self.live = live
        with live.ctx.db.session() as s:
            boot = identity.bootstrap(s)
            tenant, owner = boot.principal.tenant_id, boot.principal.user_id
            self.owner_key = (boot.new_key or identity.create_api_key(s, tenant_id=tenant, user_id=owner)).key
            member = identity.add_member(s, tenant_id=tenant, email="member@example.test")
            self.member_key = identity.create_api_key(s, tenant_id=tenant, user_id=member.id).key
            t2, u2 = identity.create_tenant(s, name="other", owner_email="owner@other.test")
            self.other_key = identity.create_api_key(s, tenant_id=t2.id, user_id=u2.id).key
        self.api = live.client(self.owner_key)
        self.member = live.client(self.member_key)
        self.other = live.client(self.other_key)
        ds = self.api.post("/datasets", json={"name": "plant", "permission": "team"})
        assert ds.status_code == 201, ds.text
        self.ds = ds.json()["id"]
        up = self.api.post(f"/datasets/{self.ds}/documents", files=[("file", ("pump.txt", PUMP, "text/plain"))])
        assert up.status_code == 201, up.text
        self.doc = up.json()["documents"][0]["id"]
        assert [d["status"] for d in wait_documents(self.api, self.ds)] == ["done"]

    def alive(self) -> None:
        r = httpx.get(self.live.url + "/api/v1/health", timeout=30)
        assert r.status_code in (200, 503), r.text  # answering at all: the process is up
        assert r.json()["version"]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with live_server(_settings(tmp_path_factory.mktemp("hostile") / "home")) as live:
        yield World(live)


def _refused(r: httpx.Response, status: int, *needles: str, kind: str | None = None) -> str:
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    if kind:
        assert body["error"] == kind, body
    for needle in needles:
        assert needle in body["message"], (needle, body)
    return body["message"]


# ---------------------------------------------------------------- bounds on every request

def test_the_candidate_window_is_capped(world: World) -> None:
    api = world.api
    # the request that made tantivy allocate 40 GB and abort the process
    r = api.post("/retrieval", json={"question": "pump", "dataset_ids": [world.ds], "page": 10000000,
                                     "page_size": 256, "mode": "keyword"})
    _refused(r, 400, "RAGLOOM_MAX_RESULT_WINDOW", "1024", kind="InvalidRequestError")
    # page 1e9 in hybrid mode, written exactly so
    raw = ('{"question": "pump", "dataset_ids": ["' + world.ds + '"], "page": 1e9, "mode": "hybrid"}').encode()
    r = api.post("/retrieval", content=raw, headers={"Content-Type": "application/json"})
    _refused(r, 400, "RAGLOOM_MAX_RESULT_WINDOW")
    # beyond the schema's static bound: a validation error, still 4xx
    r = api.post("/retrieval", json={"question": "pump", "dataset_ids": [world.ds], "page": 10**19})
    assert r.status_code == 422 and "page" in r.json()["message"]
    r = api.post("/answer", json={"question": "pump", "dataset_ids": [world.ds], "top_n": 100000})
    assert r.status_code == 422 and "top_n" in r.json()["message"]
    world.alive()
    # right at the window still works, and finds the document
    ok = api.post("/retrieval", json={"question": "coolant pump", "dataset_ids": [world.ds], "page": 4,
                                      "page_size": 256, "mode": "keyword"})
    assert ok.status_code == 200, ok.text
    first = api.post("/retrieval", json={"question": "coolant pump", "dataset_ids": [world.ds], "mode": "keyword"})
    assert first.status_code == 200 and "450" in first.json()["chunks"][0]["content"]


def test_answer_top_n_is_bounded_by_the_window(tmp_path: Path) -> None:
    with live_server(_settings(tmp_path / "home", max_result_window=8), workers=0) as live:
        with live.ctx.db.session() as s:
            key = identity.bootstrap(s).new_key
        assert key is not None
        api = live.client(key.key)
        ds = api.post("/datasets", json={"name": "empty"}).json()["id"]
        r = api.post("/answer", json={"question": "pump", "dataset_ids": [ds], "top_n": 9})
        _refused(r, 400, "RAGLOOM_MAX_RESULT_WINDOW", "8")
        r = api.post("/retrieval", json={"question": "pump", "dataset_ids": [ds], "page": 2, "page_size": 5})
        _refused(r, 400, "RAGLOOM_MAX_RESULT_WINDOW")
        assert api.post("/retrieval", json={"question": "pump", "dataset_ids": [ds], "page_size": 8,
                                            "mode": "keyword"}).status_code == 200
        assert httpx.get(live.url + "/api/v1/health").status_code in (200, 503)


def test_integer_parameters_are_range_checked(world: World) -> None:
    api, base = world.api, f"/datasets/{world.ds}/documents"
    for path in [f"{base}?page=1e19", f"{base}?page=10000000000000000000", f"{base}?page=0",
                 f"{base}?page_size=100000", f"{base}?page=-1", f"{base}?page_size=0",
                 f"{base}/{world.doc}/chunks?page=1e19", f"{base}/{world.doc}/chunks?page=99999999999999999999",
                 f"{base}/{world.doc}/chunks?page_size=1000000", f"{base}/{world.doc}/pages/0.png",
                 f"{base}/{world.doc}/pages/99999999999999999999.png", f"{base}/{world.doc}/pages/-3.png"]:
        r = api.get(path)
        assert r.status_code == 422, (path, r.status_code, r.text)
        assert r.json()["error"] == "InvalidRequestError"
    # in range: ordinary answers
    assert api.get(f"{base}?page=1000000&page_size=1000").json()["documents"] == []
    assert api.get(f"{base}/{world.doc}/chunks?page=1000000").status_code == 200
    assert api.get(f"{base}/{world.doc}/pages/7.png").status_code == 404
    world.alive()


# ---------------------------------------------------------------- body limits

def _raw_request(url: str, head: str, body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
    """Send raw bytes (headers, maybe part of a body) and read the whole response."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(head.encode() + body)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    header, _, payload = data.partition(b"\r\n\r\n")
    lines = header.decode().split("\r\n")
    fields = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in fields.items()}, payload


def test_request_bodies_are_bounded(world: World) -> None:
    api, limit = world.api, 1024 * 1024  # max_body_kb: 1024 (the default)
    big = json.dumps({"question": "x" * (limit + 10), "dataset_ids": [world.ds]}).encode()
    r = api.post("/retrieval", content=big, headers={"Content-Type": "application/json"})
    _refused(r, 413, "1024 KiB", "RAGLOOM_MAX_BODY_KB", kind="PayloadTooLargeError")
    assert r.headers["x-content-type-options"] == "nosniff"

    def chunked() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield b'{"question": "'
        for _ in range(20):
            yield b"y" * 65536
        yield b'"}'

    r = api.post("/retrieval", content=chunked(), headers={"Content-Type": "application/json"})
    assert "content-length" not in r.request.headers
    _refused(r, 413, "RAGLOOM_MAX_BODY_KB", kind="PayloadTooLargeError")

    # refused before the body is read: only the headers of a 10 GB request are sent
    head = (f"POST /api/v1/retrieval HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {world.owner_key}\r\n"
            "Content-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n")
    status, headers, payload = _raw_request(world.live.url, head, b'{"question": ')
    assert status == 413 and "RAGLOOM_MAX_BODY_KB" in json.loads(payload)["message"]
    assert headers["connection"] == "close"
    # and a DELETE's JSON body too
    r = api.request("DELETE", f"/datasets/{world.ds}/documents", content=json.dumps({"ids": ["a" * limit]}),
                    headers={"Content-Type": "application/json"})
    _refused(r, 413, "RAGLOOM_MAX_BODY_KB")
    world.alive()


def test_uploads_are_bounded(world: World) -> None:
    api, url = world.api, f"/datasets/{world.ds}/documents"
    before = api.get(url).json()["total"]
    r = api.post(url, files=[("file", ("big.txt", b"a" * (MIB + 1), "text/plain"))])
    _refused(r, 413, "1 MiB", "RAGLOOM_MAX_UPLOAD_MB", kind="PayloadTooLargeError")
    files = [("file", (f"part{i}.txt", b"b" * (800 * 1024), "text/plain")) for i in range(3)]
    r = api.post(url, files=files)  # each under 1 MiB, together over 2 MiB
    _refused(r, 413, "2 MiB", "RAGLOOM_MAX_UPLOAD_REQUEST_MB", kind="PayloadTooLargeError")
    r = api.post(url, files=[("file", (f"n{i}.txt", b"tiny note", "text/plain")) for i in range(4)])
    _refused(r, 413, "RAGLOOM_MAX_UPLOAD_FILES", "3", kind="PayloadTooLargeError")

    boundary = "hostileboundary"

    def chunked_upload(files: int, chunks: int) -> Iterator[bytes]:
        for i in range(files):
            yield (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="stream{i}.txt"\r\n'
                   "Content-Type: text/plain\r\n\r\n").encode()
            for _ in range(chunks):
                yield b"c" * 65536
            yield b"\r\n"
        yield f"--{boundary}--\r\n".encode()

    multipart = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
    r = api.post(url, content=chunked_upload(3, 12), headers=multipart)  # 768 KiB each, 2.25 MiB together
    assert "content-length" not in r.request.headers
    _refused(r, 413, "RAGLOOM_MAX_UPLOAD_REQUEST_MB", kind="PayloadTooLargeError")
    r = api.post(url, content=chunked_upload(1, 48), headers=multipart)  # one file: refused at its first MiB
    _refused(r, 413, "stream0.txt", "RAGLOOM_MAX_UPLOAD_MB", kind="PayloadTooLargeError")
    head_only = (f"POST /api/v1{url} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {world.owner_key}\r\n"
                 f"Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: 50000000000\r\n\r\n")
    status, _, payload = _raw_request(world.live.url, head_only)
    assert status == 413 and "RAGLOOM_MAX_UPLOAD_REQUEST_MB" in json.loads(payload)["message"]
    assert api.get(url).json()["total"] == before  # nothing of it was stored
    # an unknown key is refused before a byte of the body is read (the body below is never sent)
    no_key = (f"POST /api/v1{url} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer not-a-key\r\n"
              f"Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: 1000000\r\n\r\n")
    status, _, payload = _raw_request(world.live.url, no_key)
    assert status == 401 and json.loads(payload)["error"] == "AuthenticationError"
    # within the limits an upload of several files works (and is over the JSON body limit: another limit);
    # their content is no known format, so their tasks fail at once instead of keeping the worker busy
    ok = api.post(url, files=[("file", (f"ok{i}.bin", bytes(range(256)) * 2400, "application/octet-stream"))
                              for i in range(2)])
    assert ok.status_code == 201, ok.text
    world.alive()


# ---------------------------------------------------------------- nesting

def test_deeply_nested_json_is_a_clear_400(world: World) -> None:
    api = world.api
    depth = 100_000
    nested_filter = '{"not": ' * depth + '{"key": "a", "op": "exists"}' + "}" * depth
    body = '{"question": "pump", "dataset_ids": ["' + world.ds + '"], "metadata_filter": ' + nested_filter + "}"
    r = api.post("/retrieval", content=body.encode(), headers={"Content-Type": "application/json"})
    _refused(r, 400, "nested too deeply", "64", kind="InvalidRequestError")
    r = api.post("/retrieval", content=b"[" * depth + b"]" * depth, headers={"Content-Type": "application/json"})
    _refused(r, 400, "nested too deeply", kind="InvalidRequestError")
    r = api.post("/datasets", content=b'{"name": "n", "parser_config": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5001,
                 headers={"Content-Type": "application/json"})
    _refused(r, 400, "nested too deeply")
    # brackets inside strings are text, not nesting
    r = api.post("/retrieval", json={"question": "pump " + "[{" * 40, "dataset_ids": [world.ds], "mode": "keyword"})
    assert r.status_code == 200, r.text

    def chain(levels: int) -> dict:
        expr: dict = {"key": "a", "op": "exists"}
        for _ in range(levels - 1):
            expr = {"not": expr}
        return expr

    # under the JSON limit but over the filter's own depth limit
    r = api.post("/retrieval", json={"question": "pump", "dataset_ids": [world.ds], "metadata_filter": chain(40)})
    _refused(r, 400, "metadata filter", "32 levels")
    r = api.post("/retrieval", json={"question": "pump", "dataset_ids": [world.ds], "metadata_filter": chain(31),
                                     "mode": "keyword"})
    assert r.status_code == 200, r.text
    # a nested parser_config in an upload form (not JSON-typed, so the form field is checked itself)
    r = api.post(f"/datasets/{world.ds}/documents", files=[("file", ("n.txt", b"note", "text/plain"))],
                 data={"chunk_method": "naive", "parser_config": "[" * depth + "]" * depth})
    _refused(r, 400, "parser_config", "nested too deeply")
    world.alive()


# ---------------------------------------------------------------- rate limits

def test_expensive_routes_are_rate_limited_per_key(tmp_path: Path) -> None:
    with live_server(_settings(tmp_path / "home", rate_limit_per_minute=3), workers=0) as live:
        with live.ctx.db.session() as s:
            boot = identity.bootstrap(s)
            assert boot.new_key is not None
            second = identity.create_api_key(s, tenant_id=boot.principal.tenant_id, user_id=boot.principal.user_id)
        api, api2 = live.client(boot.new_key.key), live.client(second.key)
        ds = api.post("/datasets", json={"name": "kb"}).json()["id"]
        query = {"question": "pump", "dataset_ids": [ds], "mode": "keyword"}
        assert [api.post("/retrieval", json=query).status_code for _ in range(3)] == [200, 200, 200]
        r = api.post("/retrieval", json=query)
        _refused(r, 429, "RAGLOOM_RATE_LIMIT_PER_MINUTE", "3", kind="RateLimitedError")
        assert 1 <= int(r.headers["retry-after"]) <= 20
        assert api2.post("/retrieval", json=query).status_code == 200  # another key has its own bucket
        assert api.get("/datasets").status_code == 200  # cheap routes are not limited
        up = [api.post(f"/datasets/{ds}/documents", files=[("file", (f"{i}.txt", b"note", "text/plain"))])
              for i in range(4)]
        assert [u.status_code for u in up] == [201, 201, 201, 429]
        assert "upload" in up[-1].json()["message"] and up[-1].headers["retry-after"]
        doc = up[0].json()["documents"][0]["id"]
        codes = [api.post(f"/datasets/{ds}/documents/{doc}/reparse").status_code for _ in range(4)]
        assert codes == [202, 202, 202, 429]
        # an unknown key is refused as such, not counted
        assert live.client("ragloom-nope").post("/retrieval", json=query).status_code == 401
        assert httpx.get(live.url + "/api/v1/health").status_code in (200, 503)


# ---------------------------------------------------------------- member rights

def test_a_member_reads_but_cannot_change_a_team_knowledge_base(world: World) -> None:
    member, base = world.member, f"/datasets/{world.ds}"
    assert member.get(base).status_code == 200
    assert member.get(f"{base}/documents").json()["total"] >= 1
    assert member.get(f"{base}/documents/{world.doc}/file").status_code == 200
    assert member.post("/retrieval", json={"question": "coolant pump", "dataset_ids": [world.ds],
                                           "mode": "keyword"}).status_code == 200
    for method, path, kw in [
        ("PATCH", base, {"json": {"description": "mine now"}}),
        ("DELETE", base, {}),
        ("POST", f"{base}/documents", {"files": [("file", ("m.txt", b"member note", "text/plain"))]}),
        ("DELETE", f"{base}/documents", {"json": {"ids": [world.doc]}}),
        ("POST", f"{base}/documents/{world.doc}/reparse", {}),
        ("POST", f"{base}/documents/{world.doc}/cancel", {}),
        ("PATCH", f"{base}/documents/{world.doc}", {"json": {"chunk_method": "one"}}),
        ("PATCH", f"{base}/documents/{world.doc}/metadata", {"json": {"metadata": {"owner": "me"}}}),
    ]:
        r = member.request(method, path, **kw)
        _refused(r, 403, "plant", kind="PermissionDeniedError")
    # nothing changed
    assert world.api.get(f"{base}/documents/{world.doc}").json()["status"] == "done"
    assert world.api.get(base).json()["description"] == ""
    # the member's own knowledge base is theirs to change
    own = member.post("/datasets", json={"name": "member-notes", "permission": "team"}).json()["id"]
    up = member.post(f"/datasets/{own}/documents", files=[("file", ("m.txt", b"member note", "text/plain"))])
    assert up.status_code == 201
    gone = member.request("DELETE", f"/datasets/{own}/documents", json={"ids": [up.json()["documents"][0]["id"]]})
    assert gone.status_code == 200 and gone.json() == {"deleted": 1}
    # and the owner (tenant owner) may change the member's one
    assert world.api.patch(f"/datasets/{own}", json={"description": "checked"}).status_code == 200
    world.alive()


# ---------------------------------------------------------------- chunking parameters

def test_chunking_parameters_are_validated_at_creation(world: World) -> None:
    api = world.api
    for config, field in [
        ({"delimiter": "`##"}, "delimiter"), ({"delimiter": "a``b"}, "delimiter"),
        ({"delimiter": "x" * 300}, "delimiter"), ({"children_delimiter": "`("}, "children_delimiter"),
        ({"chunk_token_num": "512"}, "chunk_token_num"),
        ({"toc_extraction": "false"}, "toc_extraction"), ({"overlapped_percent": 95}, "overlapped_percent"),
        ({"regex": "("}, "regex"),
    ]:
        r = api.post("/datasets", json={"name": "bad", "parser_config": config})
        _refused(r, 400, field, kind="InvalidRequestError")
    r = api.post("/datasets", json={"name": "bad", "chunk_method": "qa", "parser_config": {"children_delimiter": "."}})
    _refused(r, 400, "children_delimiter")
    r = api.patch(f"/datasets/{world.ds}", json={"parser_config": {"delimiter": "`unclosed"}})
    _refused(r, 400, "delimiter")
    url = f"/datasets/{world.ds}/documents"
    r = api.post(url, files=[("file", ("c.txt", b"note", "text/plain"))],
                 data={"chunk_method": "naive", "parser_config": json.dumps({"delimiter": "`x"})})
    _refused(r, 400, "delimiter")
    r = api.post(url, files=[("file", ("c.txt", b"note", "text/plain"))],  # no method: the dataset's is used
                 data={"parser_config": json.dumps({"chunk_token_num": 3})})
    _refused(r, 400, "chunk_token_num")
    r = api.patch(f"{url}/{world.doc}", json={"chunk_method": "naive", "parser_config": {"delimiter": "``"}})
    _refused(r, 400, "delimiter")
    assert api.get(f"/datasets/{world.ds}").json()["parser_config"] == {}
    assert api.get(f"{url}/{world.doc}").json()["status"] == "done"

    # characters that are special in a regular expression are plain delimiters in this grammar
    ds = api.post("/datasets", json={"name": "regexy", "parser_config": {
        "delimiter": "`(`[*", "children_delimiter": "(", "chunk_token_num": 16}})
    assert ds.status_code == 201, ds.text
    text = b"alpha one two three (beta four five six [gamma seven eight * delta nine ten"
    assert api.post(f"/datasets/{ds.json()['id']}/documents",
                    files=[("file", ("r.txt", text, "text/plain"))]).status_code == 201
    done = wait_documents(api, ds.json()["id"])
    assert done[0]["status"] == "done" and done[0]["chunk_count"] >= 3, done
    world.alive()


# ---------------------------------------------------------------- file names and downloads

def _upload_raw_name(world: World, name: str, data: bytes) -> httpx.Response:
    """A multipart upload whose filename bytes go on the wire as they are (httpx would escape them)."""
    boundary = "namesboundary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"".encode()
            + name.encode() + b"\"\r\nContent-Type: text/plain\r\n\r\n" + data + f"\r\n--{boundary}--\r\n".encode())
    return world.api.post(f"/datasets/{world.ds}/documents", content=body,
                          headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})


def test_file_names_are_normalised(world: World) -> None:
    hostile = "  Re\u0301sume\u0301\x00\u202e\u2066 \t  report\u200b\ufeff\x07.txt. "
    r = _upload_raw_name(world, hostile, b"resume text")
    assert r.status_code == 201, r.text
    name = r.json()["documents"][0]["name"]
    assert name == "R\u00e9sum\u00e9 report.txt"
    assert not any(unicodedata.category(c) in ("Cc", "Cf") for c in name)
    long = _upload_raw_name(world, "\u00e9" * 400 + ".txt", b"long")
    assert long.status_code == 201
    stored = long.json()["documents"][0]["name"]
    assert len(stored) == 255 and stored.endswith("\u00e9.txt")
    r = _upload_raw_name(world, "\u202e\x00 .. \u200b", b"nothing")
    _refused(r, 400, "file name", kind="InvalidRequestError")
    world.alive()


def test_originals_download_as_sandboxed_attachments(world: World) -> None:
    page = b"<html><body><script>alert(document.cookie)</script>pump</body></html>"
    for name in ("page.html", "\u62a5\u544a \u00fc\"x.html"):
        up = world.api.post(f"/datasets/{world.ds}/documents", files=[("file", (name, page, "text/html"))])
        assert up.status_code == 201, up.text
        doc = up.json()["documents"][0]
        r = world.api.get(f"/datasets/{world.ds}/documents/{doc['id']}/file")
        assert r.status_code == 200 and r.content == page
        disposition = r.headers["content-disposition"]
        assert disposition.startswith("attachment;"), disposition
        fallback = disposition.split('filename="', 1)[1].split('"', 1)[0]
        assert fallback.isascii() and fallback.endswith(".html") and '"' not in fallback
        assert unquote(disposition.split("filename*=UTF-8''", 1)[1]) == doc["name"]
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["content-security-policy"] == "sandbox"
    # nosniff on every response: errors, the root's redirect, the status page, health
    for resp in (world.api.get("/datasets/nope"), httpx.get(world.live.url + "/"),
                 httpx.get(world.live.url + "/status"),
                 httpx.get(world.live.url + "/api/v1/health"), httpx.get(world.live.url + "/status.json")):
        assert resp.headers["x-content-type-options"] == "nosniff", resp.url
    world.alive()


# ---------------------------------------------------------------- status page

def test_status_shows_only_the_callers_tenant(world: World) -> None:
    url = world.live.url
    other_ds = world.other.post("/datasets", json={"name": "theirs"}).json()["id"]
    assert world.other.post(f"/datasets/{other_ds}/documents",
                            files=[("file", ("t.txt", b"their note", "text/plain"))]).status_code == 201
    anonymous = httpx.get(url + "/status.json")
    assert anonymous.status_code == 200
    assert set(anonymous.json()) == {"version", "health"} and anonymous.json()["health"] == "/api/v1/health"
    page = httpx.get(url + "/status")
    assert page.status_code == 200 and "Documents by status" not in page.text and "/api/v1/health" in page.text

    mine = httpx.get(url + "/status.json", headers={"Authorization": f"Bearer {world.owner_key}"}).json()
    own_kbs = world.api.get("/datasets").json()["total"]
    own_docs = sum(world.api.get(f"/datasets/{d['id']}/documents").json()["total"]
                   for d in world.api.get("/datasets").json()["datasets"])
    assert mine["scope"] == "tenant" and mine["knowledge_bases"] == own_kbs
    assert sum(mine["documents"].values()) == own_docs
    theirs = httpx.get(url + "/status.json", headers={"Authorization": f"Bearer {world.other_key}"}).json()
    assert theirs["knowledge_bases"] == 1 and sum(theirs["documents"].values()) == 1
    assert sum(theirs["tasks"].values()) == 1
    bad = httpx.get(url + "/status.json", headers={"Authorization": "Bearer ragloom-wrong"})
    assert bad.status_code == 401 and "documents" not in bad.text
    world.alive()
