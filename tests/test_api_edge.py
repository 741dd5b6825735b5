"""The edge as a newcomer meets it (issue 9, point 8): offline /docs and /redoc, the API key declared
in /openapi.json, timestamps with a UTC offset, and the fusion a knowledge base's scores apply to."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from urllib.parse import urljoin, urlsplit

import pytest
from fastapi.testclient import TestClient

from ragloom.api.app import create_app
from ragloom.config import Settings
from ragloom.schemas.base import iso_utc
from ragloom.service.accounts import identity

BASE = "http://testserver"
# src= and href= attributes, and url: '...' / url("...") inside the pages' inline scripts
_ASSET = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", re.IGNORECASE)
_ANY_URL = re.compile(r"""https?://[^\s"'<>)]+""", re.IGNORECASE)


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings), base_url=BASE) as c:
        yield c


def _key(client: TestClient) -> str:
    ctx = client.app.state.ctx  # type: ignore[attr-defined]
    with ctx.db.session() as s:
        boot = identity.bootstrap(s)
        return (boot.new_key or identity.create_api_key(s, tenant_id=boot.principal.tenant_id,
                                                        user_id=boot.principal.user_id)).key


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_pages_load_their_assets_from_the_server(client: TestClient, page: str) -> None:
    r = client.get(page)
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    html = r.text
    outside = [u for u in _ANY_URL.findall(html) if urlsplit(u).netloc != urlsplit(BASE).netloc]
    assert outside == [], f"{page} refers to URLs outside the server: {outside}"
    assets = [u for u in _ASSET.findall(html) if not u.startswith(("#", "data:"))]
    assert any(u.endswith(".js") for u in assets), assets
    for url in assets:
        asset = client.get(urljoin(BASE + page, url))
        assert asset.status_code == 200, f"{page}: {url} answered {asset.status_code}"
        assert asset.content, url
    spec = re.search(r"""(?:url|spec-url)\s*[:=]\s*["']([^"']+)["']""", html)
    assert spec is not None and spec.group(1) == "/openapi.json"


def test_openapi_declares_the_bearer_api_key_on_protected_routes(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    schemes = doc["components"]["securitySchemes"]
    bearer = [name for name, s in schemes.items() if s.get("type") == "http" and s.get("scheme") == "bearer"]
    assert bearer, schemes
    protected, public = [], []
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            names = {n for req in op.get("security", []) for n in req}
            (protected if names & set(bearer) else public).append(f"{method.upper()} {path}")
    # the health check, sign-up and sign-in, and a share link's visitor routes (its token in the path is the
    # credential: issue 33) — nothing else answers without a key or a session
    shared = [r for r in public if r.split(" ", 1)[1].startswith("/api/v1/share/{token}")]
    assert sorted(set(public) - set(shared)) == ["GET /api/v1/health", "POST /api/v1/auth/login",
                                                 "POST /api/v1/auth/signup"], public
    assert "POST /api/v1/share/{token}/completions" in shared
    assert all(doc["paths"][r.split(" ", 1)[1]][r.split(" ", 1)[0].lower()].get("x-ragloom-public") for r in shared)
    assert schemes["Session"] == {"type": "apiKey", "in": "cookie", "name": "ragloom_session",
                                  "description": schemes["Session"]["description"]}
    for route in ("GET /api/v1/datasets", "POST /api/v1/datasets", "POST /api/v1/retrieval",
                  "POST /api/v1/answer", "POST /api/v1/datasets/{dataset_id}/documents",
                  "GET /api/v1/datasets/{dataset_id}/documents/{document_id}"):
        assert route in protected, route
    assert "/" not in doc["paths"] and "/status.json" not in doc["paths"]  # the status page stays out


def test_auth_errors_are_unchanged_by_the_declared_scheme(client: TestClient) -> None:
    for headers in ({}, {"Authorization": "Basic abc"}, {"Authorization": "Bearer "}):
        r = client.get("/api/v1/datasets", headers=headers)
        assert r.status_code == 401, r.text
        assert r.json()["message"] == "missing API key: send 'Authorization: Bearer <key>', or sign in"
    assert client.get("/api/v1/datasets", headers={"Authorization": "Bearer nope"}).status_code == 401
    assert client.get("/api/v1/health").status_code in (200, 503)


def _timestamps(obj: object, path: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k.endswith("_at") and v is not None:
                yield f"{path}.{k}", v
            else:
                yield from _timestamps(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _timestamps(v, f"{path}[{i}]")


def _assert_utc(body: object, at_least: int) -> None:
    found = list(_timestamps(body))
    assert len(found) >= at_least, found
    for where, value in found:
        parsed = datetime.fromisoformat(value)
        assert parsed.tzinfo is not None and parsed.utcoffset().total_seconds() == 0, f"{where}: {value}"


def test_every_timestamp_carries_a_utc_offset(client: TestClient) -> None:
    auth = {"Authorization": f"Bearer {_key(client)}"}
    ds = client.post("/api/v1/datasets", json={"name": "plant"}, headers=auth)
    assert ds.status_code == 201, ds.text
    ds_id = ds.json()["id"]
    _assert_utc(ds.json(), 1)
    _assert_utc(client.get(f"/api/v1/datasets/{ds_id}", headers=auth).json(), 1)
    _assert_utc(client.get("/api/v1/datasets", headers=auth).json(), 1)
    up = client.post(f"/api/v1/datasets/{ds_id}/documents", headers=auth,
                     files=[("file", ("pump.txt", b"The pump is serviced every 450 hours.\n", "text/plain"))])
    assert up.status_code == 201, up.text
    _assert_utc(up.json(), 2)
    doc_id = up.json()["documents"][0]["id"]
    _assert_utc(client.get(f"/api/v1/datasets/{ds_id}/documents", headers=auth).json(), 2)
    _assert_utc(client.get(f"/api/v1/datasets/{ds_id}/documents/{doc_id}", headers=auth).json(), 2)


def test_iso_utc_takes_naive_as_utc_and_converts_others() -> None:
    from datetime import UTC, timedelta, timezone

    assert iso_utc(None) is None
    assert iso_utc(datetime(2026, 1, 2, 3, 4, 5)) == "2026-01-02T03:04:05+00:00"
    assert iso_utc(datetime(2026, 1, 2, 5, 4, 5, tzinfo=timezone(timedelta(hours=2)))) == "2026-01-02T03:04:05+00:00"
    assert iso_utc(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2026-01-02T03:04:05+00:00"


@pytest.mark.parametrize("fusion", ["normalized", "weighted"])
def test_dataset_says_which_fusion_its_scores_apply_to(tmp_path, fusion: str) -> None:
    settings = Settings(home=tmp_path / "home", workers=0, fusion=fusion, _env_file=None)  # type: ignore[arg-type]
    with TestClient(create_app(settings), base_url=BASE) as client:
        auth = {"Authorization": f"Bearer {_key(client)}"}
        ds = client.post("/api/v1/datasets", json={"name": "plant", "vector_similarity_weight": 0.4},
                         headers=auth).json()
        for body in (ds, client.get(f"/api/v1/datasets/{ds['id']}", headers=auth).json(),
                     client.get("/api/v1/datasets", headers=auth).json()["datasets"][0]):
            assert body["fusion"] == fusion
            assert "weighted" in body["fusion_note"]
            assert body["vector_similarity_weight"] == 0.4  # kept at the top level for compatibility
            assert body["weighted_fusion"] == {"similarity_threshold": body["similarity_threshold"],
                                               "vector_similarity_weight": 0.4,
                                               "applies": fusion == "weighted"}
