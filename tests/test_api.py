"""End to end through the REST API on a real server on loopback."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragloom.service.accounts import identity
from tests.corpus import PAGE2_QUESTION, write_manual_pdf, write_policy_docx
from tests.live import live_server, wait_documents

pytestmark = pytest.mark.slow


@pytest.fixture
def server(settings):
    with live_server(settings) as live:
        yield live


def _keys(live) -> tuple[str, str]:
    """The default tenant's admin key and a second tenant's key."""
    with live.ctx.db.session() as s:
        boot = identity.bootstrap(s)
        t2, u2 = identity.create_tenant(s, name="other", owner_email="owner@other.test")
        other = identity.create_api_key(s, tenant_id=t2.id, user_id=u2.id)
        first = boot.new_key or identity.create_api_key(s, tenant_id=boot.principal.tenant_id,
                                                        user_id=boot.principal.user_id)
    return first.key, other.key


def test_upload_search_answer_and_bad_files(server, tmp_path: Path) -> None:
    key, _ = _keys(server)
    api = server.client(key)
    ds = api.post("/datasets", json={"name": "manuals"})
    assert ds.status_code == 201, ds.text
    ds_id = ds.json()["id"]
    pdf, docx = tmp_path / "orion-manual.pdf", tmp_path / "hr-policy.docx"
    write_manual_pdf(pdf)
    write_policy_docx(docx)
    files = [
        ("file", ("orion-manual.pdf", pdf.read_bytes(), "application/pdf")),
        ("file", ("hr-policy.docx", docx.read_bytes(), "application/octet-stream")),
        ("file", ("empty.txt", b"", "text/plain")),
        ("file", ("broken.pdf", b"%PDF-1.7\n1 0 obj <<>> garbage without xref", "application/pdf")),
        ("file", ("tool.exe", b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff", "application/octet-stream")),
    ]
    up = api.post(f"/datasets/{ds_id}/documents", files=files)
    assert up.status_code == 201, up.text
    assert len(up.json()["documents"]) == 5
    docs = {d["name"]: d for d in wait_documents(api, ds_id)}
    assert docs["orion-manual.pdf"]["status"] == "done" and docs["orion-manual.pdf"]["chunk_count"] > 0
    assert docs["hr-policy.docx"]["status"] == "done"
    assert docs["empty.txt"]["status"] == "failed" and "empty" in docs["empty.txt"]["message"].lower()
    assert docs["broken.pdf"]["status"] == "failed" and "pdf" in docs["broken.pdf"]["message"].lower()
    assert docs["tool.exe"]["status"] == "failed" and "support" in docs["tool.exe"]["message"].lower()
    assert api.get("/health").status_code == 200  # the server stays up

    res = api.post("/retrieval", json={"question": PAGE2_QUESTION, "dataset_ids": [ds_id], "page_size": 3})
    assert res.status_code == 200, res.text
    top = res.json()["chunks"][0]
    assert top["document_name"] == "orion-manual.pdf" and "450" in top["content"]
    assert {p[0] for p in top["positions"]} == {2}
    assert top["similarity"] >= top["term_similarity"] * 0.7 - 1e-6

    ans = api.post("/answer", json={"question": PAGE2_QUESTION, "dataset_ids": [ds_id]})
    assert ans.status_code == 200, ans.text
    body = ans.json()
    assert body["model"] == "extractive"
    assert top["chunk_id"] in {r["chunk_id"] for r in body["references"]}
    ref = next(r for r in body["references"] if r["chunk_id"] == top["chunk_id"])
    assert f"[ID:{ref['id']}]" in body["answer"]

    deleted = api.request("DELETE", f"/datasets/{ds_id}/documents", json={"ids": [docs["orion-manual.pdf"]["id"]]})
    assert deleted.status_code == 200 and deleted.json() == {"deleted": 1}
    res = api.post("/retrieval", json={"question": PAGE2_QUESTION, "dataset_ids": [ds_id]}).json()
    assert all(c["document_name"] != "orion-manual.pdf" for c in res["chunks"])


def test_tenant_isolation_and_errors(server, tmp_path: Path) -> None:
    key, other_key = _keys(server)
    api, other = server.client(key), server.client(other_key)
    ds_id = api.post("/datasets", json={"name": "private"}).json()["id"]
    md = b"# Secrets\n\nThe vault combination is 31-22-7 and it is changed every quarter.\n"
    doc_id = api.post(f"/datasets/{ds_id}/documents", files=[("file", ("vault.md", md))]).json()["documents"][0]["id"]
    wait_documents(api, ds_id)
    assert api.post("/retrieval", json={"question": "vault combination", "dataset_ids": [ds_id]}).json()["chunks"]

    assert other.get("/datasets").json()["datasets"] == []
    for method, path, kw in [
        ("GET", f"/datasets/{ds_id}", {}),
        ("GET", f"/datasets/{ds_id}/documents", {}),
        ("GET", f"/datasets/{ds_id}/documents/{doc_id}", {}),
        ("GET", f"/datasets/{ds_id}/documents/{doc_id}/preview", {}),
        ("GET", f"/datasets/{ds_id}/documents/{doc_id}/pages", {}),
        ("DELETE", f"/datasets/{ds_id}", {}),
        ("POST", "/retrieval", {"json": {"question": "vault combination", "dataset_ids": [ds_id]}}),
        ("POST", "/answer", {"json": {"question": "vault combination", "dataset_ids": [ds_id]}}),
        ("POST", f"/datasets/{ds_id}/documents", {"files": [("file", ("x.md", b"# x\n\ny"))]}),
    ]:
        r = other.request(method, path, **kw)
        assert r.status_code == 404, (method, path, r.status_code, r.text)
        assert "31-22-7" not in r.text and r.json()["message"]
    # the other tenant's own (empty) knowledge base returns nothing
    own = other.post("/datasets", json={"name": "private"}).json()["id"]
    res = other.post("/retrieval", json={"question": "vault combination", "dataset_ids": [own]})
    assert res.status_code == 200 and res.json()["chunks"] == []

    assert server.client("ragloom-wrong").get("/datasets").status_code == 401
    assert api.post("/retrieval", json={"question": "x"}).status_code == 400  # no dataset and no routing
    assert api.post("/retrieval", json={"question": ""}).status_code == 422
    bad = api.post("/datasets", json={"name": "x", "language": "klingon"})
    assert bad.status_code == 400 and "language" in bad.json()["message"]
    assert api.post("/datasets", json={"name": "private"}).status_code == 409
    assert api.get(f"/datasets/{ds_id}").json()["document_count"] == 1
