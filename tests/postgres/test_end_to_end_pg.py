"""The whole application on PostgreSQL: documents go through the real ingestion pipeline and are found by
search, and the REST API (sign-up, sign-in, keys, datasets, documents, retrieval) works through FastAPI's
TestClient — the metadata DB being a fresh PostgreSQL database (``tests/postgres/conftest.py``)."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from fastapi.testclient import TestClient
from sqlalchemy import select

from ragloom.config import Settings
from ragloom.context import Context, Principal
from ragloom.db.models import Document, DocumentVersion, Task
from ragloom.service.search.retrieval import search
from tests.ingest.docgen import paragraph
from tests.live import app_client
from tests.test_builds import drain
from tests.test_retrieval import MIXED, _ingest

API = "/api/v1"


def test_documents_are_ingested_and_found_by_search(ctx: Context, principal: Principal) -> None:
    assert ctx.db.engine.dialect.name == "postgresql"
    rng = random.Random(7)
    generated = "# Field notes\n\n" + "\n\n".join(paragraph(rng, 4) for _ in range(8)) + \
        "\n\nThe lighthouse keeper winds the clockwork lamp every evening at dusk.\n"
    _ingest(ctx, principal, "mixed", {**MIXED, "notes.md": generated})
    with ctx.db.session() as s:
        docs = s.scalars(select(Document)).all()
        assert {d.status for d in docs} == {"done"} and all(d.chunk_count > 0 for d in docs)
        assert all(d.active_version_id for d in docs)
        assert set(s.scalars(select(DocumentVersion.status))) == {"ready"}
        assert {(t.status, t.attempts) for t in s.scalars(select(Task))} == {("done", 1)}
        finished = s.scalars(select(Task.finished_at)).first()
        assert finished is not None and finished.utcoffset() is not None and finished.utcoffset().total_seconds() == 0
    for question, expected in [("how to reset the router", "router.md"), ("大熊猫吃什么", "panda.md"),
                               ("who winds the clockwork lamp of the lighthouse", "notes.md")]:
        res = search(ctx, principal=principal, kb_ids=["mixed"], question=question)
        assert res.chunks and res.chunks[0].record.document_name == expected, question


def test_the_rest_api_signs_up_signs_in_manages_keys_and_datasets(settings: Settings) -> None:
    with app_client(settings) as (client, ctx, admin):
        assert ctx.db.engine.dialect.name == "postgresql"
        _people_and_keys(client)
        _datasets(client, ctx, admin)


def _people_and_keys(client: TestClient) -> None:
    up = client.post(f"{API}/auth/signup", json={"email": "Ann@Example.org", "password": "correct horse battery",
                                                 "name": "Ann"})
    assert up.status_code in (200, 201), up.text
    assert up.json()["user"]["email"] == "ann@example.org"
    twice = client.post(f"{API}/auth/signup", json={"email": "ann@example.org", "password": "another password"})
    assert twice.status_code == 409, twice.text  # one account per address (a unique row on PostgreSQL too)
    client.cookies.clear()
    wrong = client.post(f"{API}/auth/login", json={"email": "ann@example.org", "password": "not the password"})
    assert wrong.status_code == 401
    signed = client.post(f"{API}/auth/login", json={"email": "ANN@example.org", "password": "correct horse battery"})
    assert signed.status_code == 200, signed.text
    csrf = {"X-CSRF-Token": signed.json()["csrf_token"]}
    assert client.get(f"{API}/auth/me").json()["user"]["name"] == "Ann"

    made = client.post(f"{API}/keys", headers=csrf, json={"name": "laptop", "expires_in_days": 30})
    assert made.status_code == 201, made.text
    key = made.json()
    expires = datetime.fromisoformat(key["expires_at"])
    assert expires.utcoffset() is not None and 29 < (expires - datetime.now(UTC)).days + 1 <= 30
    bearer = {"Authorization": f"Bearer {key['key']}"}
    client.cookies.clear()
    assert client.get(f"{API}/datasets", headers=bearer).status_code == 200
    listed = client.get(f"{API}/keys", headers=bearer).json()["keys"]
    assert [k["name"] for k in listed] == ["laptop"] and listed[0]["last_used_at"] is not None
    assert client.delete(f"{API}/keys/{key['id']}", headers=bearer).status_code == 200
    refused = client.get(f"{API}/datasets", headers=bearer)
    assert refused.status_code == 401 and "revoked" in refused.json()["message"]
    events = client.post(f"{API}/auth/login", json={"email": "ann@example.org", "password": "correct horse battery"})
    assert events.status_code == 200
    client.cookies.clear()


def _datasets(client: TestClient, ctx: Context, admin: dict[str, str]) -> None:
    made = client.post(f"{API}/datasets", headers=admin, json={"name": "Manuals", "description": "nul\u0000here"})
    assert made.status_code == 201, made.text  # PostgreSQL's text holds no NUL: dropped, not a failure
    ds = made.json()["id"]
    assert client.get(f"{API}/datasets/{ds}", headers=admin).json()["description"] == "nulhere"
    assert client.post(f"{API}/datasets", headers=admin, json={"name": "Manuals"}).status_code == 409
    files = [("file", ("router.md", MIXED["router.md"].encode(), "text/markdown")),
             ("file", ("bike.md", MIXED["bike.md"].encode(), "text/markdown" + "; x=" + "y" * 300)),
             ("file", ("empty.txt", b"", "text/plain"))]
    up = client.post(f"{API}/datasets/{ds}/documents", headers=admin, files=files)
    assert up.status_code == 201, up.text
    drain(ctx)
    docs = {d["name"]: d for d in client.get(f"{API}/datasets/{ds}/documents", headers=admin).json()["documents"]}
    assert docs["router.md"]["status"] == docs["bike.md"]["status"] == "done"
    assert docs["empty.txt"]["status"] == "failed" and "empty" in docs["empty.txt"]["message"].lower()
    named = client.get(f"{API}/datasets/{ds}/documents", headers=admin, params={"name": "ROUTER"}).json()
    assert [d["name"] for d in named["documents"]] == ["router.md"]  # a case-insensitive match on PostgreSQL too
    res = client.post(f"{API}/retrieval", headers=admin, json={"question": "how do I reset the router",
                                                              "dataset_ids": [ds]})
    assert res.status_code == 200, res.text
    assert res.json()["chunks"][0]["document_name"] == "router.md"
    listed = client.get(f"{API}/datasets", headers=admin).json()
    assert [d["name"] for d in listed["datasets"]] == ["Manuals"] and listed["datasets"][0]["document_count"] == 3
    gone = client.delete(f"{API}/datasets/{ds}", headers=admin)
    assert gone.status_code in (200, 204), gone.text
    assert client.get(f"{API}/datasets", headers=admin).json()["datasets"] == []
