"""Dify's external-knowledge API (``POST /api/v1/dify/retrieval``, api/dify.py) against the in-process app:
the request and response of Dify's specification, top_k and score_threshold, metadata conditions, and
Dify's error bodies (1001, 1002, 2001) with their HTTP statuses; another tenant's dataset does not exist."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragloom.api.app import create_app
from ragloom.config import Settings
from ragloom.service.accounts import identity
from ragloom.worker import run_one

URL = "/api/v1/dify/retrieval"
QUESTION = "How often must the pump be serviced?"
NOTES = {
    "pump.md": "# Pump service\n\nThe pump must be serviced every 500 hours of operation. Replace the pump seal "
               "when servicing the pump.\n",
    "fan.md": "# Fan\n\nThe cooling fan runs at 1200 rpm and needs no service during its life.\n",
    "valve.md": "# Valve\n\nThe relief valve opens at 6 bar. Check the valve every year when the pump is serviced.\n",
    "bread.md": "# Bread\n\nKnead the dough for ten minutes and let it rise for an hour before baking.\n",
}


@dataclass
class Setup:
    client: TestClient
    key: str
    other_key: str
    kb: str
    other_kb: str


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    home = tmp_path_factory.mktemp("dify") / "home"
    settings = Settings(home=home, workers=0, worker_poll_seconds=0.05, _env_file=None)
    with TestClient(create_app(settings)) as client:
        ctx = client.app.state.ctx  # type: ignore[attr-defined]
        with ctx.db.session() as s:
            boot = identity.bootstrap(s)
            assert boot.new_key is not None
            tenant, user = identity.create_tenant(s, name="other", owner_email="owner@other.test")
            other_key = identity.create_api_key(s, tenant_id=tenant.id, user_id=user.id).key
        api = {"Authorization": f"Bearer {boot.new_key.key}"}
        kb = client.post("/api/v1/datasets", json={"name": "manuals"}, headers=api).json()["id"]
        files = [("file", (name, text.encode(), "text/markdown")) for name, text in NOTES.items()]
        docs = client.post(f"/api/v1/datasets/{kb}/documents", files=files, headers=api).json()["documents"]
        other_kb = client.post("/api/v1/datasets", json={"name": "secret-manuals"},
                               headers={"Authorization": f"Bearer {other_key}"}).json()["id"]
        client.post(f"/api/v1/datasets/{other_kb}/documents", files=files[:1],
                    headers={"Authorization": f"Bearer {other_key}"})
        while run_one(ctx, "test"):
            pass
        pump = next(d["id"] for d in docs if d["name"] == "pump.md")
        valve = next(d["id"] for d in docs if d["name"] == "valve.md")
        client.patch(f"/api/v1/datasets/{kb}/documents/{pump}/metadata",
                     json={"metadata": {"author": "Ada", "year": 2024}}, headers=api)
        client.patch(f"/api/v1/datasets/{kb}/documents/{valve}/metadata",
                     json={"metadata": {"author": "Grace", "year": 2019}}, headers=api)
        yield Setup(client, boot.new_key.key, other_key, kb, other_kb)


def _ask(setup: Setup, body: dict[str, Any], *, key: str | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, Any]:
    sent = {"Authorization": f"Bearer {key or setup.key}"} if headers is None else headers
    r = setup.client.post(URL, json=body, headers=sent)
    return r.status_code, r.json()


def _body(knowledge_id: str, top_k: int = 4, score_threshold: float = 0.0, **more: Any) -> dict[str, Any]:
    return {"knowledge_id": knowledge_id, "query": QUESTION,
            "retrieval_setting": {"top_k": top_k, "score_threshold": score_threshold}, **more}


def test_records_follow_difys_response(setup: Setup) -> None:
    status, body = _ask(setup, _body(setup.kb))
    assert status == 200, body
    assert list(body) == ["records"]
    records = body["records"]
    assert len(records) == 4
    for r in records:
        assert list(r) == ["content", "score", "title", "metadata"]
        assert isinstance(r["content"], str) and r["content"]
        assert isinstance(r["score"], float) and 0.0 <= r["score"] <= 1.0
        assert r["title"] in NOTES
        assert isinstance(r["metadata"], dict)  # an object, never null (Dify fails on null)
        assert set(r["metadata"]) == {"document_id", "dataset_id", "chunk_id", "version_id", "pages"}
        assert r["metadata"]["dataset_id"] == setup.kb
    assert records[0]["title"] == "pump.md" and "500 hours" in records[0]["content"]
    scores = [r["score"] for r in records]
    assert scores == sorted(scores, reverse=True)
    # the same search as POST /retrieval (one retrieval path), and knowledge_id may be the dataset's name
    same = setup.client.post("/api/v1/retrieval", json={"question": QUESTION, "dataset_ids": [setup.kb],
                                                         "page_size": 4, "min_relevance": 0.0},
                             headers={"Authorization": f"Bearer {setup.key}"}).json()
    assert [c["chunk_id"] for c in same["chunks"]] == [r["metadata"]["chunk_id"] for r in records]
    assert _ask(setup, _body("manuals")) == (200, body)


def test_top_k_bounds_the_records(setup: Setup) -> None:
    for k in (1, 2, 3):
        status, body = _ask(setup, _body(setup.kb, top_k=k))
        assert status == 200 and len(body["records"]) == k
    status, body = _ask(setup, _body(setup.kb, top_k=10_000))  # more than a page holds: as many as there are
    assert status == 200 and len(body["records"]) == 4


def test_score_threshold_leaves_out_lower_scores(setup: Setup) -> None:
    _, everything = _ask(setup, _body(setup.kb))
    scores = [r["score"] for r in everything["records"]]
    assert len(set(scores)) > 1
    threshold = scores[1]
    _, kept = _ask(setup, _body(setup.kb, score_threshold=threshold))
    assert kept["records"] == [r for r in everything["records"] if r["score"] >= threshold]
    assert 0 < len(kept["records"]) < len(scores)
    assert _ask(setup, _body(setup.kb, score_threshold=1.0)) == (200, {"records": []})


def test_metadata_condition_narrows_to_matching_documents(setup: Setup) -> None:
    def titles(condition: dict[str, Any]) -> list[str]:
        status, body = _ask(setup, _body(setup.kb, metadata_condition=condition))
        assert status == 200, body
        return sorted(r["title"] for r in body["records"])

    is_ada = {"name": "author", "comparison_operator": "is", "value": "Ada"}
    assert titles({"conditions": [is_ada]}) == ["pump.md"]
    recent = {"name": "year", "comparison_operator": "≥", "value": 2020}
    old = {"name": "year", "comparison_operator": "<", "value": 2020}
    assert titles({"logical_operator": "or", "conditions": [recent, old]}) == ["pump.md", "valve.md"]
    assert titles({"logical_operator": "and", "conditions": [recent, old]}) == []
    assert titles({"conditions": [{"name": "author", "comparison_operator": "empty"}]}) == ["bread.md", "fan.md"]
    assert titles({"conditions": [{"name": "author", "comparison_operator": "not contains", "value": "ad"}]}) \
        == ["bread.md", "fan.md", "valve.md"]
    assert titles({"conditions": [{"name": "author", "comparison_operator": "in", "value": ["Grace", "Linus"]}]}) \
        == ["valve.md"]
    status, body = _ask(setup, _body(setup.kb, metadata_condition={
        "conditions": [{"name": "author", "comparison_operator": "start with", "value": "A"}]}))
    assert status == 400 and body["error_code"] == 400 and "'start with' is not supported" in body["error_msg"]


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Basic abc"}, {"Authorization": "Bearer "},
                                     {"Authorization": "Bearer two words"}], ids=["none", "basic", "empty", "spaces"])
def test_a_malformed_authorization_header_is_1001(setup: Setup, headers: dict[str, str]) -> None:
    status, body = _ask(setup, _body(setup.kb), headers=headers)
    assert status == 403
    assert body == {"error_code": 1001,
                    "error_msg": "Invalid Authorization header format. Expected 'Bearer <api-key>' format."}


def test_an_unknown_key_is_1002(setup: Setup) -> None:
    status, body = _ask(setup, _body(setup.kb), key="rl-not-a-key")
    assert status == 403
    assert list(body) == ["error_code", "error_msg"] and body["error_code"] == 1002
    assert body["error_msg"].startswith("Authorization failed")


def test_an_unknown_or_foreign_knowledge_base_is_2001(setup: Setup) -> None:
    status, missing = _ask(setup, _body("no-such-kb"))
    assert status == 404 and missing["error_code"] == 2001
    assert missing["error_msg"].startswith("The knowledge does not exist")
    for foreign in (setup.other_kb, "secret-manuals"):  # another tenant's id, and its name
        status, body = _ask(setup, _body(foreign))
        assert status == 404
        assert body == {"error_code": 2001, "error_msg": missing["error_msg"].replace("no-such-kb", foreign)}
    # ... and the other tenant reads its own, and not ours
    assert _ask(setup, _body(setup.other_kb), key=setup.other_key)[0] == 200
    assert _ask(setup, _body(setup.kb), key=setup.other_key)[1]["error_code"] == 2001


def test_invalid_requests_get_difys_error_body(setup: Setup) -> None:
    status, body = _ask(setup, {"knowledge_id": setup.kb, "query": QUESTION})
    assert status == 422 and body["error_code"] == 422 and "retrieval_setting" in body["error_msg"]
    status, body = _ask(setup, _body(setup.kb, top_k=0))
    assert status == 422 and body["error_code"] == 422 and "top_k" in body["error_msg"]
    status, body = _ask(setup, _body(setup.kb, score_threshold=1.5))
    assert status == 422 and "score_threshold" in body["error_msg"]
    # fields Dify may add beyond its specification are ignored
    status, body = _ask(setup, {**_body(setup.kb, top_k=1), "use_kg": False})
    assert status == 200 and len(body["records"]) == 1


def test_the_route_is_declared_with_difys_bodies(setup: Setup) -> None:
    op = setup.client.get("/openapi.json").json()["paths"][URL]["post"]
    responses = op["responses"]
    assert responses["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/DifyRecords")
    for code in ("403", "404", "422", "429", "500"):
        assert responses[code]["content"]["application/json"]["schema"]["$ref"].endswith("/DifyError"), code
    assert "401" not in responses and op["security"]


def test_dify_needs_nothing_else_on_disk(tmp_path: Path) -> None:
    """A fresh server answers a Dify request for a dataset with no documents with no records."""
    with TestClient(create_app(Settings(home=tmp_path / "h", workers=0, _env_file=None))) as client:
        ctx = client.app.state.ctx  # type: ignore[attr-defined]
        with ctx.db.session() as s:
            key = identity.bootstrap(s).new_key
        assert key is not None
        auth = {"Authorization": f"Bearer {key.key}"}
        client.post("/api/v1/datasets", json={"name": "empty"}, headers=auth)
        r = client.post(URL, json=_body("empty"), headers=auth)
        assert (r.status_code, r.json()) == (200, {"records": []})


def test_the_readmes_example_request(setup: Setup) -> None:
    """The request the README shows (its `knowledge_id` is the dataset's name) gets Dify's records."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    example = next(b for b in re.findall(r"```json\n(.*?)```", readme, re.S) if '"knowledge_id"' in b)
    body = json.loads(example)
    status, reply = _ask(setup, body)
    assert status == 200, reply
    limit = body["retrieval_setting"]
    assert 1 <= len(reply["records"]) <= limit["top_k"]
    assert all(r["score"] >= limit["score_threshold"] for r in reply["records"])
    assert reply["records"][0]["title"] == "pump.md"
