"""The OpenAI-compatible API (issue 10, Integrations), driven by the official ``openai`` package
against a live server (uvicorn on loopback, tests/live.py) whose chat model is the fake
OpenAI-compatible server (tests/fakes/openai_server.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from ragloom.config import Settings
from ragloom.schemas.chats import ChatAnswer
from ragloom.service.accounts import identity
from tests.corpus import write_manual_pdf
from tests.fakes.openai_server import FakeOpenAIServer
from tests.live import live_server, wait_documents

QUESTION = "How often must the Orion pump be serviced?"
FOLLOW_UP = "And which grease does it use?"
STANDALONE = "Which grease does the Orion pump use?"


def _responder(body: dict[str, Any]) -> str:
    """A chat model: answers from the numbered evidence, and rewrites a follow-up about the grease into
    a standalone question."""
    messages = body["messages"]
    prompt = "\n".join(m["content"] for m in messages)
    question = messages[-1]["content"]
    if "\nID: " in "\n" + prompt:
        for block in prompt.split("ID: ")[1:]:
            n = block.split("\n", 1)[0].strip()
            if "450 operating hours" in block and ("orion" in question.lower() or "grease" in question.lower()):
                if "grease" in question.lower():
                    return f"The Orion pump uses synthetic grease type K7 [ID:{n}]."
                return f"The Orion pump must be serviced every 450 operating hours [ID:{n}]."
        return "I do not know."
    if "grease" in prompt.lower() and "Orion" in prompt:
        return STANDALONE
    return str(question)


@dataclass
class Compat:
    base_url: str
    key: str
    other_key: str
    assistant: dict[str, Any]
    server: FakeOpenAIServer

    def client(self, key: str | None = None) -> openai.OpenAI:
        return openai.OpenAI(base_url=self.base_url, api_key=key or self.key, max_retries=0, timeout=120)


@pytest.fixture(scope="module")
def compat(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Compat]:
    tmp = tmp_path_factory.mktemp("openai-compat")
    with FakeOpenAIServer(responder=_responder) as server:
        settings = Settings(home=tmp / "home", workers=0, chat_base_url=server.base_url, chat_model="fake-chat",
                            chat_api_key="sk-test", rate_limit_per_minute=0, _env_file=None)
        with live_server(settings) as live:
            with live.ctx.db.session() as s:
                boot = identity.bootstrap(s)
                assert boot.new_key is not None
                tenant, user = identity.create_tenant(s, name="other", owner_email="other@example.com")
                other = identity.create_api_key(s, tenant_id=tenant.id, user_id=user.id).key
            key = boot.new_key.key
            with live.client(key) as api:
                kb = api.post("/datasets", json={"name": "manuals"}).json()
                pdf = tmp / "orion-manual.pdf"
                write_manual_pdf(pdf)
                up = api.post(f"/datasets/{kb['id']}/documents",
                              files=[("file", ("orion-manual.pdf", pdf.read_bytes(), "application/pdf"))])
                assert up.status_code == 201, up.text
                assert [d["status"] for d in wait_documents(api, kb["id"])] == ["done"]
                r = api.post("/chats", json={"name": "pump helper", "dataset_ids": [kb["id"]]})
                assert r.status_code == 201, r.text
                with live.client(other) as theirs:  # another tenant's assistant, on its own dataset
                    kb2 = theirs.post("/datasets", json={"name": "theirs"}).json()
                    r2 = theirs.post("/chats", json={"name": "their helper", "dataset_ids": [kb2["id"]]})
                    assert r2.status_code == 201, r2.text
            yield Compat(f"{live.url}/api/v1/openai/v1", key, other, r.json(), server)


def _reference(extra: dict[str, Any] | None) -> dict[str, Any]:
    assert extra and "reference" in extra, extra
    ref = extra["reference"]
    assert ChatAnswer.model_validate(ref).model_dump(mode="json") == ref
    return dict(ref)


def test_models_lists_the_callers_assistants_only(compat: Compat) -> None:
    models = compat.client().models.list()
    assert [(m.id, m.object, m.owned_by) for m in models.data] == [(compat.assistant["id"], "model", "ragloom")]
    assert models.data[0].model_extra == {"name": "pump helper"}
    assert [m.model_extra["name"] for m in compat.client(compat.other_key).models.list().data  # type: ignore[index]
            ] == ["their helper"]


def test_a_completion_by_name_and_by_id_with_references(compat: Compat) -> None:
    for model in ("pump helper", compat.assistant["id"]):
        done = compat.client().chat.completions.create(
            model=model, messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": QUESTION}],
            temperature=0.2, top_p=0.9, max_tokens=256)
        assert done.object == "chat.completion" and done.id.startswith("chatcmpl-") and done.model == model
        (choice,) = done.choices
        assert (choice.index, choice.finish_reason, choice.message.role) == (0, "stop", "assistant")
        assert "450 operating hours" in (choice.message.content or "")
        ref = _reference(choice.message.model_extra)
        assert ref["answer"] == choice.message.content
        assert ref["references"] and ref["references"][0]["document_name"] == "orion-manual.pdf"
        assert ref["citations"] and ref["explain"]["question"] == QUESTION
        assert done.usage is not None and done.usage.completion_tokens > 0
        assert done.usage.total_tokens == done.usage.prompt_tokens + done.usage.completion_tokens
    sent = compat.server.requests[-1].body  # the request's sampling settings reach the chat model
    assert (sent["temperature"], sent["top_p"], sent["max_tokens"]) == (0.2, 0.9, 256)
    assert (sent["presence_penalty"], sent["frequency_penalty"]) == (0.4, 0.7)  # the assistant's defaults
    assert "Be brief." not in str(sent["messages"])  # system messages are ignored: the assistant's prompt rules
    compat.client().chat.completions.create(model="pump helper", messages=[{"role": "user", "content": QUESTION}],
                                            presence_penalty=-1.5, frequency_penalty=0)
    sent = compat.server.requests[-1].body
    assert (sent["presence_penalty"], sent["frequency_penalty"], sent["top_p"]) == (-1.5, 0, 0.3)


def test_a_reply_cut_at_max_tokens_finishes_with_length(compat: Compat) -> None:
    messages: Any = [{"role": "user", "content": QUESTION}]
    client = compat.client()
    done = client.chat.completions.create(model="pump helper", messages=messages, max_tokens=5)
    assert compat.server.requests[-1].body["max_tokens"] == 16  # ragloom's floor for an answer
    full = client.chat.completions.create(model="pump helper", messages=messages)
    assert done.choices[0].finish_reason == "stop" and full.choices[0].finish_reason == "stop"  # 12 words < 16
    compat.server.queue_reply(" ".join(["The Orion pump must be serviced every 450 operating hours"] * 3) + " [ID:0].")
    cut = client.chat.completions.create(model="pump helper", messages=messages, max_tokens=16)
    assert cut.choices[0].finish_reason == "length"
    assert _reference(cut.choices[0].message.model_extra)["truncated"] is True
    compat.server.queue_reply(" ".join(["The Orion pump must be serviced every 450 operating hours"] * 3) + " [ID:0].")
    chunks = list(client.chat.completions.create(model="pump helper", messages=messages, max_tokens=16, stream=True))
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["length"]


def test_a_stream_has_deltas_a_stop_chunk_with_references_usage_and_done(compat: Compat) -> None:
    client = compat.client()
    messages: Any = [{"role": "user", "content": QUESTION}]
    plain = client.chat.completions.create(model="pump helper", messages=messages)
    chunks = list(client.chat.completions.create(model="pump helper", messages=messages, stream=True,
                                                 stream_options={"include_usage": True}))
    assert all(c.object == "chat.completion.chunk" and c.id == chunks[0].id for c in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == plain.choices[0].message.content
    stop = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert [c.choices[0].finish_reason for c in stop] == ["stop"] and stop[0] is chunks[-2]
    ref = _reference(stop[0].model_extra)
    assert ref["answer"] == text and ref["references"]
    assert chunks[-1].choices == [] and chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0
    assert all(c.usage is None for c in chunks[:-1])

    # the wire: server-sent events ending with [DONE]; without include_usage no usage key at all
    with httpx.stream("POST", f"{compat.base_url}/chat/completions", headers={"Authorization": f"Bearer {compat.key}"},
                      json={"model": "pump helper", "messages": messages, "stream": True}, timeout=120) as resp:
        assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream")
        events = [line[6:] for line in resp.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]" and '"usage"' not in "".join(events)


def test_a_follow_up_conversation_is_rewritten_with_its_history(compat: Compat) -> None:
    client = compat.client()
    first = client.chat.completions.create(model="pump helper", messages=[{"role": "user", "content": QUESTION}])
    answer = first.choices[0].message.content or ""
    done = client.chat.completions.create(model="pump helper", messages=[
        {"role": "user", "content": QUESTION}, {"role": "assistant", "content": answer},
        {"role": "user", "content": FOLLOW_UP}])
    ref = _reference(done.choices[0].message.model_extra)
    assert ref["explain"]["standalone_question"] == STANDALONE
    assert "grease type K7" in (done.choices[0].message.content or "")
    # nothing was stored: the OpenAI API keeps no sessions
    with httpx.Client(base_url=compat.base_url.removesuffix("/openai/v1"),
                      headers={"Authorization": f"Bearer {compat.key}"}, timeout=60) as api:
        assert api.get(f"/chats/{compat.assistant['id']}/sessions").json()["total"] == 0


def test_errors_are_openais(compat: Compat) -> None:
    client = compat.client()
    user: Any = [{"role": "user", "content": QUESTION}]
    for model in ("nope", "their helper"):  # unknown, and another tenant's: the same 404
        with pytest.raises(openai.NotFoundError) as nf:
            client.chat.completions.create(model=model, messages=user)
        assert nf.value.code == "model_not_found" and nf.value.param == "model"
        assert set(nf.value.response.json()["error"]) == {"message", "type", "param", "code"}
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="nope", messages=user, stream=True)
    with pytest.raises(openai.AuthenticationError) as auth:
        compat.client("rk-not-a-key").models.list()
    assert auth.value.code == "invalid_api_key"
    with pytest.raises(openai.AuthenticationError):
        compat.client("rk-not-a-key").chat.completions.create(model="pump helper", messages=user)
    with pytest.raises(openai.BadRequestError) as bad:
        client.chat.completions.create(model="pump helper", messages=[{"role": "assistant", "content": "Hi"}])
    assert bad.value.param == "messages"
    with pytest.raises(openai.UnprocessableEntityError) as invalid:
        client.chat.completions.create(model="pump helper", messages=[])
    assert invalid.value.response.json()["error"]["type"] == "invalid_request_error"


def test_the_readme_example_runs(compat: Compat) -> None:
    """The README's OpenAI client example, run against the live server."""
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    start = readme.index("```python\nimport os\n\nfrom openai import OpenAI")
    code = readme[start + len("```python\n"):readme.index("```", start + 10)]
    code = code.replace("http://127.0.0.1:9380/api/v1/openai/v1", compat.base_url)
    code = code.replace('os.environ["RAGLOOM_API_KEY"]', repr(compat.key))
    # the assistant the README's "Chat" section creates, over the same knowledge base
    (name,) = set(re.findall(r'model="([^"]+)"', code))
    api = compat.base_url.removesuffix("/openai/v1")
    made = httpx.post(f"{api}/chats", headers={"Authorization": f"Bearer {compat.key}"},
                      json={"name": name, "dataset_ids": compat.assistant["dataset_ids"]})
    assert made.status_code in (201, 409), made.text
    namespace: dict[str, Any] = {}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 - the README's own example
    assert "450 operating hours" in namespace["reply"].choices[0].message.content
