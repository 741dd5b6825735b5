"""RAGFlow's chat assistants, sessions and completions under /ragflow (api/ragflow_chats.py) against the
in-process app: RAGFlow's flat chat fields, paging, bulk deletes, sessions carrying ``chat_id``, answers
whose ``[ID:n]`` index ``reference.chunks``, streamed answers in RAGFlow's events, and RAGFlow's codes (109
``no authorization`` for another workspace's chat, 102, 101). Every chat route is called with another
workspace's ids."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragloom.api.app import create_app
from ragloom.config import Settings
from ragloom.worker import run_one
from tests.ragflow.helpers import err, ok, two_workspaces, upload_and_parse

B = "/ragflow/api/v1"
TEXT = b"ragloom is a document QA platform. It answers questions with citations. It supports RAGFlow clients."


@dataclass
class Setup:
    client: TestClient
    h: dict[str, str]
    other: dict[str, str]
    ds: str
    other_ds: str
    other_chat: str
    other_session: str


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    home = tmp_path_factory.mktemp("ragflow-chats") / "home"
    settings = Settings(home=home, workers=0, worker_poll_seconds=0.05, _env_file=None)
    with TestClient(create_app(settings)) as c:
        ctx = c.app.state.ctx  # type: ignore[attr-defined]
        spaces = two_workspaces(ctx)
        h, o = spaces.headers, spaces.other_headers
        ids = []
        for headers in (h, o):
            ds = ok(c.post(f"{B}/datasets", json={"name": "about"}, headers=headers))["id"]
            upload_and_parse(c, ds, [("about.txt", TEXT)], headers)
            ids.append(ds)
        while run_one(ctx, "test"):
            pass
        other_chat = ok(c.post(f"{B}/chats", json={"name": "theirs", "dataset_ids": [ids[1]]}, headers=o))["id"]
        other_session = ok(c.post(f"{B}/chats/{other_chat}/sessions", json={"name": "s"}, headers=o))["id"]
        yield Setup(c, h, o, ids[0], ids[1], other_chat, other_session)


def test_chat_create_list_update_delete(setup: Setup) -> None:
    c, h = setup.client, setup.h
    sent = {"name": "helper", "icon": "", "dataset_ids": [setup.ds],
            "llm_setting": {"temperature": 0.3}, "prompt_config": {"prologue": "Hello!", "empty_response": "None."},
            "similarity_threshold": 0.1, "top_n": 4}
    chat = ok(c.post(f"{B}/chats", json=sent, headers=h))
    assert len(chat["id"]) == 32 and chat["dataset_ids"] == [setup.ds] and chat["kb_names"] == ["about"]
    assert chat["llm_setting"]["temperature"] == 0.3 and chat["prompt_config"]["prologue"] == "Hello!"
    assert chat["prompt_config"]["empty_response"] == "None." and chat["top_n"] == 4
    assert chat["similarity_threshold"] == 0.1
    for key in ("llm_id", "prompt_config", "vector_similarity_weight", "top_k", "rerank_id", "create_time"):
        assert key in chat, key
    assert ok(c.get(f"{B}/chats/{chat['id']}", headers=h))["name"] == "helper"
    second = ok(c.post(f"{B}/chats", json={"name": "second", "dataset_ids": [setup.ds]}, headers=h))
    listing = ok(c.get(f"{B}/chats", params={"page": 1, "page_size": 30, "orderby": "create_time", "desc": "True"},
                       headers=h))
    assert [x["name"] for x in listing["chats"]] == ["second", "helper"] and listing["total"] == 2
    assert [x["name"] for x in ok(c.get(f"{B}/chats", params={"orderby": "name", "desc": "false"},
                                        headers=h))["chats"]] == ["helper", "second"]
    assert [x["id"] for x in ok(c.get(f"{B}/chats", params={"name": "helper"}, headers=h))["chats"]] == [chat["id"]]
    assert ok(c.get(f"{B}/chats", params={"id": "0" * 32}, headers=h))["chats"] == []
    assert len(ok(c.get(f"{B}/chats", params={"page": 2, "page_size": 1}, headers=h))["chats"]) == 1

    changed = ok(c.patch(f"{B}/chats/{chat['id']}", json={"llm_setting": {"top_p": 0.5},
                                                          "prompt_config": {"quote": False}}, headers=h))
    assert changed["llm_setting"]["top_p"] == 0.5 and changed["llm_setting"]["temperature"] == 0.3  # merged
    assert changed["prompt_config"]["quote"] is False and changed["prompt_config"]["prologue"] == "Hello!"
    assert ok(c.put(f"{B}/chats/{chat['id']}", json={"name": "helper 2"}, headers=h))["name"] == "helper 2"

    assert ok(c.request("DELETE", f"{B}/chats", json={"ids": None, "delete_all": False}, headers=h)) == {}
    partly = c.request("DELETE", f"{B}/chats", json={"ids": [second["id"], "0" * 32]}, headers=h).json()
    assert partly["code"] == 0 and partly["data"]["success_count"] == 1 and "not found" in partly["data"]["errors"][0]
    assert "not found" in err(c.request("DELETE", f"{B}/chats", json={"ids": ["0" * 32]}, headers=h), 102)
    assert ok(c.request("DELETE", f"{B}/chats", json={"delete_all": True}, headers=h)) == {"success_count": 1}
    assert ok(c.get(f"{B}/chats", headers=h))["total"] == 0


def test_chat_errors(setup: Setup) -> None:
    c, h = setup.client, setup.h
    assert "`name` is required" in err(c.post(f"{B}/chats", json={"dataset_ids": [setup.ds]}, headers=h), 102)
    assert "at least one dataset" in err(c.post(f"{B}/chats", json={"name": "x", "dataset_ids": []}, headers=h), 102)
    assert "don't own the dataset" in err(c.post(f"{B}/chats", json={"name": "x", "dataset_ids": [setup.other_ds]},
                                                 headers=h), 102)
    assert "tenant_id" in err(c.post(f"{B}/chats", json={"name": "x", "dataset_ids": [setup.ds], "tenant_id": "t"},
                                     headers=h), 102)
    assert "Field" in err(c.post(f"{B}/chats", json={"name": "x", "dataset_ids": [setup.ds],
                                                     "llm_setting": {"temperature": 9}}, headers=h), 101)
    ok(c.post(f"{B}/chats", json={"name": "dup", "dataset_ids": [setup.ds]}, headers=h))
    assert "Duplicated" in err(c.post(f"{B}/chats", json={"name": "dup", "dataset_ids": [setup.ds]}, headers=h), 102)
    r = c.get(f"{B}/chats/{'0' * 32}", headers=h)
    assert r.json() == {"code": 109, "message": "no authorization", "data": False}
    assert "orderby" in err(c.get(f"{B}/chats", params={"orderby": "size"}, headers=h), 101)
    ok(c.request("DELETE", f"{B}/chats", json={"delete_all": True}, headers=h))


def _events(text: str) -> list[Any]:
    return [json.loads(line[len("data:"):]) for line in text.splitlines() if line.startswith("data:")]


def test_sessions_and_completions(setup: Setup) -> None:
    c, h = setup.client, setup.h
    chat = ok(c.post(f"{B}/chats", json={"name": "asker", "dataset_ids": [setup.ds],
                                         "prompt_config": {"prologue": "Hi!"}}, headers=h))["id"]
    sess = ok(c.post(f"{B}/chats/{chat}/sessions", json={"name": "s1"}, headers=h))
    assert sess["chat_id"] == chat and sess["name"] == "s1"
    assert sess["messages"] == [{"role": "assistant", "content": "Hi!", "id": None}]
    assert "can not be empty" in err(c.post(f"{B}/chats/{chat}/sessions", json={"name": " "}, headers=h), 102)

    data = ok(c.post(f"{B}/chats/{chat}/completions", json={"question": "What is ragloom?", "stream": False,
                                                            "session_id": sess["id"]}, headers=h))
    assert data["answer"] and data["session_id"] == sess["id"] and data["chat_id"] == chat and data["id"]
    ref = data["reference"]
    assert ref["chunks"] and ref["total"] == len(ref["chunks"])
    assert ref["chunks"][0]["document_name"] == "about.txt" and ref["chunks"][0]["dataset_id"] == setup.ds
    assert ref["doc_aggs"][0]["doc_name"] == "about.txt"
    assert all(0 < x["similarity"] <= 1 and x["vector_similarity"] is not None for x in ref["chunks"])
    assert all(int(n) < len(ref["chunks"]) for n in re.findall(r"\[ID:(\d+)\]", data["answer"]))

    r = c.post(f"{B}/chats/{chat}/completions", json={"question": "Which clients?", "stream": True,
                                                      "session_id": sess["id"]}, headers=h)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    events = _events(r.text)
    assert events[-1] == {"code": 0, "message": "", "data": True}
    text = "".join(e["data"]["answer"] for e in events[:-1])
    final = events[-2]["data"]
    assert text and final["final"] is True and final["answer"] == "" and final["reference"]["chunks"]
    assert all(e["data"]["final"] is False for e in events[:-2]) and len(events) >= 3
    assert all(int(n) < len(final["reference"]["chunks"]) for n in re.findall(r"\[ID:(\d+)\]", text))
    assert final["session_id"] == sess["id"] and final["id"]

    by_body = ok(c.post(f"{B}/chat/completions", json={"chat_id": chat, "messages": [
        {"role": "user", "content": "What is ragloom?"}], "stream": False}, headers=h))
    assert by_body["session_id"] != sess["id"]  # no session_id: a new session

    listed = ok(c.get(f"{B}/chats/{chat}/sessions", params={"page": 1, "page_size": 30, "orderby": "create_time",
                                                            "desc": "True"}, headers=h))
    assert [x["id"] for x in listed][-1] == sess["id"] and len(listed) == 2
    mine = next(x for x in listed if x["id"] == sess["id"])
    assert [m["role"] for m in mine["messages"]] == ["assistant", "user", "assistant", "user", "assistant"]
    assert ok(c.get(f"{B}/chats/{chat}/sessions/{sess['id']}", headers=h))["id"] == sess["id"]

    # a message's feedback and deletion: the question's id stands for its answer too, as in RAGFlow
    url = f"{B}/chats/{chat}/sessions/{sess['id']}/messages"
    first_q, first_a = mine["messages"][1]["id"], mine["messages"][2]["id"]
    rated = ok(c.put(f"{url}/{first_q}/feedback", json={"thumbup": False, "feedback": "too short"}, headers=h))
    assert rated["id"] == sess["id"] and len(rated["messages"]) == 5
    own = c.get(f"/api/v1/chats/{chat}/sessions/{sess['id']}/messages", headers=h).json()["messages"]
    assert [m["feedback"] for m in own if m["id"] == first_a] == [{"rating": "down", "comment": "too short"}]
    ok(c.put(f"{url}/{first_a}/feedback", json={"thumbup": True, "feedback": "ignored"}, headers=h))
    own = c.get(f"/api/v1/chats/{chat}/sessions/{sess['id']}/messages", headers=h).json()["messages"]
    assert [m["feedback"] for m in own if m["id"] == first_a] == [{"rating": "up", "comment": ""}]
    assert "must be a boolean" in err(c.put(f"{url}/{first_a}/feedback", json={"thumbup": "yes"}, headers=h), 102)
    assert "Session not found" in err(c.put(f"{B}/chats/{chat}/sessions/{'0' * 32}/messages/{first_a}/feedback",
                                            json={"thumbup": True}, headers=h), 102)
    assert len(ok(c.request("DELETE", f"{url}/{'0' * 32}", headers=h))["messages"]) == 5  # not one of its ids
    left = ok(c.request("DELETE", f"{url}/{first_q}", headers=h))["messages"]
    assert [m["role"] for m in left] == ["assistant", "user", "assistant"]
    assert first_q not in [m["id"] for m in left] and first_a not in [m["id"] for m in left]
    assert "Session not found" in err(c.request("DELETE", f"{B}/chats/{chat}/sessions/{'0' * 32}/messages/x",
                                                headers=h), 102)
    renamed = ok(c.patch(f"{B}/chats/{chat}/sessions/{sess['id']}", json={"name": "renamed"}, headers=h))
    assert renamed["name"] == "renamed"
    assert "cannot be changed" in err(c.patch(f"{B}/chats/{chat}/sessions/{sess['id']}", json={"messages": []},
                                              headers=h), 102)

    assert "Session not found" in err(c.post(f"{B}/chats/{chat}/completions", json={
        "question": "x", "stream": False, "session_id": "0" * 32}, headers=h), 102)
    assert "missing" in err(c.post(f"{B}/chats/{chat}/completions", json={"stream": False}, headers=h), 101)
    assert ok(c.request("DELETE", f"{B}/chats/{chat}/sessions", json={"ids": None}, headers=h)) == {}
    assert "doesn't own the session" in err(c.request("DELETE", f"{B}/chats/{chat}/sessions",
                                                      json={"ids": ["0" * 32]}, headers=h), 102)
    assert ok(c.request("DELETE", f"{B}/chats/{chat}/sessions", json={"ids": [sess["id"]]}, headers=h)) is True
    assert ok(c.request("DELETE", f"{B}/chats/{chat}/sessions", json={"delete_all": True}, headers=h)) is True
    assert ok(c.get(f"{B}/chats/{chat}/sessions", headers=h)) == []
    ok(c.request("DELETE", f"{B}/chats/{chat}", headers=h))


def test_the_per_chat_openai_endpoint(setup: Setup) -> None:
    c, h = setup.client, setup.h
    chat = ok(c.post(f"{B}/chats", json={"name": "openai", "dataset_ids": [setup.ds]}, headers=h))["id"]
    body = {"model": "model", "messages": [{"role": "user", "content": "What is ragloom?"}],
            "extra_body": {"reference": True}}
    for route in ("openai", "chats_openai"):  # the route and RAGFlow's deprecated alias
        r = c.post(f"{B}/{route}/{chat}/chat/completions", json=body, headers=h)
        assert r.status_code == 200, r.text
        out = r.json()
        assert out["object"] == "chat.completion" and "code" not in out and out["model"] == "model"
        message = out["choices"][0]["message"]
        assert message["role"] == "assistant" and message["content"]
        assert message["reference"] and message["reference"][0]["document_name"] == "about.txt"
        assert all(int(n) < len(message["reference"]) for n in re.findall(r"\[ID:(\d+)\]", message["content"]))
    plain = c.post(f"{B}/openai/{chat}/chat/completions", json={**body, "extra_body": {}}, headers=h).json()
    assert "reference" not in plain["choices"][0]["message"]
    streamed = c.post(f"{B}/openai/{chat}/chat/completions", json={**body, "stream": True}, headers=h)
    assert streamed.headers["content-type"].startswith("text/event-stream") and "[DONE]" in streamed.text
    url = f"{B}/openai/{chat}/chat/completions"
    assert "missing: model; messages;" in err(c.post(url, json={}, headers=h), 101)
    assert "provide messages" in err(c.post(url, json={"model": "model", "messages": []}, headers=h), 102)
    assert "not from user" in err(c.post(url, json={"model": "model", "messages": [
        {"role": "assistant", "content": "hi"}]}, headers=h), 102)
    assert "don't own the chat" in err(c.post(f"{B}/openai/{setup.other_chat}/chat/completions", json=body,
                                              headers=h), 102)
    ok(c.request("DELETE", f"{B}/chats/{chat}", headers=h))


def test_markers_cut_between_deltas_are_renumbered_whole() -> None:
    from ragloom.api.ragflow_chats import Renumber

    r = Renumber()
    parts = ["Pumps [ID:", "7] and fans [I", "D:3", "]. Again [ID:7]", " [x] ["]
    out = "".join(r.feed(p) for p in parts) + r.flush()
    assert out == "Pumps [ID:0] and fans [ID:1]. Again [ID:0] [x] ["


def test_another_workspaces_chats_and_sessions(setup: Setup) -> None:
    c, h = setup.client, setup.h
    chat, sess = setup.other_chat, setup.other_session
    mine = ok(c.post(f"{B}/chats", json={"name": "mine", "dataset_ids": [setup.ds]}, headers=h))["id"]
    calls: list[tuple[str, str, dict[str, Any], int]] = [
        ("GET", f"/chats/{chat}", {}, 109),
        ("PATCH", f"/chats/{chat}", {"json": {"name": "mine now"}}, 109),
        ("PUT", f"/chats/{chat}", {"json": {"name": "mine now"}}, 109),
        ("DELETE", f"/chats/{chat}", {}, 102),
        ("DELETE", "/chats", {"json": {"ids": [chat]}}, 102),
        ("PATCH", f"/chats/{mine}", {"json": {"dataset_ids": [setup.other_ds]}}, 102),
        ("POST", f"/chats/{chat}/sessions", {"json": {"name": "x"}}, 109),
        ("GET", f"/chats/{chat}/sessions", {}, 109),
        ("GET", f"/chats/{chat}/sessions/{sess}", {}, 109),
        ("GET", f"/chats/{mine}/sessions/{sess}", {}, 102),
        ("PATCH", f"/chats/{chat}/sessions/{sess}", {"json": {"name": "x"}}, 109),
        ("PUT", f"/chats/{mine}/sessions/{sess}", {"json": {"name": "x"}}, 102),
        ("DELETE", f"/chats/{chat}/sessions", {"json": {"ids": [sess]}}, 109),
        ("DELETE", f"/chats/{mine}/sessions", {"json": {"ids": [sess]}}, 102),
        ("DELETE", f"/chats/{chat}/sessions/{sess}/messages/x", {}, 109),
        ("DELETE", f"/chats/{mine}/sessions/{sess}/messages/x", {}, 102),
        ("PUT", f"/chats/{chat}/sessions/{sess}/messages/x/feedback", {"json": {"thumbup": True}}, 109),
        ("PUT", f"/chats/{mine}/sessions/{sess}/messages/x/feedback", {"json": {"thumbup": True}}, 102),
        ("POST", f"/chats/{chat}/completions", {"json": {"question": "x", "stream": False}}, 109),
        ("POST", f"/chats/{mine}/completions", {"json": {"question": "x", "stream": False, "session_id": sess}}, 102),
        ("POST", "/chat/completions", {"json": {"chat_id": chat, "question": "x", "stream": False}}, 109),
        ("POST", f"/openai/{chat}/chat/completions", {"json": {"model": "m", "messages": [
            {"role": "user", "content": "x"}]}}, 102),
        ("POST", f"/chats_openai/{chat}/chat/completions", {"json": {"model": "m", "messages": [
            {"role": "user", "content": "x"}]}}, 102),
    ]
    for method, path, kwargs, code in calls:
        r = c.request(method, B + path, headers=h, **kwargs)
        assert r.status_code == 200 and r.json()["code"] == code, (method, path, r.text)
    # every chat route that takes an id was tried
    from tests.ragflow.test_compat_api import CHAT_ROUTES, compat_routes

    templates = {t for t in compat_routes(c) if t[1].startswith(CHAT_ROUTES)}
    assert len(templates) >= 10

    def covers(method: str, template: str) -> bool:
        pattern = "^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$"
        return any(m == method and re.match(pattern, "/api/v1" + p) for m, p, _, _ in calls)

    assert sorted(t for t in templates if not covers(*t)) == []
    assert ok(c.get(f"{B}/chats", params={"id": chat}, headers=h))["chats"] == []
    assert [x["id"] for x in ok(c.get(f"{B}/chats", headers=h))["chats"]] == [mine]
    theirs = ok(c.get(f"{B}/chats/{chat}", headers=setup.other))  # nothing of theirs changed
    assert theirs["name"] == "theirs" and theirs["dataset_ids"] == [setup.other_ds]
    assert [x["id"] for x in ok(c.get(f"{B}/chats/{chat}/sessions", headers=setup.other))] == [sess]
    ok(c.request("DELETE", f"{B}/chats/{mine}", headers=h))
