"""What the RAGFlow-compatible API's tests share: reading RAGFlow's envelope, and a data directory with
two workspaces (the default one and another, each with an API key)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragloom.context import Context, Principal
from ragloom.service.accounts import identity


def ok(r: Any) -> Any:
    """The ``data`` of a successful reply (HTTP 200, ``code`` 0)."""
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["code"] == 0, body
    return body.get("data")


def err(r: Any, code: int, status: int = 200) -> str:
    """The ``message`` of a refusal with RAGFlow's ``code`` (HTTP 200 unless ``status`` says otherwise)."""
    assert r.status_code == status, r.text
    body = r.json()
    assert body["code"] == code, body
    return str(body["message"])


def upload_and_parse(client: Any, dataset: str, files: list[tuple[str, bytes]], headers: dict[str, str]) -> list[Any]:
    """Upload files (they wait, ``UNSTART``, as in RAGFlow) and ask for their parse, as a RAGFlow script
    does; the documents as the upload answered them."""
    base = f"/ragflow/api/v1/datasets/{dataset}"
    docs = ok(client.post(f"{base}/documents", files=[("file", f) for f in files], headers=headers))
    assert {d["run"] for d in docs} == {"UNSTART"}, docs
    ok(client.post(f"{base}/chunks", json={"document_ids": [d["id"] for d in docs]}, headers=headers))
    return list(docs)


@dataclass(frozen=True)
class Workspaces:
    me: Principal  # the default workspace's administrator
    key: str  # their API key
    other_key: str  # another workspace's owner's key

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    @property
    def other_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.other_key}"}


def two_workspaces(ctx: Context) -> Workspaces:
    """Bootstrap the data directory and add another workspace, each with a key."""
    with ctx.db.session() as s:
        boot = identity.bootstrap(s)
        assert boot.new_key is not None
        tenant, user = identity.create_tenant(s, name="other", owner_email="owner@other.test")
        other_key = identity.create_api_key(s, tenant_id=tenant.id, user_id=user.id).key
        return Workspaces(boot.principal, boot.new_key.key, other_key)
