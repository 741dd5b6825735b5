"""API keys: create (name, scope, expiry), list without secrets, revoke — refused at once; a read-only
key may list, search and ask but every route that changes data answers 403 (checked on every
route of /openapi.json, so a route added later without the check fails here)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ragloom.config import Settings
from ragloom.db.models import ApiKey
from ragloom.service.accounts import identity
from tests.cli import ragloom
from tests.live import app_client

API = "/api/v1"


@pytest.fixture
def served(tmp_path: Path):  # type: ignore[no-untyped-def]
    settings = Settings(home=tmp_path / "home", workers=0, rate_limit_per_minute=0, _env_file=None)
    with app_client(settings) as (client, ctx, headers):
        yield client, ctx, headers


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_a_key_is_created_listed_without_its_secret_and_refused_at_once_when_revoked(served) -> None:
    client, _, admin = served
    res = client.post(f"{API}/keys", headers=admin, json={"name": "ci", "expires_in_days": 30})
    assert res.status_code == 201, res.text
    new = res.json()
    secret = new["key"]
    assert new["scope"] == "read-write" and new["state"] == "active" and secret.startswith(new["prefix"])
    expires = datetime.fromisoformat(new["expires_at"])
    assert timedelta(days=29) < expires - datetime.now(UTC) <= timedelta(days=30)
    assert client.get(f"{API}/datasets", headers=_bearer(secret)).status_code == 200
    listed = client.get(f"{API}/keys", headers=admin)
    assert secret not in listed.text and "key_hash" not in listed.text
    row = next(k for k in listed.json()["keys"] if k["id"] == new["id"])
    assert row["name"] == "ci" and row["last_used_at"] is not None and "key" not in row

    revoked = client.delete(f"{API}/keys/{new['id']}", headers=admin)
    assert revoked.status_code == 200 and revoked.json()["state"] == "revoked"
    refused = client.get(f"{API}/datasets", headers=_bearer(secret))
    assert refused.status_code == 401 and "revoked" in refused.json()["message"]
    assert secret not in refused.text


def test_an_expired_key_is_refused_and_an_expiry_in_the_past_is_a_bad_request(served) -> None:
    client, ctx, admin = served
    past = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
    res = client.post(f"{API}/keys", headers=admin, json={"expires_at": past})
    assert res.status_code == 400 and "future" in res.json()["message"]
    both = client.post(f"{API}/keys", headers=admin, json={"expires_at": past, "expires_in_days": 3})
    assert both.status_code == 422 and "not both" in both.text
    new = client.post(f"{API}/keys", headers=admin, json={"expires_in_days": 1}).json()
    with ctx.db.session() as s:  # a day later
        s.get(ApiKey, new["id"]).expires_at = datetime.now(UTC) - timedelta(seconds=1)
    refused = client.get(f"{API}/datasets", headers=_bearer(new["key"]))
    assert refused.status_code == 401 and "expired" in refused.json()["message"]
    listed = {k["id"]: k["state"] for k in client.get(f"{API}/keys", headers=admin).json()["keys"]}
    assert listed[new["id"]] == "expired"


def test_members_see_and_revoke_only_their_own_keys_and_no_other_workspace_s(served) -> None:
    client, ctx, admin = served
    with ctx.db.session() as s:
        boot = identity.bootstrap(s)
        member = identity.add_member(s, tenant_id=boot.principal.tenant_id, email="bo@example.com")
        bo = identity.create_api_key(s, tenant_id=boot.principal.tenant_id, user_id=member.id, name="bo")
        tenant, user = identity.create_tenant(s, name="other", owner_email="eve@example.com")
        eve = identity.create_api_key(s, tenant_id=tenant.id, user_id=user.id, name="eve")
    admin_key = client.post(f"{API}/keys", headers=admin, json={"name": "admin's"}).json()
    mine = client.get(f"{API}/keys", headers=_bearer(bo.key)).json()["keys"]
    assert [k["name"] for k in mine] == ["bo"]
    assert client.delete(f"{API}/keys/{admin_key['id']}", headers=_bearer(bo.key)).status_code == 404
    assert client.delete(f"{API}/keys/{eve.id}", headers=admin).status_code == 404  # another workspace
    assert client.get(f"{API}/datasets", headers=_bearer(eve.key)).status_code == 200  # untouched
    everyone = {k["name"] for k in client.get(f"{API}/keys", headers=admin).json()["keys"]}
    assert {"bo", "admin's", "bootstrap"} <= everyone and "eve" not in everyone
    assert client.delete(f"{API}/keys/{bo.id}", headers=admin).status_code == 200  # an owner may
    assert client.get(f"{API}/datasets", headers=_bearer(bo.key)).status_code == 401


def _routes(client: TestClient) -> list[tuple[str, str, bool]]:
    """(method, path with every parameter filled, reads) of every /api/v1 route but the public ones
    (sign-up and sign-in take no key)."""
    spec = client.get("/openapi.json").json()
    out = []
    for path, ops in spec["paths"].items():
        if not path.startswith(API) or "/dify/" in path:  # Dify's route answers in Dify's own format
            continue
        for method, op in ops.items():
            if op.get("x-ragloom-public"):
                continue
            out.append((method.upper(), re.sub(r"\{[^}]+\}", "someid", path), bool(op.get("x-ragloom-reads"))))
    return out


def test_a_read_only_key_may_read_and_ask_but_every_route_that_changes_data_answers_403(served) -> None:
    client, _, admin = served
    kb = client.post(f"{API}/datasets", headers=admin, json={"name": "kb"}).json()
    read = client.post(f"{API}/keys", headers=admin, json={"name": "reader", "scope": "read"}).json()
    assert read["scope"] == "read"
    reader = _bearer(read["key"])
    assert client.get(f"{API}/datasets", headers=reader).json()["total"] == 1
    found = client.post(f"{API}/retrieval", headers=reader, json={"question": "pump", "dataset_ids": [kb["id"]]})
    assert found.status_code == 200, found.text
    writes = [(m, p) for m, p, reads in _routes(client) if m not in ("GET", "HEAD") and not reads]
    assert len(writes) >= 15 and ("POST", f"{API}/datasets") in writes and ("POST", f"{API}/keys") in writes
    for method, path in writes:
        res = client.request(method, path, headers=reader, json={})
        assert res.status_code == 403 and "read-only" in res.json()["message"], (method, path, res.text)
    assert client.get(f"{API}/datasets/{kb['id']}", headers=reader).status_code == 200  # nothing changed


def test_a_revoked_key_gets_401_on_every_route(served) -> None:
    client, _, admin = served
    new = client.post(f"{API}/keys", headers=admin, json={"name": "gone"}).json()
    client.delete(f"{API}/keys/{new['id']}", headers=admin)
    for method, path, _ in _routes(client):
        if path in (f"{API}/health",):  # public
            continue
        res = client.request(method, path, headers=_bearer(new["key"]), json={})
        assert res.status_code == 401, (method, path, res.status_code, res.text)


def test_keys_from_the_command_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    key = json.loads(ragloom(home, "--json", "keys", "create", "--name", "cli", "--scope", "read",
                             "--expires-in-days", "7").stdout)
    assert key["api_key"] == key["key"] and key["scope"] == "read"
    listed = ragloom(home, "--json", "keys", "list").stdout
    assert key["key"] not in listed
    assert any(k["id"] == key["id"] and k["state"] == "active" for k in json.loads(listed)["keys"])
    revoked = json.loads(ragloom(home, "--json", "keys", "revoke", key["id"]).stdout)
    assert revoked["state"] == "revoked"
    missing = ragloom(home, "keys", "revoke", "nope", check=False)
    assert missing.returncode == 2 and "not found" in missing.stderr


# -- the audit log --------------------------------------------------------------------------------


def test_the_audit_log_says_who_did_what_from_where_and_never_a_secret(served) -> None:
    client, ctx, admin = served
    new = client.post(f"{API}/keys", headers=admin, json={"name": "temp"}).json()
    client.delete(f"{API}/keys/{new['id']}", headers=admin)
    assert client.get(f"{API}/datasets", headers=_bearer(new["key"])).status_code == 401
    assert client.get(f"{API}/datasets", headers=_bearer("ragloom-not-a-key")).status_code == 401
    kb = client.post(f"{API}/datasets", headers=admin, json={"name": "doomed"}).json()
    up = client.post(f"{API}/datasets/{kb['id']}/documents", headers=admin,
                     files=[("file", ("note.txt", b"The pump needs grease.", "text/plain"))])
    doc_id = up.json()["documents"][0]["id"]
    assert client.request("DELETE", f"{API}/datasets/{kb['id']}/documents", headers=admin,
                          json={"ids": [doc_id]}).status_code == 200
    assert client.delete(f"{API}/datasets/{kb['id']}", headers=admin).status_code == 204
    with ctx.db.session() as s:
        boot = identity.bootstrap(s)
        identity.add_member(s, tenant_id=boot.principal.tenant_id, email="bo@example.com")

    res = client.get(f"{API}/audit", headers=admin)
    assert res.status_code == 200, res.text
    log = res.json()
    actions = [e["action"] for e in log["events"]]
    for action in ("key.created", "key.revoked", "auth.failed", "document.deleted", "kb.deleted", "member.added"):
        assert action in actions, actions
    assert new["key"] not in res.text and "ragloom-not-a-key" not in res.text
    revoked = next(e for e in log["events"] if e["action"] == "key.revoked")
    assert revoked["target"] == f"key:{new['id']}" and revoked["user_id"] == boot.principal.user_id
    assert revoked["origin"] == "testclient"  # the client's address, as the server saw it
    failed = next(e for e in log["events"] if e["action"] == "auth.failed")  # the revoked key, in this workspace
    assert "revoked" in failed["detail"] and failed["target"] == f"key:{new['id']}"
    deleted = next(e for e in log["events"] if e["action"] == "kb.deleted")
    assert deleted["detail"] == "doomed"
    only = client.get(f"{API}/audit", headers=admin, params={"action": "kb.deleted"}).json()
    assert only["total"] == 1 and [e["action"] for e in only["events"]] == ["kb.deleted"]
    assert client.get(f"{API}/audit", headers=admin, params={"limit": 0}).status_code == 422


def test_members_may_not_read_the_audit_log_and_no_workspace_reads_another_s(served) -> None:
    client, ctx, admin = served
    with ctx.db.session() as s:
        boot = identity.bootstrap(s)
        member = identity.add_member(s, tenant_id=boot.principal.tenant_id, email="bo@example.com")
        bo = identity.create_api_key(s, tenant_id=boot.principal.tenant_id, user_id=member.id)
        tenant, user = identity.create_tenant(s, name="other", owner_email="eve@example.com")
        eve = identity.create_api_key(s, tenant_id=tenant.id, user_id=user.id)
    refused = client.get(f"{API}/audit", headers=_bearer(bo.key))
    assert refused.status_code == 403 and "owner or an admin" in refused.json()["message"]
    theirs = client.get(f"{API}/audit", headers=_bearer(eve.key)).json()
    assert {e["action"] for e in theirs["events"]} == {"key.created"}  # eve's own key, nothing of ours
    assert all(e["user_id"] == user.id for e in theirs["events"])


def test_the_audit_log_from_the_command_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    key = json.loads(ragloom(home, "--json", "keys", "create", "--name", "x").stdout)
    ragloom(home, "keys", "revoke", key["id"])
    (event,) = json.loads(ragloom(home, "--json", "audit", "--action", "key.revoked").stdout)["events"]
    assert event["target"] == f"key:{key['id']}" and event["origin"] == "cli"


def test_a_keys_last_use_is_stamped_at_most_once_a_minute(served) -> None:
    """A request does not write to the database just to say the key was used again a second later."""
    client, ctx, admin = served
    secret = client.post(f"{API}/keys", headers=admin, json={"name": "busy"}).json()["key"]
    assert client.get(f"{API}/datasets", headers=_bearer(secret)).status_code == 200
    with ctx.db.session() as s:
        row = s.query(ApiKey).filter_by(name="busy").one()
        first = identity.aware(row.last_used_at)
    assert client.get(f"{API}/datasets", headers=_bearer(secret)).status_code == 200
    with ctx.db.session() as s:
        row = s.query(ApiKey).filter_by(name="busy").one()
        assert identity.aware(row.last_used_at) == first
        row.last_used_at = first - identity.LAST_USED_RESOLUTION  # a minute ago: the next use is stamped
    assert client.get(f"{API}/datasets", headers=_bearer(secret)).status_code == 200
    with ctx.db.session() as s:
        assert identity.aware(s.query(ApiKey).filter_by(name="busy").one().last_used_at) > first
