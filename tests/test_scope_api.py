"""An after-sales assistant with an applicability scope (issue 27) through the API, on real engines
(the embedded search store, the shipped embedding model, extractive answers): it asks for the model
when the question names none, answers from that model's manual only, and names the gap when no
manual carries the model — never answering from a neighbour's manual."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragloom.api.app import create_app
from ragloom.config import Settings
from ragloom.schemas.chats import ChatReply
from ragloom.service.accounts import identity
from ragloom.worker import run_one

API = "/api/v1"
MANUALS = {
    # name: (metadata, text)
    "x100-fw1.txt": ({"model": "X100", "firmware": ">=1.0,<2"},
                     "X100 service manual for firmware 1.x.\n\nTo reset the X100, hold the red button for "
                     "5 seconds until the lamp blinks.\n\nDescale the X100 every 30 days with citric acid."),
    "x100-fw2.txt": ({"model": "X100", "firmware": ">=2.0,<3"},
                     "X100 service manual for firmware 2.x.\n\nTo reset the X100, open Settings and choose "
                     "Factory reset, then confirm with the green key.\n\nDescale the X100 every 45 days."),
    "x200.txt": ({"model": ["X200", "X200S"], "firmware": ">=1.0,<3"},
                 "X200 service manual.\n\nTo reset the X200, unplug it for 10 minutes.\n\n"
                 "Descale the X200 every 60 days with the supplied tablets."),
}


@dataclass
class Env:
    client: TestClient
    key: str
    other_key: str
    kb: str
    docs: dict[str, str]

    def api(self, method: str, path: str, *, key: str | None = None, **kwargs: Any) -> Any:
        return self.client.request(method, API + path, headers={"Authorization": f"Bearer {key or self.key}"},
                                   **kwargs)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    tmp = tmp_path_factory.mktemp("scope")
    settings = Settings(home=tmp / "home", workers=0, rate_limit_per_minute=0, _env_file=None)
    with TestClient(create_app(settings)) as client:
        ctx = client.app.state.ctx  # type: ignore[attr-defined]
        with ctx.db.session() as s:
            boot = identity.bootstrap(s)
            assert boot.new_key is not None
            tenant, user = identity.create_tenant(s, name="other", owner_email="other@example.com")
            other = identity.create_api_key(s, tenant_id=tenant.id, user_id=user.id).key
        state = Env(client, boot.new_key.key, other, "", {})
        kb = state.api("POST", "/datasets", json={"name": "manuals"}).json()
        state.kb = kb["id"]
        for name, (meta, text) in MANUALS.items():
            up = state.api("POST", f"/datasets/{kb['id']}/documents",
                           files=[("file", (name, text.encode(), "text/plain"))])
            assert up.status_code == 201, up.text
            doc = up.json()[0] if isinstance(up.json(), list) else up.json()
            doc_id = doc.get("id") or doc["documents"][0]["id"]
            state.docs[name] = doc_id
            r = state.api("PATCH", f"/datasets/{kb['id']}/documents/{doc_id}/metadata", json={"metadata": meta})
            assert r.status_code == 200, r.text
        while run_one(ctx, "test"):
            pass
        yield state


SCOPE = {"keys": [{"key": "model", "aliases": {"pro": "X200"}},
                  {"key": "firmware", "match": "range", "names": ["fw"]}]}


def _assistant(env: Env, name: str, scope: dict[str, Any] = SCOPE) -> dict[str, Any]:
    r = env.api("POST", "/chats", json={"name": name, "dataset_ids": [env.kb], "scope": scope})
    assert r.status_code == 201, r.text
    return dict(r.json())


def _ask(env: Env, assistant: str, question: str, **fields: Any) -> dict[str, Any]:
    r = env.api("POST", f"/chats/{assistant}/completions", json={"question": question, **fields})
    assert r.status_code == 200, r.text
    body = r.json()
    assert ChatReply.model_validate(body).model_dump(mode="json") == body
    return dict(body)


def test_the_scope_is_kept_shown_and_changed(env: Env) -> None:
    a = _assistant(env, "kept")
    assert a["scope"]["keys"][0] == {"key": "model", "match": "equal", "label": None, "names": [],
                                     "aliases": {"pro": "X200"}}
    assert a["scope"]["keys"][1]["match"] == "range"
    r = env.api("PATCH", f"/chats/{a['id']}", json={"scope": {"keys": [{"key": "model", "match": "in"}]}})
    assert r.status_code == 200 and r.json()["scope"]["keys"] == [
        {"key": "model", "match": "in", "label": None, "names": [], "aliases": {}}]
    r = env.api("PATCH", f"/chats/{a['id']}", json={"scope": {"keys": [{"key": "model", "match": "near"}]}})
    assert r.status_code == 422 and "match" in r.text
    plain = env.api("POST", "/chats", json={"name": "plain", "dataset_ids": [env.kb]}).json()
    assert plain["scope"] == {"keys": []}


def test_a_question_without_the_model_is_asked_about_and_the_answer_fills_it(env: Env) -> None:
    a = _assistant(env, "after-sales")
    first = _ask(env, a["id"], "How do I reset it?", explain=True)
    assert "Which model is it: X100, X200 or X200S?" in first["answer"]
    assert first["references"] == [] and first["insufficient"] is True
    scope = first["explain"]["scope"]
    assert scope["status"] == "clarify" and scope["missing"] == ["model", "firmware"]
    assert "retrieval" not in first["explain"]  # nothing was retrieved
    # the next turn names the model: the firmware is still missing, asked with the X100's ranges only
    second = _ask(env, a["id"], "an X-100", session_id=first["session_id"])
    assert second["explain"]["scope"]["missing"] == ["firmware"]
    assert ">=1.0,<2" in second["answer"] and ">=2.0,<3" in second["answer"] and "X200" not in second["answer"]
    third = _ask(env, a["id"], "firmware 2.3", session_id=first["session_id"], explain=True)
    decided = third["explain"]["scope"]
    assert decided["status"] == "scoped" and decided["values"] == {"model": "X100", "firmware": "2.3"}
    assert decided["sources"] == {"model": "conversation", "firmware": "question"} and decided["documents"] == 1
    assert third["explain"]["standalone_question"] == "How do I reset it?"  # the values only scope it
    assert third["references"], third
    assert {r["doc_id"] for r in third["references"]} == {env.docs["x100-fw2.txt"]}
    assert "Factory reset" in third["answer"]


@pytest.mark.parametrize(("question", "manual"), [
    ("How do I reset my X200 on firmware 2.0?", "x200.txt"),
    ("My Pro (fw 1.4): what do I descale it with?", "x200.txt"),
    ("How do I reset the X100 with firmware 1.2?", "x100-fw1.txt"),
])
def test_a_known_model_answers_from_its_manual_only(env: Env, question: str, manual: str) -> None:
    a = _assistant(env, f"known {manual} {len(question)}")
    reply = _ask(env, a["id"], question)
    assert reply["explain"]["scope"]["status"] == "scoped"
    assert reply["references"], reply
    assert {r["doc_id"] for r in reply["references"]} == {env.docs[manual]}


@pytest.mark.parametrize(("question", "named"), [
    ("How do I reset my X300 on firmware 2.0?", "model X300"),
    ("How do I reset my X100 with firmware 5.1?", "firmware version 5.1"),
])
def test_a_model_without_a_manual_is_a_gap_that_retrieves_nothing(env: Env, question: str, named: str) -> None:
    a = _assistant(env, f"gap {named}")
    reply = _ask(env, a["id"], question, explain=True)
    assert named in reply["answer"] and "no document" in reply["answer"]
    assert reply["references"] == [] and reply["insufficient"] is True
    assert reply["explain"]["scope"]["status"] == "gap" and "retrieval" not in reply["explain"]


def test_streamed_replies_ask_too(env: Env) -> None:
    a = _assistant(env, "streamed")
    with env.client.stream("POST", f"{API}/chats/{a['id']}/completions",
                           headers={"Authorization": f"Bearer {env.key}"},
                           json={"question": "How do I descale it?", "stream": True}) as resp:
        assert resp.status_code == 200
        text = "".join(line for line in resp.iter_lines())
    assert "Which model is it" in text


def test_another_workspace_cannot_reach_the_assistant(env: Env) -> None:
    a = _assistant(env, "isolated")
    r = env.api("POST", f"/chats/{a['id']}/completions", key=env.other_key, json={"question": "X100 fw 1.0 reset"})
    assert r.status_code == 404
    assert env.api("GET", f"/chats/{a['id']}", key=env.other_key).status_code == 404
    r = env.api("PATCH", f"/chats/{a['id']}", key=env.other_key, json={"scope": {"keys": []}})
    assert r.status_code == 404


# --- the retrieval API's scope ----------------------------------------------------------------------

def _retrieve(env: Env, question: str, scope: dict[str, Any] | None, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"question": question, "dataset_ids": ["manuals"], **fields}
    if scope is not None:
        body["scope"] = scope
    r = env.api("POST", "/retrieval", json=body)
    assert r.status_code == 200, r.text
    return dict(r.json())


def test_retrieval_with_given_values_searches_the_matching_documents_only(env: Env) -> None:
    unscoped = _retrieve(env, "How do I reset it?", None)
    assert "scope" not in unscoped and len({c["doc_id"] for c in unscoped["chunks"]}) == 3
    found = _retrieve(env, "How do I reset it?", {"keys": [{"key": "firmware", "match": "range"}],
                                                  "values": {"model": "x-200s", "firmware": "2.9"}})
    assert found["scope"]["status"] == "scoped" and found["scope"]["values"] == {"model": "X200S", "firmware": "2.9"}
    assert found["chunks"] and {c["doc_id"] for c in found["chunks"]} == {env.docs["x200.txt"]}


def test_retrieval_reads_the_keys_from_the_question(env: Env) -> None:
    keys = SCOPE["keys"]
    found = _retrieve(env, "How do I reset the X100 on fw 1.7?", {"keys": keys})
    assert found["scope"]["sources"] == {"model": "question", "firmware": "question"}
    assert {c["doc_id"] for c in found["chunks"]} == {env.docs["x100-fw1.txt"]}
    asked = _retrieve(env, "How do I reset it?", {"keys": keys})
    assert asked["chunks"] == [] and asked["total"] == 0 and asked["scope"]["status"] == "clarify"
    assert "Which model is it: X100, X200 or X200S?" in asked["scope"]["message"]
    gap = _retrieve(env, "How do I reset the X900?", {"keys": keys})
    assert gap["chunks"] == [] and gap["scope"]["status"] == "gap" and gap["scope"]["unknown"] == {"model": "X900"}
    given_gap = _retrieve(env, "How do I reset it?", {"values": {"model": "X900"}})
    assert given_gap["chunks"] == [] and "model X900" in given_gap["scope"]["message"]


@pytest.mark.parametrize(("scope", "status"), [
    ({"values": {"bad key": "x"}}, 422),
    ({"keys": [{"key": "model", "match": "near"}]}, 422),
    ({"values": {"model": " "}}, 422),
    ({"colour": "red"}, 422),
])
def test_a_malformed_scope_is_a_4xx(env: Env, scope: dict[str, Any], status: int) -> None:
    r = env.api("POST", "/retrieval", json={"question": "reset", "dataset_ids": ["manuals"], "scope": scope})
    assert r.status_code == status, r.text


def test_another_workspace_cannot_scope_into_the_datasets(env: Env) -> None:
    r = env.api("POST", "/retrieval", key=env.other_key,
                json={"question": "reset", "dataset_ids": [env.kb], "scope": {"values": {"model": "X100"}}})
    assert r.status_code == 404


# --- the OpenAI-compatible endpoint -----------------------------------------------------------------

def _openai(env: Env, model: str, messages: list[dict[str, str]], *, key: str | None = None) -> Any:
    return env.api("POST", "/openai/v1/chat/completions", key=key, json={"model": model, "messages": messages})


def test_the_openai_compatible_endpoint_asks_answers_in_scope_and_names_gaps(env: Env) -> None:
    a = _assistant(env, "openai support")
    r = _openai(env, a["name"], [{"role": "user", "content": "How do I reset it?"}])
    assert r.status_code == 200, r.text
    asked = r.json()["choices"][0]["message"]
    assert "Which model is it: X100, X200 or X200S?" in asked["content"]
    assert asked["reference"]["references"] == [] and asked["reference"]["explain"]["scope"]["status"] == "clarify"
    # the caller keeps the conversation: its answer to the clarifying question fills the values
    r = _openai(env, a["name"], [{"role": "user", "content": "How do I reset it?"},
                                 {"role": "assistant", "content": asked["content"]},
                                 {"role": "user", "content": "X100, firmware 1.3"}])
    answered = r.json()["choices"][0]["message"]
    assert answered["reference"]["explain"]["scope"]["values"] == {"model": "X100", "firmware": "1.3"}
    assert {x["doc_id"] for x in answered["reference"]["references"]} == {env.docs["x100-fw1.txt"]}
    assert "red button" in answered["content"]
    r = _openai(env, a["name"], [{"role": "user", "content": "How do I reset my X300, fw 2.0?"}])
    gap = r.json()["choices"][0]["message"]
    assert "no document for model X300" in gap["content"] and gap["reference"]["references"] == []
    assert _openai(env, a["name"], [{"role": "user", "content": "reset"}], key=env.other_key).status_code == 404


def test_answers_take_the_scope_too(env: Env) -> None:
    r = env.api("POST", "/answer", json={"question": "How do I reset the X100, fw 2.2?", "dataset_ids": ["manuals"],
                                        "scope": {"keys": SCOPE["keys"]}})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["scope"]["status"] == "scoped" and "Factory reset" in body["answer"]
    assert {x["doc_id"] for x in body["references"]} == {env.docs["x100-fw2.txt"]}
    r = env.api("POST", "/answer", json={"question": "How do I reset it?", "dataset_ids": ["manuals"],
                                        "scope": {"keys": SCOPE["keys"]}})
    asked = r.json()
    assert "Which model is it" in asked["answer"] and asked["references"] == [] and asked["insufficient"] is True
    with env.client.stream("POST", f"{API}/answer", headers={"Authorization": f"Bearer {env.key}"},
                           json={"question": "Reset my X300", "dataset_ids": ["manuals"], "stream": True,
                                 "scope": {"values": {"model": "X300"}}}) as resp:
        assert resp.status_code == 200
        text = "".join(resp.iter_lines())
    assert "no document for model X300" in text and '"status": "gap"' in text.replace('":"', '": "')
    plain = env.api("POST", "/answer", json={"question": "How do I reset the X200?", "dataset_ids": ["manuals"]})
    assert "scope" not in plain.json()


def test_an_extractive_refusal_in_chat_lists_what_the_manuals_cover_nearest(env: Env) -> None:
    a = env.api("POST", "/chats", json={"name": "plain helper", "dataset_ids": [env.kb],
                                        "prompt": {"empty_response": "The manuals do not say."}}).json()
    r = env.api("POST", f"/chats/{a['id']}/completions",
                json={"question": "How many kilograms does the X200 weigh?"})
    assert r.status_code == 200, r.text
    reply = r.json()
    assert reply["insufficient"] and reply["answer"].startswith("The manuals do not say."), reply["answer"]
    assert "Nearest to it, they cover:" in reply["answer"] and "[ID:" in reply["answer"]
    assert reply["references"] and reply["citations"]  # the nearest sentences, cited, as /answer gives them
    ChatReply.model_validate(reply)
