"""Typed responses: /openapi.json describes the body of every response of every route (2xx and
errors), and the real responses are exactly the declared models — the same keys, in the same order,
as the API sent before it had response models (nothing dropped by response-model filtering, nothing
added, absent keys still absent rather than null)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import BaseModel

from ragloom.api.app import create_app
from ragloom.config import Settings
from ragloom.schemas.answers import CitedAnswer
from ragloom.schemas.chunks import ChunkList
from ragloom.schemas.datasets import Dataset, DatasetList, DatasetTags
from ragloom.schemas.documents import DeletedDocuments, Document, DocumentList, PageList, UploadedDocuments
from ragloom.schemas.retrieval import Retrieval
from ragloom.schemas.system import ErrorBody, Health
from ragloom.service.accounts import identity
from ragloom.worker import run_one
from tests.corpus import PAGE2_QUESTION, write_manual_pdf

REF = "#/components/schemas/"

# The keys (in order) each resource had when the routes still returned plain dicts: the typed
# models must send exactly these.
DATASET_KEYS = ["id", "name", "description", "language", "permission", "chunk_method", "parser_config",
                "embedding_model", "similarity_threshold", "vector_similarity_weight", "min_relevance",
                "review_versions", "source_permissions", "admins_see_all", "fusion", "fusion_note",
                "weighted_fusion", "pagerank", "synonyms", "tag_kb_ids", "topn_tags", "document_count", "created_at",
                "raptor", "graphrag"]
DOCUMENT_KEYS = ["id", "kb_id", "name", "status", "progress", "message", "chunk_count", "coverage", "chunk_method",
                 "parser_config", "metadata", "active_version_id", "latest_version_id", "created_at", "updated_at",
                 "file_type", "size", "page_count", "thumbnail"]
STORED_CHUNK_KEYS = ["chunk_id", "doc_id", "version_id", "document_name", "order", "method", "kind", "available",
                     "heading_path", "content", "positions", "html", "parent_id", "tag_keywords", "important_keywords",
                     "questions", "tags", "edited"]
RETRIEVED_CHUNK_KEYS = ["chunk_id", "doc_id", "kb_id", "version_id", "document_name", "content", "similarity",
                        "term_similarity", "vector_similarity", "rank_feature", "rerank_score", "relevance", "tags",
                        "important_keywords", "positions"]
EXPLAIN_ROW_KEYS = ["chunk_id", "doc_id", "kb_id", "document_name", "stage", "reason", "passed_gate", "text_score",
                    "term_similarity", "vector_similarity", "rank_feature", "rerank_score", "similarity", "rank",
                    "relevance"]
REFERENCE_KEYS = ["id", "chunk_id", "doc_id", "version_id", "document_name", "content", "positions"]
CITATION_KEYS = ["sentence", "text", "id", "verdict", "support", "supporting_sentence", "inserted"]


# --- the schema -----------------------------------------------------------------------------------

def _model_schema(schema: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any] | None:
    """The component a ``$ref`` schema names, when it is an object with declared properties."""
    ref = schema.get("$ref", "")
    target = schemas.get(ref.removeprefix(REF)) if ref.startswith(REF) else None
    return target if target and target.get("properties") else None


def _refs(node: object) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def schema_problems(doc: dict[str, Any]) -> list[str]:
    """Everything /openapi.json leaves undescribed: a 2xx response without a body schema (a JSON body
    must be a declared model: a ``dict[str, Any]`` route shows up as a bare object), a 204 with a
    body, a route without its error responses (400/422/500 for all, 401 for the ones that need a
    key: the error body), and ``$ref``s that point nowhere."""
    schemas: dict[str, Any] = doc.get("components", {}).get("schemas", {})
    problems = [f"dangling $ref {ref}" for ref in sorted(set(_refs(doc)))
                if not ref.startswith(REF) or ref.removeprefix(REF) not in schemas]
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            where = f"{method.upper()} {path}"
            responses: dict[str, Any] = op.get("responses", {})
            ok = [code for code in responses if code.startswith("2")]
            if not ok:
                problems.append(f"{where}: no 2xx response")
            for code in ok:
                content = responses[code].get("content") or {}
                if code == "204":
                    if content:
                        problems.append(f"{where} 204: declares a body")
                    continue
                if not content:
                    problems.append(f"{where} {code}: no content")
                for media, spec in content.items():
                    schema = spec.get("schema")
                    if not schema:
                        problems.append(f"{where} {code} {media}: no schema")
                    elif media == "application/json" and _model_schema(schema, schemas) is None:
                        problems.append(f"{where} {code}: the JSON body is not a declared model: {schema}")
            # Dify's external-knowledge API (api/dify.py) answers with Dify's error body, and 403 for a bad
            # key; 413 is the body-limit middleware's, before routing: the API's error body on every route
            # so does the OpenAI-compatible API (api/openai_compat.py) with OpenAI's
            dify = "dify" in op.get("tags", [])
            error_body = "DifyError" if dify else "OpenAIError" if "openai" in op.get("tags", []) else "ErrorBody"
            needed = ["400", "422", "500"] + ([("403" if dify else "401")] if op.get("security") else [])
            problems += [f"{where}: error {code} not documented" for code in needed if code not in responses]
            for code, spec in responses.items():
                if code[0] not in "45":
                    continue
                schema = (spec.get("content") or {}).get("application/json", {}).get("schema", {})
                if _model_schema(schema, schemas) is None:
                    problems.append(f"{where} {code}: no error body schema")
                elif code.startswith("4") and schema["$ref"] != REF + ("ErrorBody" if code == "413" else error_body):
                    problems.append(f"{where} {code}: not the error body: {schema}")
    return problems


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as c:
        yield c


def test_every_response_of_every_route_has_a_schema(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    assert len(doc["paths"]) >= 15
    assert schema_problems(doc) == []
    assert "HTTPValidationError" not in doc["components"]["schemas"]  # 422 is the API's own error body


def test_status_codes_and_media_types_are_declared(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    docs = "/api/v1/datasets/{dataset_id}/documents"
    assert set(paths["/api/v1/datasets"]["post"]["responses"]) >= {"201", "409"}
    assert "content" not in paths["/api/v1/datasets/{dataset_id}"]["delete"]["responses"]["204"]
    assert "202" in paths[docs + "/{document_id}/reparse"]["post"]["responses"]
    assert "202" in paths[docs + "/{document_id}"]["patch"]["responses"]
    assert "429" in paths["/api/v1/retrieval"]["post"]["responses"]
    answer = paths["/api/v1/answer"]["post"]["responses"]["200"]["content"]
    assert answer["application/json"]["schema"] == {"$ref": REF + "CitedAnswer"}
    assert "text/event-stream" in answer and answer["text/event-stream"]["itemSchema"]
    assert "image/png" in paths[docs + "/{document_id}/pages/{page}.png"]["get"]["responses"]["200"]["content"]
    health = paths["/api/v1/health"]["get"]["responses"]
    assert health["503"]["content"]["application/json"]["schema"] == {"$ref": REF + "Health"}


def test_a_route_added_without_a_response_model_is_caught(settings: Settings) -> None:
    app = create_app(settings)

    @app.get("/api/v1/untyped")
    def untyped() -> dict[str, Any]:
        return {}

    @app.get("/api/v1/unannotated", response_model=None)
    def unannotated():  # type: ignore[no-untyped-def]
        return {}

    @app.get("/api/v1/no-errors")
    def no_errors() -> DeletedDocuments:
        return DeletedDocuments(deleted=0)

    with TestClient(app) as c:
        problems = schema_problems(c.get("/openapi.json").json())
    assert any(p.startswith("GET /api/v1/untyped 200: the JSON body is not a declared model") for p in problems)
    assert any(p.startswith("GET /api/v1/unannotated 200") for p in problems)
    assert "GET /api/v1/no-errors: error 422 not documented" in problems
    assert not any(p.startswith("GET /api/v1/datasets") for p in problems)


# --- the real responses ---------------------------------------------------------------------------

def _exact(model: type[BaseModel], body: Any) -> Any:
    """``body`` validates against ``model`` and is exactly what the model sends (same keys in the same
    order, same values): nothing was dropped by the response model, nothing added."""
    again = model.model_validate(body).model_dump(mode="json")
    assert json.dumps(again) == json.dumps(body)
    return body


def _drain(client: TestClient) -> None:
    ctx = client.app.state.ctx  # type: ignore[attr-defined]
    while run_one(ctx, "test"):
        pass


def test_real_responses_are_exactly_the_declared_models(client: TestClient, tmp_path: Path) -> None:
    ctx = client.app.state.ctx  # type: ignore[attr-defined]
    with ctx.db.session() as s:
        boot = identity.bootstrap(s)
        key = (boot.new_key or identity.create_api_key(s, tenant_id=boot.principal.tenant_id,
                                                       user_id=boot.principal.user_id)).key
    client.headers["Authorization"] = f"Bearer {key}"
    api = "/api/v1"

    ds = _exact(Dataset, client.post(f"{api}/datasets", json={"name": "manuals",
                                                              "description": "pump manuals"}).json())
    assert list(ds) == DATASET_KEYS
    other = _exact(Dataset, client.post(f"{api}/datasets", json={"name": "cooking",
                                                                 "description": "bread recipes"}).json())
    _exact(DatasetList, client.get(f"{api}/datasets").json())
    _exact(Dataset, client.get(f"{api}/datasets/{ds['id']}").json())
    _exact(Dataset, client.patch(f"{api}/datasets/{ds['id']}", json={"description": "pump manuals v2"}).json())

    pdf = tmp_path / "orion-manual.pdf"
    write_manual_pdf(pdf)
    up = client.post(f"{api}/datasets/{ds['id']}/documents",
                     files=[("file", ("orion-manual.pdf", pdf.read_bytes(), "application/pdf")),
                            ("file", ("notes.md", b"# Notes\n\nThe pump weighs 450 grams.\n", "text/markdown"))])
    assert up.status_code == 201, up.text
    assert [list(d) for d in _exact(UploadedDocuments, up.json())["documents"]] == [DOCUMENT_KEYS] * 2
    _drain(client)
    docs = _exact(DocumentList, client.get(f"{api}/datasets/{ds['id']}/documents").json())
    assert [d["status"] for d in docs["documents"]] == ["done", "done"]
    assert all(list(d) == DOCUMENT_KEYS for d in docs["documents"])
    doc_id = next(d["id"] for d in docs["documents"] if d["name"] == "orion-manual.pdf")
    base = f"{api}/datasets/{ds['id']}/documents/{doc_id}"
    _exact(Document, client.get(base).json())
    _exact(Document, client.patch(f"{base}/metadata", json={"metadata": {"author": "Ada", "year": 2024}}).json())
    listed = _exact(ChunkList, client.get(f"{base}/chunks", params={"include_hidden": True}).json())
    assert list(listed) == ["chunks", "total", "version_id", "method"]
    assert listed["chunks"] and all(list(c) == STORED_CHUNK_KEYS for c in listed["chunks"])
    pages = _exact(PageList, client.get(f"{base}/pages").json())
    assert pages["pages"] and list(pages["pages"][0]) == ["page", "width", "height", "image"]
    _exact(DatasetTags, client.get(f"{api}/datasets/{ds['id']}/tags").json())

    plain = _exact(Retrieval, client.post(f"{api}/retrieval", json={"question": PAGE2_QUESTION,
                                                                     "dataset_ids": [ds["id"]]}).json())
    assert list(plain) == ["chunks", "total"]  # explain and routing absent, not null
    assert plain["chunks"] and all(list(c) == RETRIEVED_CHUNK_KEYS for c in plain["chunks"])
    assert all(isinstance(p[0], int) for c in plain["chunks"] for p in c["positions"])  # page numbers stay ints
    explained = _exact(Retrieval, client.post(f"{api}/retrieval", json={
        "question": PAGE2_QUESTION, "dataset_ids": [ds["id"]], "explain": True}).json())
    assert list(explained) == ["chunks", "total", "explain"]
    assert list(explained["explain"]) == ["query", "candidates"]
    assert all(list(r) == EXPLAIN_ROW_KEYS for r in explained["explain"]["candidates"])
    assert {"scope", "keywords", "threshold", "fusion"} <= set(explained["explain"]["query"])
    routed = _exact(Retrieval, client.post(f"{api}/retrieval", json={
        "question": PAGE2_QUESTION, "dataset_ids": [ds["id"], other["id"]], "route": True, "explain": True}).json())
    assert list(routed) == ["chunks", "total", "explain", "routing"]
    assert [list(r) for r in routed["routing"]] == [["kb_id", "name", "score", "chosen"]] * 2
    assert routed["explain"]["query"]["routing"] == routed["routing"]

    answer = _exact(CitedAnswer, client.post(f"{api}/answer", json={"question": PAGE2_QUESTION,
                                                                     "dataset_ids": [ds["id"]]}).json())
    assert list(answer) == ["answer", "model", "insufficient", "truncated", "references", "mode", "citations"]
    assert answer["references"] and all(list(r) == REFERENCE_KEYS for r in answer["references"])
    assert answer["citations"] and all(list(c) == CITATION_KEYS for c in answer["citations"])
    stream = client.post(f"{api}/answer", json={"question": PAGE2_QUESTION, "dataset_ids": [ds["id"]], "stream": True})
    assert stream.headers["content-type"].startswith("text/event-stream")
    events = [line.removeprefix("data: ") for line in stream.text.split("\n\n") if line]
    assert events[-1] == "[DONE]"
    final = json.loads(events[-2])
    assert list(final) == ["answer"] and _exact(CitedAnswer, final["answer"]) == answer
    assert all(list(json.loads(e)) == ["delta"] for e in events[:-2])

    health = client.get(f"{api}/health")
    body = _exact(Health, health.json())
    assert list(body)[:4] == ["status", "version", "workers", "queue"]
    assert ("message" in body) == (body["status"] == "unavailable") == (health.status_code == 503)

    _exact(ErrorBody, client.get(f"{api}/datasets/nope").json())
    _exact(ErrorBody, client.post(f"{api}/retrieval", json={"question": ""}).json())
    _exact(ErrorBody, client.post(f"{api}/datasets", json={"name": "manuals"}).json())
    _exact(ErrorBody, client.get(f"{api}/datasets", headers={"Authorization": ""}).json())
    _exact(Document, client.post(f"{base}/reparse").json())
    _exact(Document, client.post(f"{base}/cancel").json())
    assert _exact(DeletedDocuments, client.request("DELETE", f"{api}/datasets/{ds['id']}/documents",
                                                   json={"ids": [doc_id]}).json()) == {"deleted": 1}
    gone = client.delete(f"{api}/datasets/{other['id']}")
    assert gone.status_code == 204 and gone.content == b""
