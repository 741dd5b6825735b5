"""An API key acts only in the workspace it was made in, on every route of /openapi.json (issue 24).

One person owns two workspaces on a live server: P ("puma") and Q ("quokka"), each with one of every
resource a route names (tests/test_cross_workspace.py's ``_populate``). The probe that found the leak
renamed, transferred and left Q with P's key through ``/workspaces/{id}``; here every route with an id
in its path, body or query is called with P's key and Q's ids (or Q's names where routes take names)
— the person is a member, even the owner, of Q, so only the key's workspace can refuse it: 403 or
404, nothing of Q in the answer, and afterwards nothing of Q or P changed. The routes without ids show
nothing of Q to P's key, and a key creates no workspace and accepts no invitation.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from ragloom.config import Settings
from tests.fakes.openai_server import FakeOpenAIServer
from tests.live import live_server
from tests.test_cross_workspace import (
    API,
    NO_IDS,
    Workspace,
    World,
    _intact,
    _leaks,
    _ok,
    _populate,
    _shown,
    build,
    plan,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("key-in-its-workspace")
    (tmp / "shared").mkdir()
    with FakeOpenAIServer(default_reply="The pump needs grease.") as llm:
        settings = Settings(home=tmp / "home", workers=0, chat_base_url=llm.base_url, chat_model="fake-chat",
                            chat_api_key="sk-test", rate_limit_per_minute=0, _env_file=None,
                            source_roots=[tmp / "shared"],  # the workspaces' folder sources
                            outbound_allow=["127.0.0.1/32"])  # the workspaces' chat providers are the fake
        with live_server(settings, workers=0) as live, httpx.Client(base_url=live.url, timeout=120) as client:
            p, q = Workspace("puma"), Workspace("quokka")
            _populate(client, live.ctx, p, tmp, llm.base_url)
            _populate(client, live.ctx, q, tmp, llm.base_url, owner_id=p.user_id)  # the same person
            q.secrets.discard(q.user_id)  # the caller's own id: P's answers may show it
            yield World(client, live.ctx, client.get("/openapi.json").json(), p, q)  # type: ignore[arg-type]


def _key(ws: Workspace) -> dict[str, str]:
    return {"Authorization": f"Bearer {ws.key}"}


def test_the_person_owns_both_workspaces_and_each_key_reads_its_own(world: World) -> None:
    """The control: Q's ids are right (Q's key reads every one of them) and the person is Q's owner."""
    routes, problems = plan(world.spec)
    assert not problems, "\n".join(problems)
    failures = []
    for route in routes:
        if route.reads and (route.ids_in_path or route.fields):
            call = build(world.spec, route, world.b, dict.fromkeys(route.fields, world.b), "Q's own ids")
            res = call.send(world.client, _key(world.b))
            if not 200 <= res.status_code < 300:
                failures.append(f"{call}: {res.status_code} {_shown(res)}")
    assert not failures, "\n".join(failures)
    assert world.a.user_id == world.b.user_id


@pytest.mark.parametrize("by", ["ids", "names"])
def test_every_route_with_the_other_workspace_s_ids_refuses_the_key(world: World, by: str) -> None:
    routes, problems = plan(world.spec)
    assert not problems, "\n".join(problems)
    failures, walked = [], 0
    # deletes and leaving last: one that wrongly acted would not change another route's answer
    for route in sorted((r for r in routes if r.ids_in_path or r.fields),
                        key=lambda r: r.method == "DELETE" or r.path.endswith("/leave")):
        wholly = build(world.spec, route, world.b, dict.fromkeys(route.fields, world.b), f"Q's {by}",
                       by_name=by == "names")
        calls = [wholly]
        if route.ids_in_path:  # P's path, Q's id in one field of the body or query at a time
            calls += [build(world.spec, route, world.a, {**dict.fromkeys(route.fields, world.a), f: world.b},
                            f"Q's {f.key} ({by})", by_name=by == "names") for f in route.fields]
        for call in calls:
            res = call.send(world.client, _key(world.a))
            walked += 1
            if res.status_code not in (403, 404):
                failures.append(f"{call}: {res.status_code} {_shown(res)}")
            elif leaks := _leaks(res.text, world.b, call.sent):
                failures.append(f"{call}: the {res.status_code} shows {leaks}: {_shown(res)}")
    assert walked >= 60
    assert not failures, "P's key acted on its person's other workspace:\n" + "\n".join(failures)
    _intact(world, world.b)
    _intact(world, world.a)


def test_the_key_sees_and_joins_no_other_workspace(world: World) -> None:
    p, q, client = world.a, world.b, world.client
    routes, _ = plan(world.spec)
    for route in routes:  # every listing, the account's own page: nothing of Q
        kind = NO_IDS.get((route.method, route.path))
        if kind is not None and route.reads and not (route.ids_in_path or route.fields):
            res = build(world.spec, route, p, {}, kind).send(client, _key(p))
            assert not _leaks(res.text, q, set()), (str(route), _shown(res))
    me = _ok(client.get(f"{API}/auth/me", headers=_key(p)))
    assert [w["id"] for w in me["workspaces"]] == [p.tenant_id] and me["via"] == "key"
    created = client.post(f"{API}/workspaces", headers=_key(p), json={"name": "made by a key"})
    assert created.status_code == 403 and "sign in" in created.json()["message"]
    moved = client.post(f"{API}/auth/workspace", headers=_key(p), json={"workspace_id": q.tenant_id})
    assert moved.status_code == 403, moved.text
    other_key = client.post(f"{API}/keys", headers=_key(p), json={"name": "x", "workspace_id": q.tenant_id})
    assert other_key.status_code == 403, other_key.text
    _intact(world, q)
    _intact(world, p)
    invited = _ok(client.post(f"{API}/invitations", headers=_key(q), json={"email": ""}))
    joined = client.post(f"{API}/invitations/accept", headers=_key(p), json={"token": invited["token"]})
    assert joined.status_code == 403, joined.text
    states = {i["id"]: i["state"] for i in _ok(client.get(f"{API}/invitations", headers=_key(q)))["invitations"]}
    assert states[invited["id"]] == "pending"
