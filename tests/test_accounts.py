"""People and workspaces over real HTTP: sign-up, sign-in with a session cookie and a CSRF token,
throttled failures, password change and reset, workspaces, invitations, roles, sharing — and two
people walked through it from sign-up to a revoked key."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ragloom.config import Settings
from ragloom.context import Context
from ragloom.db.models import LoginSession, User
from ragloom.service.accounts import identity, passwords
from tests.cli import ragloom
from tests.live import Live, live_server

PASSWORD_A = "correct horse battery staple"
PASSWORD_B = "Tr0ub4dor&3 of B"


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    home = tmp_path_factory.mktemp("accounts") / "home"
    settings = Settings(home=home, workers=0, rate_limit_per_minute=0, login_attempts=3, _env_file=None)
    with live_server(settings, workers=0) as server:
        with server.ctx.db.session() as s:
            boot = identity.bootstrap(s)
        assert boot.new_key is not None and boot.password
        server.admin_key = boot.new_key.key  # type: ignore[attr-defined]
        server.admin_password = boot.password  # type: ignore[attr-defined]
        yield server


class Person:
    """A browser: a cookie jar, and the CSRF token it got at sign-in sent with what changes data."""

    def __init__(self, live: Live) -> None:
        self.http = httpx.Client(base_url=live.url + "/api/v1", timeout=60)
        self.csrf = ""

    def signed_in(self, res: httpx.Response) -> dict:
        assert res.status_code in (200, 201), res.text
        body = res.json()
        self.csrf = body["csrf_token"]
        return body

    def get(self, path: str, **kw: object) -> httpx.Response:
        return self.http.get(path, **kw)  # type: ignore[arg-type]

    def send(self, method: str, path: str, **kw: object) -> httpx.Response:
        headers = {"X-CSRF-Token": self.csrf}
        return self.http.request(method, path, headers=headers, **kw)  # type: ignore[arg-type]


def _key(live: Live, key: str) -> httpx.Client:
    return live.client(key)


def test_two_people_from_sign_up_to_a_revoked_key(live: Live, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    seen: list[str] = []  # every response body: no password may appear in one
    a, b = Person(live), Person(live)
    me = a.signed_in(a.http.post("/auth/signup", json={"email": "Ann@Example.org", "password": PASSWORD_A,
                                                       "name": "Ann"}))
    assert me["user"]["email"] == "ann@example.org" and me["via"] == "session"
    assert me["workspace"]["role"] == "owner" and len(me["workspaces"]) == 1
    # A state-changing request without the CSRF token is refused, with it accepted
    refused = a.http.post("/workspaces", json={"name": "Acme"})
    assert refused.status_code == 403 and "CSRF" in refused.json()["message"]
    acme = a.send("POST", "/workspaces", json={"name": "Acme"}).json()
    assert acme["role"] == "owner"
    switched = a.send("POST", "/auth/workspace", json={"workspace_id": acme["id"]}).json()
    assert switched["workspace"]["id"] == acme["id"]
    shared = a.send("POST", "/datasets", json={"name": "handbook", "permission": "team"}).json()
    private = a.send("POST", "/datasets", json={"name": "ann-notes"}).json()
    assert private["permission"] == "me"
    team_bot = a.send("POST", "/chats", json={"name": "helpdesk", "dataset_ids": [shared["id"]],
                                              "permission": "team"})
    assert team_bot.status_code == 201, team_bot.text
    own_bot = a.send("POST", "/chats", json={"name": "ann-bot", "dataset_ids": [private["id"]]}).json()
    invite = a.send("POST", "/invitations", json={"role": "member", "email": "bob@example.org"})
    assert invite.status_code == 201, invite.text
    token = invite.json()["token"]
    seen += [r.text for r in (refused, team_bot, invite)]

    # B signs up on their own, then accepts the invitation and acts in Acme
    b.signed_in(b.http.post("/auth/signup", json={"email": "bob@example.org", "password": PASSWORD_B}))
    joined = b.send("POST", "/invitations/accept", json={"token": token})
    assert joined.status_code == 200 and joined.json()["role"] == "member", joined.text
    again = b.send("POST", "/invitations/accept", json={"token": token})
    assert again.status_code == 409 and "accepted" in again.json()["message"]
    b.send("POST", "/auth/workspace", json={"workspace_id": acme["id"]})
    new_key = b.send("POST", "/keys", json={"name": "bob's laptop"})
    assert new_key.status_code == 201, new_key.text
    bob = _key(live, new_key.json()["key"])
    seen.append(joined.text)

    # B sees only what is shared
    names = [d["name"] for d in bob.get("/datasets").json()["datasets"]]
    assert names == ["handbook"]
    assert bob.get(f"/datasets/{private['id']}").status_code == 404
    assert [c["name"] for c in bob.get("/chats").json()["assistants"]] == ["helpdesk"]
    assert bob.get(f"/chats/{own_bot['id']}").status_code == 404
    found = bob.post("/retrieval", json={"question": "anything", "dataset_ids": [private["id"]]})
    assert found.status_code == 404
    members = bob.get("/members").json()
    assert {m["email"]: m["role"] for m in members["members"]} == {"ann@example.org": "owner",
                                                                   "bob@example.org": "member"}
    # a member cannot delete A's knowledge base; after promotion B can
    denied = bob.delete(f"/datasets/{shared['id']}")
    assert denied.status_code == 403 and "handbook" in denied.json()["message"]
    bob_id = next(m["user_id"] for m in members["members"] if m["email"] == "bob@example.org")
    assert bob.patch(f"/members/{bob_id}", json={"role": "admin"}).status_code == 403
    promoted = a.send("PATCH", f"/members/{bob_id}", json={"role": "admin"})
    assert promoted.status_code == 200 and promoted.json()["role"] == "admin"
    assert bob.delete(f"/datasets/{shared['id']}").status_code in (200, 204)
    # an admin still does not see A's private knowledge base, nor may they act on the owner
    assert bob.get(f"/datasets/{private['id']}").status_code == 404
    ann_id = me["user"]["id"]
    assert bob.delete(f"/members/{ann_id}").status_code == 403

    # A revokes B's key: refused at once
    keys = a.get("/keys").json()["keys"]
    bobs = next(k for k in keys if k["name"] == "bob's laptop")
    assert a.send("DELETE", f"/keys/{bobs['id']}").status_code == 200
    gone = bob.get("/datasets")
    assert gone.status_code == 401 and "revoked" in gone.json()["message"]

    events = a.get("/audit", params={"limit": 100}).json()["events"]
    actions = {e["action"] for e in events}
    assert {"workspace.created", "invitation.created", "member.added", "member.role_changed", "key.created",
            "key.revoked", "kb.deleted"} <= actions
    assert all(e["origin"] == "127.0.0.1" for e in events)
    logged = [r.getMessage() for r in caplog.records]
    for text in seen + [json.dumps(events)] + logged:
        assert PASSWORD_A not in text and PASSWORD_B not in text
    for text in [json.dumps(events)] + logged:  # the invitation's token is in its creation's response only
        assert token not in text


def test_the_session_cookie_is_http_only_same_site_and_sign_out_ends_it(live: Live) -> None:
    p = Person(live)
    res = p.http.post("/auth/signup", json={"email": "carl@example.org", "password": "carl's password"})
    p.signed_in(res)
    cookies = res.headers.get_list("set-cookie")
    session = next(c for c in cookies if c.startswith("ragloom_session="))
    assert "HttpOnly" in session and "SameSite=lax" in session and "Path=/" in session
    csrf = next(c for c in cookies if c.startswith("ragloom_csrf="))
    assert "HttpOnly" not in csrf
    with live.ctx.db.session() as s:  # only the token's hash is kept
        token = session.split(";")[0].split("=", 1)[1]
        assert all(token not in r.token_hash for r in s.query(LoginSession))
    assert p.get("/auth/me").json()["user"]["email"] == "carl@example.org"
    assert p.http.post("/auth/logout").status_code == 403  # the CSRF token is needed to sign out, too
    assert p.send("POST", "/auth/logout").status_code == 204
    after = httpx.get(live.url + "/api/v1/auth/me", cookies={"ragloom_session": token})
    assert after.status_code == 401 and "sign in" in after.json()["message"]


def test_failed_sign_ins_are_throttled_and_say_nothing_about_the_account(live: Live) -> None:
    p = Person(live)
    p.signed_in(p.http.post("/auth/signup", json={"email": "dana@example.org", "password": "dana's password"}))
    unknown = p.http.post("/auth/login", json={"email": "nobody@example.org", "password": "whatever1"})
    wrong = p.http.post("/auth/login", json={"email": "dana@example.org", "password": "not it at all"})
    assert unknown.status_code == wrong.status_code == 401
    assert unknown.json()["message"] == wrong.json()["message"] == "wrong e-mail address or password"
    for _ in range(2):  # login_attempts=3 in this server's settings
        assert p.http.post("/auth/login", json={"email": "dana@example.org", "password": "nope nope"}
                           ).status_code == 401
    locked = p.http.post("/auth/login", json={"email": "dana@example.org", "password": "dana's password"})
    assert locked.status_code == 429 and int(locked.headers["retry-after"]) > 0
    assert "too many failed sign-ins" in locked.json()["message"]
    admin = live.client(live.admin_key)  # type: ignore[attr-defined]
    failed = admin.get("/audit", params={"scope": "server", "action": "auth.failed"}).json()["events"]
    mine = [e for e in failed if e["target"] == "email:dana@example.org"]
    assert len(mine) == 3 and {e["detail"] for e in mine} == {"wrong password"}
    assert any(e["target"] == "email:nobody@example.org" and e["detail"] == "unknown e-mail address" for e in failed)
    assert "dana's password" not in json.dumps(failed) and "nope nope" not in json.dumps(failed)
    # failed sign-ins belong to no workspace; only a server administrator reads them
    token = p.send("POST", "/keys", json={}).json()["key"]
    assert live.client(token).get("/audit", params={"scope": "server"}).status_code == 403


def test_password_change_ends_the_other_sessions_and_an_admin_resets_from_the_cli(live: Live) -> None:
    one, two = Person(live), Person(live)
    one.signed_in(one.http.post("/auth/signup", json={"email": "eve@example.org", "password": "eve's first"}))
    two.signed_in(two.http.post("/auth/login", json={"email": "eve@example.org", "password": "eve's first"}))
    wrong = one.send("POST", "/auth/password", json={"current_password": "guess", "new_password": "eve's second"})
    assert wrong.status_code == 403 and "current_password" in wrong.json()["message"]
    short = one.send("POST", "/auth/password", json={"current_password": "eve's first", "new_password": "short"})
    assert short.status_code == 400 and "at least 8" in short.json()["message"]
    ok = one.send("POST", "/auth/password", json={"current_password": "eve's first", "new_password": "eve's second"})
    assert ok.status_code == 204
    assert one.get("/auth/me").status_code == 200 and two.get("/auth/me").status_code == 401
    assert one.http.post("/auth/login", json={"email": "eve@example.org", "password": "eve's first"}
                         ).status_code == 401
    reset = json.loads(ragloom(live.ctx.settings.home, "--json", "users", "password", "eve@example.org").stdout)
    assert one.get("/auth/me").status_code == 401  # a reset ends every session
    again = Person(live)
    again.signed_in(again.http.post("/auth/login", json={"email": "eve@example.org", "password": reset["password"]}))


def test_the_first_admin_signs_in_and_closes_sign_up_which_invitations_still_pass(live: Live) -> None:
    admin = Person(live)
    admin.signed_in(admin.http.post("/auth/login", json={"email": "admin@localhost",
                                                         "password": live.admin_password}))  # type: ignore[attr-defined]
    assert admin.get("/auth/me").json()["user"]["is_admin"] is True
    member = Person(live)
    member.signed_in(member.http.post("/auth/signup", json={"email": "finn@example.org", "password": "finn's pw!"}))
    assert member.send("PUT", "/admin/signup", json={"open": False}).status_code == 403
    assert admin.send("PUT", "/admin/signup", json={"open": False}).json() == {"open": False}
    try:
        closed = httpx.post(live.url + "/api/v1/auth/signup", json={"email": "gus@example.org",
                                                                     "password": "gus's password"})
        assert closed.status_code == 403 and "closed" in closed.json()["message"]
        token = admin.send("POST", "/invitations", json={"role": "member"}).json()["token"]
        gus = Person(live)
        body = gus.signed_in(gus.http.post("/auth/signup", json={"email": "gus@example.org",
                                                                 "password": "gus's password", "invitation": token}))
        assert body["workspace"]["id"] == admin.get("/auth/me").json()["workspace"]["id"]
        assert body["workspace"]["role"] == "member"
    finally:
        ragloom(live.ctx.settings.home, "users", "signup", "open")
    assert httpx.get(live.url + "/api/v1/admin/signup",
                     headers={"Authorization": f"Bearer {live.admin_key}"}).json() == {"open": True}  # type: ignore[attr-defined]


def test_invitations_are_one_time_expiring_and_for_their_address(live: Live) -> None:
    owner = Person(live)
    owner.signed_in(owner.http.post("/auth/signup", json={"email": "hana@example.org", "password": "hana's pw!"}))
    other = Person(live)
    other.signed_in(other.http.post("/auth/signup", json={"email": "ivan@example.org", "password": "ivan's pw!"}))
    for_jo = owner.send("POST", "/invitations", json={"email": "jo@example.org"}).json()
    wrong = other.send("POST", "/invitations/accept", json={"token": for_jo["token"]})
    assert wrong.status_code == 403 and "another e-mail" in wrong.json()["message"]
    revoked = owner.send("POST", "/invitations", json={}).json()
    assert owner.send("DELETE", f"/invitations/{revoked['id']}").json()["state"] == "revoked"
    res = other.send("POST", "/invitations/accept", json={"token": revoked["token"]})
    assert res.status_code == 409 and "revoked" in res.json()["message"]
    unknown = other.send("POST", "/invitations/accept", json={"token": "ragloom-invite-made-up"})
    assert unknown.status_code == 404
    admin_invite = owner.send("POST", "/invitations", json={"role": "owner"})
    assert admin_invite.status_code == 400
    listed = owner.get("/invitations").json()
    assert {i["state"] for i in listed["invitations"]} == {"pending", "revoked"}
    assert all("token" not in i for i in listed["invitations"])
    # expiry: an invitation past its time is refused
    from datetime import timedelta

    from ragloom.db.models import Invitation, utcnow

    late = owner.send("POST", "/invitations", json={}).json()
    with live.ctx.db.session() as s:
        s.get(Invitation, late["id"]).expires_at = utcnow() - timedelta(seconds=1)  # type: ignore[union-attr]
    res = other.send("POST", "/invitations/accept", json={"token": late["token"]})
    assert res.status_code == 409 and "expired" in res.json()["message"]


def test_leaving_transferring_and_removing(live: Live) -> None:
    owner = Person(live)
    me = owner.signed_in(owner.http.post("/auth/signup", json={"email": "kai@example.org", "password": "kai's pw!!"}))
    space = me["workspace"]["id"]
    joiner = Person(live)
    joiner.signed_in(joiner.http.post("/auth/signup", json={"email": "lea@example.org", "password": "lea's pw!!"}))
    token = owner.send("POST", "/invitations", json={"role": "admin"}).json()["token"]
    joiner.send("POST", "/invitations/accept", json={"token": token})
    lea_id = joiner.get("/auth/me").json()["user"]["id"]
    key = joiner.send("POST", "/keys", json={"name": "lea in kai's", "workspace_id": space}).json()["key"]
    assert _key(live, key).get("/members").status_code == 200
    cant = owner.send("POST", f"/workspaces/{space}/leave")
    assert cant.status_code == 409 and "transfer" in cant.json()["message"]
    assert owner.send("POST", f"/workspaces/{space}/transfer", json={"user_id": lea_id}).status_code == 204
    roles = {m["email"]: m["role"] for m in _key(live, key).get("/members").json()["members"]}
    assert roles == {"kai@example.org": "admin", "lea@example.org": "owner"}
    assert owner.send("POST", f"/workspaces/{space}/leave").status_code == 204
    assert owner.send("POST", "/auth/workspace", json={"workspace_id": space}).status_code == 404
    renamed = joiner.send("PATCH", f"/workspaces/{space}", json={"name": "Lea's now"})
    assert renamed.json()["name"] == "Lea's now"
    # a key of another workspace cannot mint keys where its user is not
    assert _key(live, key).post("/keys", json={"workspace_id": "nope"}).status_code == 404


def test_users_from_the_command_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    init = json.loads(ragloom(home, "--json", "init").stdout)
    assert init["admin_email"] == "admin@localhost" and len(init["admin_password"]) >= 12
    listed = json.loads(ragloom(home, "--json", "users", "list").stdout)
    assert listed[0]["email"] == "admin@localhost" and listed[0]["is_admin"] and listed[0]["has_password"]
    assert init["admin_password"] not in json.dumps(listed)
    bad = ragloom(home, "users", "signup", "maybe", check=False)
    assert bad.returncode == 2 and "'open' or 'closed'" in bad.stderr
    reset = json.loads(ragloom(home, "--json", "users", "password", "admin@localhost").stdout)
    assert reset["password"] and reset["password"] != init["admin_password"]
    ctx = Context(Settings(home=home, _env_file=None))
    try:
        with ctx.db.session() as s:
            admin = s.query(User).filter_by(email="admin@localhost").one()
            assert passwords.verify(admin.password_hash, reset["password"])
            assert not passwords.verify(admin.password_hash, init["admin_password"])
    finally:
        ctx.close()


def test_private_things_of_someone_who_left_reach_the_owner_and_sharing_can_change(live: Live) -> None:
    owner = Person(live)
    owner.signed_in(owner.http.post("/auth/signup", json={"email": "mia@example.org", "password": "mia's pw!!"}))
    member = Person(live)
    member.signed_in(member.http.post("/auth/signup", json={"email": "ned@example.org", "password": "ned's pw!!"}))
    token = owner.send("POST", "/invitations", json={}).json()["token"]
    space = member.send("POST", "/invitations/accept", json={"token": token}).json()["id"]
    member.send("POST", "/auth/workspace", json={"workspace_id": space})
    kb = member.send("POST", "/datasets", json={"name": "ned-drafts"}).json()
    bot = member.send("POST", "/chats", json={"name": "ned-bot", "dataset_ids": [kb["id"]]}).json()
    assert bot["permission"] == "me"
    assert owner.get(f"/datasets/{kb['id']}").status_code == 404
    assert owner.get(f"/chats/{bot['id']}").status_code == 404
    shared = member.send("PATCH", f"/chats/{bot['id']}", json={"permission": "team"})
    assert shared.status_code == 200 and shared.json()["permission"] == "team"
    assert owner.get(f"/chats/{bot['id']}").status_code == 200
    ned = next(m["user_id"] for m in owner.get("/members").json()["members"] if m["email"] == "ned@example.org")
    assert owner.send("DELETE", f"/members/{ned}").status_code == 204
    assert owner.get(f"/datasets/{kb['id']}").json()["name"] == "ned-drafts"  # its creator left: the owner's now
    back = member.get("/auth/me").json()  # the session's workspace is gone from under it: back to its own
    assert back["workspace"]["role"] == "owner" and back["workspace"]["id"] != space
    assert member.get("/datasets").json()["total"] == 0
    assert member.send("POST", "/auth/workspace", json={"workspace_id": space}).status_code == 404


def test_refusals_never_repeat_a_password(live: Live) -> None:
    secret = "hunter2-" * 200
    for body in ({"email": "x@example.org", "password": secret},
                 {"email": "x@example.org", "password": "hunter2-hunter2", "extra": "hunter2-hunter2"},
                 {"email": "not-an-address", "password": "hunter2-hunter2"}):
        for path in ("/auth/login", "/auth/signup"):
            res = httpx.post(live.url + "/api/v1" + path, json=body)
            assert 400 <= res.status_code < 500 and "hunter2" not in res.text, (path, res.text)
    broken = httpx.post(live.url + "/api/v1/auth/login", content=b'{"email": "x@example.org", "password": "hunter2-',
                        headers={"content-type": "application/json"})
    assert broken.status_code in (400, 422) and "hunter2" not in broken.text


def test_passwords_are_hashed_with_rfc_9106s_low_memory_argon2id() -> None:
    """The suite hashes at argon2's lowest cost (tests/conftest.py); ragloom itself, in a fresh process,
    uses RFC 9106's low-memory profile and hashes as argon2id."""
    probe = ("from argon2.profiles import RFC_9106_LOW_MEMORY as P; from ragloom.service.accounts import passwords; "
             "h = passwords._hasher; print((h.time_cost, h.memory_cost, h.parallelism, h.hash_len, h.type) == "
             "(P.time_cost, P.memory_cost, P.parallelism, P.hash_len, P.type), passwords.hash_password('correct horse')"
             "[:9])")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.split() == ["True", "$argon2id"]
