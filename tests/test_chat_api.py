"""Chat assistants, sessions, messages and completions through the API (issue 10), on real engines:
a chat model speaking the OpenAI wire protocol (tests/fakes/openai_server.py), the embedded search
store and the shipped embedding model."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragloom.api.app import create_app
from ragloom.config import Settings
from ragloom.schemas.assistants import AssistantView
from ragloom.schemas.chats import ChatReply
from ragloom.schemas.sessions import MessageList, SessionDetail, SessionList
from ragloom.service.accounts import identity
from ragloom.service.chat import completion as chat_use_case
from ragloom.worker import run_one
from tests.corpus import PAGE2_FACT, PAGE2_QUESTION, write_manual_pdf
from tests.fakes.openai_server import FakeOpenAIServer
from tests.ingest.docgen import make_pdf

API = "/api/v1"
FOLLOW_UP = "And which grease does it use?"
STANDALONE = "Which grease does the Orion pump use?"
FRENCH = "Tous les combien faut-il entretenir la pompe Orion ?"


def _responder(body: dict[str, Any]) -> str:
    """A chat model: answers from the numbered evidence (citing sloppily, as models do), and rewrites a
    follow-up about the grease into a standalone question."""
    messages = body["messages"]
    prompt = "\n".join(m["content"] for m in messages)
    question = messages[-1]["content"]
    if "\nID: " in "\n" + prompt:
        for block in prompt.split("ID: ")[1:]:
            n = block.split("\n", 1)[0].strip()
            if "450 operating hours" in block and ("orion" in question.lower() or "grease" in question.lower()):
                if "grease" in question.lower():
                    return f"The Orion pump uses synthetic grease type K7 [ID:{n}]."
                return f"The Orion pump must be serviced every 450 operating hours (ID: {n})."
            if "two years" in block and "warranty" in question.lower():
                return f"The warranty covers manufacturing defects for two years [ID:{n}]."
        return "I do not know."
    if messages[0]["content"].startswith("Translate the user's question"):
        return FRENCH
    if messages[0]["content"].startswith("Extract the"):
        return "Orion pump, servicing interval"
    if "grease" in prompt.lower() and "Orion" in prompt:
        return STANDALONE
    return question


@dataclass
class Chat:
    client: TestClient
    key: str
    other_key: str  # a key of another tenant
    kb: str
    server: FakeOpenAIServer

    def api(self, method: str, path: str, *, key: str | None = None, **kwargs: Any) -> Any:
        headers = {"Authorization": f"Bearer {key or self.key}"}
        return self.client.request(method, API + path, headers=headers, **kwargs)

    def drain(self) -> None:
        ctx = self.client.app.state.ctx  # type: ignore[attr-defined]
        while run_one(ctx, "test"):
            pass


@pytest.fixture(scope="module")
def chat(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chat]:
    tmp = tmp_path_factory.mktemp("chat")
    with FakeOpenAIServer(responder=_responder) as server:
        settings = Settings(home=tmp / "home", workers=0, chat_base_url=server.base_url, chat_model="fake-chat",
                            chat_api_key="sk-test", rate_limit_per_minute=0, _env_file=None)
        with TestClient(create_app(settings)) as client:
            ctx = client.app.state.ctx  # type: ignore[attr-defined]
            with ctx.db.session() as s:
                boot = identity.bootstrap(s)
                assert boot.new_key is not None
                tenant, user = identity.create_tenant(s, name="other", owner_email="other@example.com")
                other = identity.create_api_key(s, tenant_id=tenant.id, user_id=user.id).key
            state = Chat(client, boot.new_key.key, other, "", server)
            kb = state.api("POST", "/datasets", json={"name": "manuals"}).json()
            pdf = tmp / "orion-manual.pdf"
            write_manual_pdf(pdf)
            up = state.api("POST", f"/datasets/{kb['id']}/documents",
                           files=[("file", ("orion-manual.pdf", pdf.read_bytes(), "application/pdf"))])
            assert up.status_code == 201, up.text
            state.drain()
            state.kb = kb["id"]
            yield state


def _assistant(chat: Chat, name: str, **fields: Any) -> dict[str, Any]:
    r = chat.api("POST", "/chats", json={"name": name, "dataset_ids": [chat.kb], **fields})
    assert r.status_code == 201, r.text
    return AssistantView.model_validate(r.json()).model_dump(mode="json")


def _ask(chat: Chat, assistant: str, question: str, **fields: Any) -> dict[str, Any]:
    r = chat.api("POST", f"/chats/{assistant}/completions", json={"question": question, **fields})
    assert r.status_code == 200, r.text
    body = r.json()
    assert ChatReply.model_validate(body).model_dump(mode="json") == body
    return body


def _ask_stream(chat: Chat, assistant: str, question: str, **fields: Any) -> tuple[list[str], dict[str, Any]]:
    with chat.client.stream("POST", f"{API}/chats/{assistant}/completions",
                            headers={"Authorization": f"Bearer {chat.key}"},
                            json={"question": question, "stream": True, **fields}) as resp:
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("text/event-stream")
        events = [line[6:] for line in resp.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    payloads = [json.loads(e) for e in events[:-1]]
    deltas = [p["delta"] for p in payloads if "delta" in p]
    assert "reply" in payloads[-1], payloads[-1]
    return deltas, payloads[-1]["reply"]


# --- assistants -------------------------------------------------------------------------------------

def test_assistant_crud(chat: Chat) -> None:
    a = _assistant(chat, "helper", description="pump questions", top_n=4,
                   llm={"temperature": 0.3}, prompt={"opening": "Hello!", "toc_enhance": True},
                   retrieval={"fusion": "weighted", "similarity_threshold": 0.1})
    assert a["dataset_ids"] == [chat.kb]
    assert a["datasets"] == [{"id": chat.kb, "name": "manuals", "state": "ok"}]
    assert a["llm"]["temperature"] == 0.3 and a["llm"]["top_p"] == 0.3
    assert a["prompt"]["opening"] == "Hello!" and a["prompt"]["quote"] is True
    # the retrieval API's own options type, as each answer runs it: page 1 of top_n
    assert a["retrieval"]["fusion"] == "weighted" and a["retrieval"]["toc_enhance"] is True
    assert (a["retrieval"]["page"], a["retrieval"]["page_size"], a["retrieval"]["explain"]) == (1, 4, False)

    assert chat.api("GET", f"/chats/{a['id']}").json() == a
    assert chat.api("GET", "/chats/helper").json()["id"] == a["id"]  # by name too
    listed = chat.api("GET", "/chats").json()
    assert a["id"] in [x["id"] for x in listed["assistants"]] and listed["total"] == len(listed["assistants"])

    # PATCH merges settings key by key; sending back what GET shows is accepted
    r = chat.api("PATCH", f"/chats/{a['id']}", json={"prompt": {"quote": False}, "top_n": 5,
                                                     "retrieval": a["retrieval"] | {"page_size": 5}})
    assert r.status_code == 200, r.text
    b = r.json()
    assert b["prompt"]["quote"] is False and b["prompt"]["opening"] == "Hello!"
    assert b["top_n"] == 5 and b["retrieval"]["page_size"] == 5 and b["retrieval"]["fusion"] == "weighted"
    assert chat.api("PATCH", f"/chats/{a['id']}", json={"name": "helper 2"}).json()["name"] == "helper 2"

    assert chat.api("DELETE", f"/chats/{a['id']}").status_code == 204
    assert chat.api("GET", f"/chats/{a['id']}").status_code == 404


@pytest.mark.parametrize(("body", "status", "named"), [
    ({"name": "", "dataset_ids": ["manuals"]}, 422, "name"),
    ({"name": "x"}, 422, "dataset_ids"),
    ({"name": "x", "dataset_ids": ["nope"]}, 404, "dataset_ids"),
    ({"name": "x", "dataset_ids": ["manuals"], "colour": "red"}, 422, "colour"),
    ({"name": "x", "dataset_ids": ["manuals"], "llm": {"temperature": 5}}, 422, "llm.temperature"),
    ({"name": "x", "dataset_ids": ["manuals"], "llm": {"model": "gpt-9"}}, 400, "llm.model"),
    ({"name": "x", "dataset_ids": ["manuals"], "llm": {"provider": "nope"}}, 400, "llm.provider"),
    ({"name": "x", "dataset_ids": ["manuals"], "llm": {"max_tokens": 0}}, 422, "llm.max_tokens"),
    ({"name": "x", "dataset_ids": ["manuals"], "top_n": 0}, 422, "top_n"),
    ({"name": "x", "dataset_ids": ["manuals"], "retrieval": {"mode": "psychic"}}, 422, "retrieval.mode"),
    ({"name": "x", "dataset_ids": ["manuals"], "retrieval": {"page": 3}}, 400, "retrieval.page"),
    ({"name": "x", "dataset_ids": ["manuals"], "retrieval": {"page_size": 9}}, 400, "retrieval.page_size"),
    ({"name": "x", "dataset_ids": ["manuals"], "retrieval": {"explain": True}}, 400, "retrieval.explain"),
    ({"name": "x", "dataset_ids": ["manuals"], "retrieval": {"similarity_threshold": 2}}, 422,
     "retrieval.similarity_threshold"),
    ({"name": "x", "dataset_ids": ["manuals"], "prompt": {"system": "Use {knowledge} for {team}"}}, 422, "prompt"),
    ({"name": "x", "dataset_ids": ["manuals"], "prompt": {"variables": [{"name": "knowledge"}]}}, 422, "prompt"),
    ({"name": "x", "dataset_ids": ["manuals"], "prompt": {"cross_languages": [""]}}, 422,
     "prompt.cross_languages"),
    ({"name": "x", "dataset_ids": ["manuals"], "prompt": {"quote": "maybe"}}, 422, "prompt.quote"),
])
def test_every_field_is_validated_with_a_4xx_naming_it(chat: Chat, body: dict[str, Any], status: int,
                                                        named: str) -> None:
    r = chat.api("POST", "/chats", json=body)
    assert r.status_code == status, r.text
    assert named in r.json()["message"], r.json()


def test_update_is_validated_and_names_are_unique(chat: Chat) -> None:
    _assistant(chat, "taken")
    a = _assistant(chat, "renamed")
    r = chat.api("POST", "/chats", json={"name": "taken", "dataset_ids": [chat.kb]})
    assert r.status_code == 409 and "name" in r.json()["message"]
    r = chat.api("PATCH", f"/chats/{a['id']}", json={"name": "taken"})
    assert r.status_code == 409 and "name" in r.json()["message"]
    for body, status, named in [({"llm": {"temperature": -1}}, 400, "llm.temperature"),
                                ({"retrieval": {"mode": "psychic"}}, 400, "retrieval.mode"),
                                ({"prompt": {"system": "{nope}"}}, 400, "prompt"),
                                ({"dataset_ids": ["nope"]}, 404, "dataset_ids"),
                                ({"top_n": None}, 400, "top_n")]:
        r = chat.api("PATCH", f"/chats/{a['id']}", json=body)
        assert r.status_code == status, (body, r.text)
        assert named in r.json()["message"], (body, r.json())


# --- completions, sessions, messages ------------------------------------------------------------------

def test_a_conversation_with_a_follow_up(chat: Chat) -> None:
    a = _assistant(chat, "pumps", prompt={"opening": "Ask me about pumps."})
    first = _ask(chat, a["id"], PAGE2_QUESTION)
    assert first["model"] == "fake-chat" and not first["insufficient"]
    ref = first["references"][0]
    assert f"[ID:{ref['id']}]" in first["answer"] and "450 operating hours" in ref["content"]
    assert ref["version_id"] and ref["kb_id"] == chat.kb and ref["status"] == "current"
    assert ref["positions"] and ref["positions"][0][0] == 2  # the fact is on page 2
    citation = first["citations"][0]
    assert citation["id"] == ref["id"] and citation["verdict"] in ("supported", "weak")  # verified
    assert "450 operating hours" in citation["sentence_text"] and "450" in citation["supporting_sentence"]
    assert first["explain"]["standalone_question"] == PAGE2_QUESTION
    session = first["session_id"]

    second = _ask(chat, a["id"], FOLLOW_UP, session_id=session, explain=True)
    assert second["session_id"] == session
    explain = second["explain"]
    # rewritten by the chat model with the last turn, then searched and answered as the standalone question
    assert explain["question"] == FOLLOW_UP and explain["rewrite_method"] == "model"
    assert explain["standalone_question"] == explain["search_query"] == STANDALONE
    assert "K7" in second["answer"] and second["references"][0]["chunk_id"] == ref["chunk_id"]
    rewrite = [r.body for r in chat.server.requests if r.path.endswith("/chat/completions")][-2]
    assert PAGE2_QUESTION in rewrite["messages"][-1]["content"] and FOLLOW_UP in rewrite["messages"][-1]["content"]
    assert explain["retrieval"]["candidates"]  # asked for explain
    # the chat model was given the standalone question, with the evidence
    answered = [r.body for r in chat.server.requests if r.path.endswith("/chat/completions")][-1]
    assert answered["messages"][-1]["content"] == explain["standalone_question"]

    detail = chat.api("GET", f"/chats/{a['id']}/sessions/{session}").json()
    SessionDetail.model_validate(detail)
    assert detail["name"] == PAGE2_QUESTION and detail["opening"] == "Ask me about pumps."
    assert [(m["role"], m["turn"]) for m in detail["messages"]] == [("user", 0), ("assistant", 0), ("user", 1),
                                                                    ("assistant", 1)]
    assert detail["messages"][1]["references"] == first["references"]
    assert detail["messages"][3]["explain"]["standalone_question"] == explain["standalone_question"]
    assert "model" not in detail["messages"][0] and "explain" not in detail["messages"][0]


def test_json_and_stream_carry_the_same_reply(chat: Chat) -> None:
    a = _assistant(chat, "streamer")
    plain = _ask(chat, a["id"], PAGE2_QUESTION)
    deltas, streamed = _ask_stream(chat, a["id"], PAGE2_QUESTION)
    assert deltas and "450" in "".join(deltas)
    assert streamed["references"] == plain["references"] and streamed["references"]
    assert streamed["citations"] == plain["citations"]
    assert streamed["answer"] == plain["answer"]
    assert streamed["session_id"] != plain["session_id"]  # each started a session
    ChatReply.model_validate(streamed)
    # the streamed turn was stored like the other
    msgs = chat.api("GET", f"/chats/{a['id']}/sessions/{streamed['session_id']}/messages").json()
    MessageList.model_validate(msgs)
    assert msgs["messages"][1]["id"] == streamed["message_id"]
    assert msgs["messages"][1]["references"] == streamed["references"]
    # into an existing session
    deltas, again = _ask_stream(chat, a["id"], FOLLOW_UP, session_id=plain["session_id"])
    assert again["session_id"] == plain["session_id"]


def test_insufficient_evidence_gets_the_empty_response_and_quote_off_has_no_markers(chat: Chat) -> None:
    a = _assistant(chat, "strict", prompt={"empty_response": "Sorry, the manuals do not say."})
    reply = _ask(chat, a["id"], "What is the capital of Mongolia?")
    assert reply["insufficient"] and reply["answer"] == "Sorry, the manuals do not say.", reply
    assert reply["references"] == [] and reply["citations"] == []

    b = _assistant(chat, "plain", prompt={"quote": False, "rewrite_followups": False})
    reply = _ask(chat, b["id"], PAGE2_QUESTION)
    assert "[ID:" not in reply["answer"] and "450 operating hours" in reply["answer"]
    assert reply["references"] and reply["citations"] == []
    follow = _ask(chat, b["id"], FOLLOW_UP, session_id=reply["session_id"])
    assert follow["explain"]["rewrite_method"] == "off" and follow["explain"]["standalone_question"] == FOLLOW_UP
    deltas, streamed = _ask_stream(chat, b["id"], PAGE2_QUESTION)  # the streamed text has no markers either
    assert "".join(deltas) == streamed["answer"] == reply["answer"] and len(deltas) > 1


def test_cross_languages_and_keywords_widen_the_search(chat: Chat) -> None:
    a = _assistant(chat, "polyglot", prompt={"cross_languages": ["French"], "keyword": True})
    reply = _ask(chat, a["id"], PAGE2_QUESTION)
    assert reply["explain"]["search_query"] == f"{PAGE2_QUESTION}\n{FRENCH}\nOrion pump servicing interval"
    assert "450 operating hours" in reply["answer"] and reply["references"]
    answered = [r.body for r in chat.server.requests if r.path.endswith("/chat/completions")][-1]
    assert answered["messages"][-1]["content"] == PAGE2_QUESTION  # the answer is to the question asked


def test_prompt_variables_reach_the_model_and_are_checked(chat: Chat) -> None:
    a = _assistant(chat, "templated", prompt={
        "system": "You work for {company}. Tone: {tone}.\nDocuments:\n{knowledge}",
        "variables": [{"name": "company", "optional": False}, {"name": "tone"}]})
    r = chat.api("POST", f"/chats/{a['id']}/completions", json={"question": PAGE2_QUESTION})
    assert r.status_code == 400 and "variables.company" in r.json()["message"]
    r = chat.api("POST", f"/chats/{a['id']}/completions",
                 json={"question": PAGE2_QUESTION, "variables": {"company": "Acme", "colour": "red"}})
    assert r.status_code == 400 and "variables.colour" in r.json()["message"]
    _ask(chat, a["id"], PAGE2_QUESTION, variables={"company": "Acme"})
    system = [r.body for r in chat.server.requests if r.path.endswith("/chat/completions")][-1]["messages"][0]
    assert system["content"].startswith("You work for Acme. Tone: .") and "450 operating hours" in system["content"]


def test_sessions_list_rename_feedback_and_delete(chat: Chat) -> None:
    a = _assistant(chat, "sessions")
    first = chat.api("POST", f"/chats/{a['id']}/sessions", json={}).json()
    assert first["name"] == "New session" and first["message_count"] == 0
    second = chat.api("POST", f"/chats/{a['id']}/sessions", json={"name": "second"})
    assert second.status_code == 201
    third = chat.api("POST", f"/chats/{a['id']}/sessions", json={"name": "third"}).json()
    listed = chat.api("GET", f"/chats/{a['id']}/sessions", params={"page_size": 2}).json()
    SessionList.model_validate(listed)
    assert listed["total"] == 3 and [s["name"] for s in listed["sessions"]] == ["third", "second"]  # newest first
    rest = chat.api("GET", f"/chats/{a['id']}/sessions", params={"page": 2, "page_size": 2}).json()
    assert [s["id"] for s in rest["sessions"]] == [first["id"]]
    assert chat.api("GET", f"/chats/{a['id']}/sessions", params={"page_size": 0}).status_code == 422

    r = chat.api("PATCH", f"/chats/{a['id']}/sessions/{first['id']}", json={"name": "pump talk"})
    assert r.status_code == 200 and r.json()["name"] == "pump talk"
    assert chat.api("PATCH", f"/chats/{a['id']}/sessions/{first['id']}", json={"name": ""}).status_code == 422

    one = _ask(chat, a["id"], PAGE2_QUESTION, session_id=first["id"])
    two = _ask(chat, a["id"], "How long is the warranty?", session_id=first["id"])
    fb = chat.api("PUT", f"/chats/{a['id']}/sessions/{first['id']}/messages/{one['message_id']}/feedback",
                  json={"rating": "up", "comment": "exactly right"})
    assert fb.status_code == 200, fb.text
    assert fb.json()["feedback"] == {"rating": "up", "comment": "exactly right"}
    bad = chat.api("PUT", f"/chats/{a['id']}/sessions/{first['id']}/messages/{one['question_id']}/feedback",
                   json={"rating": "down"})
    assert bad.status_code == 400 and "message_id" in bad.json()["message"]
    bad = chat.api("PUT", f"/chats/{a['id']}/sessions/{first['id']}/messages/{one['message_id']}/feedback",
                   json={"rating": "meh"})
    assert bad.status_code == 422 and "rating" in bad.json()["message"]

    r = chat.api("DELETE", f"/chats/{a['id']}/sessions/{first['id']}/messages/{one['question_id']}")
    assert r.status_code == 200 and r.json()["deleted"] == [one["question_id"], one["message_id"]]
    left = chat.api("GET", f"/chats/{a['id']}/sessions/{first['id']}/messages").json()["messages"]
    assert [m["id"] for m in left] == [two["question_id"], two["message_id"]]

    assert chat.api("DELETE", f"/chats/{a['id']}/sessions/{third['id']}").status_code == 204
    assert chat.api("GET", f"/chats/{a['id']}/sessions/{third['id']}").status_code == 404
    r = chat.api("POST", f"/chats/{a['id']}/completions", json={"question": "hi", "session_id": third["id"]})
    assert r.status_code == 404
    # deleting the assistant deletes its sessions
    assert chat.api("DELETE", f"/chats/{a['id']}").status_code == 204
    assert chat.api("GET", f"/chats/{a['id']}/sessions/{first['id']}").status_code == 404


def test_another_tenant_gets_404_on_every_chat_route(chat: Chat) -> None:
    a = _assistant(chat, "private")
    reply = _ask(chat, a["id"], PAGE2_QUESTION)
    sid, mid = reply["session_id"], reply["message_id"]
    base = f"/chats/{a['id']}"
    routes: list[tuple[str, str, dict[str, Any] | None]] = [
        ("GET", base, None),
        ("PATCH", base, {"description": "mine now"}),
        ("DELETE", base, None),
        ("POST", f"{base}/sessions", {}),
        ("GET", f"{base}/sessions", None),
        ("GET", f"{base}/sessions/{sid}", None),
        ("PATCH", f"{base}/sessions/{sid}", {"name": "x"}),
        ("DELETE", f"{base}/sessions/{sid}", None),
        ("GET", f"{base}/sessions/{sid}/messages", None),
        ("PUT", f"{base}/sessions/{sid}/messages/{mid}/feedback", {"rating": "down"}),
        ("DELETE", f"{base}/sessions/{sid}/messages/{mid}", None),
        ("POST", f"{base}/completions", {"question": PAGE2_QUESTION}),
        ("POST", f"{base}/completions", {"question": PAGE2_QUESTION, "stream": True}),
        ("GET", "/chats/private", None),
    ]
    for method, path, body in routes:
        r = chat.api(method, path, key=chat.other_key, json=body)
        assert r.status_code == 404, (method, path, r.status_code, r.text)
    # nor can another tenant point an assistant of its own at this tenant's knowledge base
    r = chat.api("POST", "/chats", key=chat.other_key, json={"name": "thief", "dataset_ids": [chat.kb]})
    assert r.status_code == 404 and "dataset_ids" in r.json()["message"]
    assert chat.api("GET", "/chats", key=chat.other_key).json() == {"assistants": [], "total": 0}
    # nor use this tenant's session with an assistant of its own
    kb = chat.api("POST", "/datasets", key=chat.other_key, json={"name": "theirs"}).json()
    mine = chat.api("POST", "/chats", key=chat.other_key, json={"name": "mine", "dataset_ids": [kb["id"]]}).json()
    r = chat.api("POST", f"/chats/{mine['id']}/completions", key=chat.other_key,
                 json={"question": "hi", "session_id": sid})
    assert r.status_code == 404
    # everything is still there for its owner
    assert chat.api("GET", f"{base}/sessions/{sid}").json()["messages"][1]["id"] == mid


def test_references_stay_locked_to_the_version_they_cite(chat: Chat, tmp_path: Path) -> None:
    kb = chat.api("POST", "/datasets", json={"name": "versioned"}).json()["id"]
    old = tmp_path / "v1" / "orion-manual.pdf"
    old.parent.mkdir()
    write_manual_pdf(old)
    chat.api("POST", f"/datasets/{kb}/documents", files=[("file", ("orion-manual.pdf", old.read_bytes()))])
    chat.drain()
    a = _assistant(chat, "versions", dataset_ids=[kb])
    reply = _ask(chat, a["id"], PAGE2_QUESTION)
    cited = reply["references"][0]
    assert PAGE2_FACT in cited["content"] and cited["status"] == "current"

    # the document is replaced: same name, new content (the interval changed)
    new = tmp_path / "v2" / "orion-manual.pdf"
    new.parent.mkdir()
    make_pdf(new, [["# Orion Pump Manual", "Service the Orion pump every 900 operating hours from now on."]])
    chat.api("POST", f"/datasets/{kb}/documents", files=[("file", ("orion-manual.pdf", new.read_bytes()))])
    chat.drain()
    doc = chat.api("GET", f"/datasets/{kb}/documents/{cited['doc_id']}").json()
    assert doc["active_version_id"] != cited["version_id"]

    detail = chat.api("GET", f"/chats/{a['id']}/sessions/{reply['session_id']}").json()
    ref = detail["messages"][1]["references"][0]
    assert ref["version_id"] == cited["version_id"] and ref["content"] == cited["content"]  # the snapshot
    assert ref["status"] == "superseded" and ref["active_version_id"] == doc["active_version_id"]
    assert detail["messages"][1]["content"] == reply["answer"]
    changes = chat.client.get(ref["changes"], headers={"Authorization": f"Bearer {chat.key}"})  # issue 27
    assert changes.status_code == 200, changes.text
    assert changes.json()["to_version"] == 2 and any("900" in (c["after"] or "") for c in changes.json()["changes"])
    assert cited["changes"] is None
    # the cited version's file and page still open
    f = chat.client.get(ref["file"], headers={"Authorization": f"Bearer {chat.key}"})
    assert f.status_code == 200 and f.content == old.read_bytes()
    pages = chat.client.get(ref["pages"], headers={"Authorization": f"Bearer {chat.key}"}).json()["pages"]
    assert len(pages) == 3
    cited_page = next(p for p in pages if p["page"] == ref["positions"][0][0])
    image = chat.client.get(cited_page["image"], headers={"Authorization": f"Bearer {chat.key}"})
    assert image.status_code == 200 and image.content.startswith(b"\x89PNG")

    # a new answer cites the new version
    fresh = _ask(chat, a["id"], PAGE2_QUESTION, session_id=reply["session_id"])
    assert all(r["version_id"] == doc["active_version_id"] for r in fresh["references"])

    # the document is deleted: the snapshot stays, flagged, with nothing to open
    chat.api("DELETE", f"/datasets/{kb}/documents", json={"ids": [cited["doc_id"]]})
    ref = chat.api("GET", f"/chats/{a['id']}/sessions/{reply['session_id']}").json()["messages"][1]["references"][0]
    assert ref["status"] == "deleted" and ref["content"] == cited["content"]
    assert ref["version_id"] == cited["version_id"]
    assert ref["file"] is None and ref["pages"] is None and ref["active_version_id"] is None


def test_a_retrieval_and_an_answer_also_search_the_question_translated(chat: Chat) -> None:
    body = {"question": PAGE2_QUESTION, "dataset_ids": [chat.kb], "cross_languages": ["French"]}
    r = chat.api("POST", "/retrieval", json={**body, "explain": True})
    assert r.status_code == 200, r.text
    crossed = r.json()["explain"]["query"]["cross_languages"]
    assert crossed["translations"] == [FRENCH] and crossed["search_query"] == f"{PAGE2_QUESTION}\n{FRENCH}"
    assert "fake-chat" in crossed["note"] and r.json()["chunks"]
    asked = [r.body for r in chat.server.requests if r.path.endswith("/chat/completions")][-1]
    assert "French" in asked["messages"][0]["content"]
    r = chat.api("POST", "/answer", json={**body, "top_n": 3})
    assert r.status_code == 200 and "450 operating hours" in r.json()["answer"], r.text
    too_many = chat.api("POST", "/retrieval", json={**body, "cross_languages": ["x"] * 9})
    assert too_many.status_code == 422


def test_an_assistant_whose_knowledge_base_was_deleted_says_so(chat: Chat) -> None:
    gone = chat.api("POST", "/datasets", json={"name": "doomed"}).json()
    a = _assistant(chat, "orphan", dataset_ids=[chat.kb, gone["id"]])
    b = _assistant(chat, "lost", dataset_ids=[gone["id"]])
    assert chat.api("DELETE", f"/datasets/{gone['id']}").status_code == 204

    shown = chat.api("GET", f"/chats/{a['id']}").json()
    assert {d["name"]: d["state"] for d in shown["datasets"]} == {"manuals": "ok", "doomed": "deleted"}
    reply = _ask(chat, a["id"], PAGE2_QUESTION)
    assert reply["references"] and "doomed" in reply["notes"][0] and "deleted" in reply["notes"][0]
    assert "'doomed'" in reply["answer"] and "deleted" in reply["answer"]

    reply = _ask(chat, b["id"], PAGE2_QUESTION)
    assert reply["insufficient"] and reply["references"] == []
    assert "no knowledge base" in reply["answer"] and "'doomed'" in reply["answer"]
    deltas, streamed = _ask_stream(chat, b["id"], PAGE2_QUESTION)
    assert streamed["answer"] == reply["answer"] and deltas


def test_openapi_describes_the_chat_routes(chat: Chat) -> None:
    paths = chat.client.get("/openapi.json").json()["paths"]
    completions = paths["/api/v1/chats/{chat_id}/completions"]["post"]["responses"]
    assert completions["200"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ChatReply"}
    assert "text/event-stream" in completions["200"]["content"]
    assert {"429", "502", "404"} <= set(completions)
    assert "201" in paths["/api/v1/chats"]["post"]["responses"]


def test_concurrent_answers_in_one_session_take_consecutive_turns(chat: Chat) -> None:
    a = _assistant(chat, "busy", prompt={"rewrite_followups": False})
    first = _ask(chat, a["id"], PAGE2_QUESTION)
    ctx = chat.client.app.state.ctx  # type: ignore[attr-defined]
    with ctx.db.session() as s:
        principal = identity.authenticate(s, chat.key)
    n = 6
    asks = [chat_use_case.CompletionRequest(question=f"{PAGE2_QUESTION} ({i})", session_id=first["session_id"])
            for i in range(n)]
    prepared = [chat_use_case.prepare(ctx, principal=principal, assistant_id=a["id"], request=r) for r in asks]
    start = threading.Barrier(n)

    def answer(p: chat_use_case.Prepared) -> ChatReply:
        written = chat_use_case._write(ctx, p)  # complete() is _write then _finish: written first, so that
        start.wait()  # every answer is stored at the same moment
        return chat_use_case._finish(ctx, principal, p, written)

    with ThreadPoolExecutor(n) as pool:
        replies = list(pool.map(answer, prepared))
    assert {r.session_id for r in replies} == {first["session_id"]}
    detail = SessionDetail.model_validate(chat.api("GET", f"/chats/{a['id']}/sessions/{first['session_id']}").json())
    turns = [(m.turn, m.role.value) for m in detail.messages]
    assert turns == [(t, role) for t in range(n + 1) for role in ("user", "assistant")]
    by_turn = {m.turn: m.content for m in detail.messages if m.role.value == "user"}
    assert sorted(by_turn.values()) == sorted([PAGE2_QUESTION] + [p.question for p in prepared])
    answers = {m.id for m in detail.messages if m.role.value == "assistant"}
    assert {r.message_id for r in replies} <= answers


def test_the_assistants_chat_model_settings_reach_the_model(chat: Chat) -> None:
    a = _assistant(chat, "tuned", llm={"temperature": 0.6, "top_p": 0.8, "presence_penalty": -0.5,
                                       "frequency_penalty": 1.5, "max_tokens": 300})
    reply = _ask(chat, a["id"], PAGE2_QUESTION)
    assert reply["truncated"] is False
    sent = [r.body for r in chat.server.requests if r.path.endswith("/chat/completions")][-1]
    assert {k: sent[k] for k in ("temperature", "top_p", "presence_penalty", "frequency_penalty", "max_tokens")} == {
        "temperature": 0.6, "top_p": 0.8, "presence_penalty": -0.5, "frequency_penalty": 1.5, "max_tokens": 300}
