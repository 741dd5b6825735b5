from __future__ import annotations

import socket

import pytest

from ragloom.errors import ModelError
from ragloom.models.chat import ChatModel, OpenAIChatModel, Sampling, finish_reason
from ragloom.models.embedding import OpenAIEmbedder
from tests.fakes import FakeOpenAIServer, hashed_embedding

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi?"}]


def test_chat_returns_the_reply_and_sends_the_openai_body(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_reply("Hello there.")
    model = OpenAIChatModel(fake_openai.base_url, "fake-chat", api_key="sk-test")
    assert isinstance(model, ChatModel)
    assert model.chat(MESSAGES, temperature=0.2, max_tokens=50) == "Hello there."
    req = fake_openai.requests[-1]
    assert req.path == "/v1/chat/completions"
    assert req.body["model"] == "fake-chat" and req.body["messages"] == MESSAGES
    assert req.body["temperature"] == 0.2 and req.body["max_tokens"] == 50
    assert req.body["stream"] is False
    assert req.headers["Authorization"] == "Bearer sk-test"


def test_stream_yields_deltas_that_add_up_to_the_reply(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_reply("The tower is 330 metres tall [ID:0].")
    model = OpenAIChatModel(fake_openai.base_url, "fake-chat")
    deltas = list(model.stream(MESSAGES))
    assert len(deltas) > 3
    assert "".join(deltas) == "The tower is 330 metres tall [ID:0]."
    assert fake_openai.requests[-1].body["stream"] is True


@pytest.mark.parametrize("streaming", [False, True])
def test_sampling_settings_are_sent_and_a_cut_reply_reports_length(fake_openai: FakeOpenAIServer,
                                                                    streaming: bool) -> None:
    model = OpenAIChatModel(fake_openai.base_url, "fake-chat")
    sampling = Sampling(top_p=0.3, presence_penalty=0.4, frequency_penalty=-0.7)
    for limit, reason in ((50, "stop"), (3, "length")):
        fake_openai.queue_reply("The tower is 330 metres tall.")
        if streaming:
            pieces = list(model.stream(MESSAGES, max_tokens=limit, sampling=sampling))
            text, last = "".join(pieces), pieces[-1]
        else:
            text = last = model.chat(MESSAGES, max_tokens=limit, sampling=sampling)
        assert finish_reason(last) == reason
        assert text == ("The tower is 330 metres tall." if reason == "stop" else "The tower is")
        body = fake_openai.requests[-1].body
        assert (body["top_p"], body["presence_penalty"], body["frequency_penalty"]) == (0.3, 0.4, -0.7)
    model.chat(MESSAGES)
    assert not {"top_p", "presence_penalty", "frequency_penalty"} & set(fake_openai.requests[-1].body)


@pytest.mark.parametrize("streaming", [False, True])
def test_a_server_error_becomes_a_model_error(fake_openai: FakeOpenAIServer, streaming: bool) -> None:
    fake_openai.fail_next(500, '{"error": {"message": "the GPU caught fire"}}')
    model = OpenAIChatModel(fake_openai.base_url, "fake-chat")
    with pytest.raises(ModelError) as info:
        if streaming:
            list(model.stream(MESSAGES))
        else:
            model.chat(MESSAGES)
    assert "500" in info.value.message and "GPU caught fire" in info.value.message


def test_an_unexpected_body_becomes_a_model_error(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.fail_next(200, '{"unexpected": true}')
    with pytest.raises(ModelError, match="answered 200 .*not an OpenAI-compatible reply"):
        OpenAIChatModel(fake_openai.base_url, "fake-chat").chat(MESSAGES)


def test_an_unreachable_server_becomes_a_model_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket is closed
    model = OpenAIChatModel(f"http://127.0.0.1:{port}/v1", "fake-chat", timeout=2)
    with pytest.raises(ModelError, match="unreachable"):
        model.chat(MESSAGES)
    with pytest.raises(ModelError):
        list(model.stream(MESSAGES))


def test_the_fake_server_embeds_deterministically(fake_openai: FakeOpenAIServer) -> None:
    emb = OpenAIEmbedder(fake_openai.base_url, "fake-embed")
    assert emb.dim == 64
    vecs = emb.embed_passages(["leave days", "tower height"])
    assert vecs.shape == (2, 64)
    assert vecs[0].tolist() == pytest.approx(hashed_embedding("leave days"))
