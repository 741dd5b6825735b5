"""The LLM answer path over the real OpenAI wire protocol (a test server on loopback)."""

from __future__ import annotations

import json

import pytest

from ragloom.config import Settings
from ragloom.service.accounts import identity
from tests.corpus import PAGE2_FACT
from tests.fakes.openai_server import FakeOpenAIServer
from tests.live import live_server, wait_documents

pytestmark = pytest.mark.slow


def _cite_the_pump_chunk(body: dict) -> str:
    """Answer like a model would: find the evidence block holding the fact, cite it (sloppy format)."""
    prompt = "\n".join(m["content"] for m in body["messages"])
    blocks = prompt.split("ID: ")[1:]
    for block in blocks:
        n = block.split("\n", 1)[0].strip()
        if "450 operating hours" in block:
            return f"The Orion pump must be serviced every 450 operating hours (ID: {n}). It uses grease K7 [ID:99]."
    return "I do not know."


@pytest.fixture
def llm_server():
    with FakeOpenAIServer(responder=_cite_the_pump_chunk) as server:
        yield server


def test_answer_with_a_chat_model_cites_and_streams(tmp_path, llm_server) -> None:
    settings = Settings(home=tmp_path / "home", chat_base_url=llm_server.base_url, chat_model="fake-chat",
                        chat_api_key="sk-test", worker_poll_seconds=0.05, _env_file=None)
    with live_server(settings) as live:
        with live.ctx.db.session() as s:
            key = identity.bootstrap(s).new_key.key
        api = live.client(key)
        ds = api.post("/datasets", json={"name": "pumps"}).json()["id"]
        md = f"# Orion\n\n{PAGE2_FACT}\n\n# Other\n\nThe office opens at nine in the morning.\n".encode()
        api.post(f"/datasets/{ds}/documents", files=[("file", ("orion.md", md))])
        assert {d["status"] for d in wait_documents(api, ds)} == {"done"}

        body = api.post("/answer", json={"question": "How often is the Orion pump serviced?",
                                         "dataset_ids": [ds]}).json()
        assert body["model"] == "fake-chat"
        ref = body["references"][0]
        assert "450 operating hours" in ref["content"]
        assert f"[ID:{ref['id']}]" in body["answer"]  # "(ID: n)" repaired
        assert "[ID:99]" not in body["answer"]  # out-of-range citation dropped
        sent = llm_server.requests[-1]
        assert {k.lower(): v for k, v in sent.headers.items()}["authorization"] == "Bearer sk-test"
        assert sent.body["model"] == "fake-chat"

        with api.stream("POST", "/answer", json={"question": "How often is the Orion pump serviced?",
                                                 "dataset_ids": [ds], "stream": True}) as resp:
            assert resp.status_code == 200
            assert resp.headers["content-type"].startswith("text/event-stream")
            events = [line[6:] for line in resp.iter_lines() if line.startswith("data: ")]
        assert events[-1] == "[DONE]"
        payloads = [json.loads(e) for e in events[:-1]]
        assert any("delta" in p for p in payloads)
        final = payloads[-1]["answer"]
        assert final["model"] == "fake-chat" and final["references"]
