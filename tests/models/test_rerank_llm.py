"""The LLM reranker through the fake chat server: prompt, batching, lenient parsing, failures."""

from __future__ import annotations

import re

import numpy as np
import pytest

from ragloom.errors import ConfigError, ModelError
from ragloom.models.chat import OpenAIChatModel
from ragloom.models.rerank import Reranker, RerankerSpec, make_reranker
from ragloom.models.rerank_llm import LLMReranker, parse_scores
from tests.fakes.openai_server import FakeOpenAIServer

QUERY = "solar panel battery"
DOCS = [
    "Solar panel output is stored in a battery.",   # 3 shared words
    "The cat sleeps.",                               # 0
    "Battery chemistry.",                            # 1
    "Solar\npanel\nfarms",                           # 2 (newlines flattened in the prompt)
    "Lemon cake.",                                   # 0
]


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def rating(query: str, passage: str) -> int:
    return min(10, 3 * len(words(query) & words(passage)))


def judge(fmt: str):
    """A responder that reads the prompt like a model would and rates by shared words."""

    def respond(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        query = re.search(r"^Query: (.*)$", prompt, re.MULTILINE).group(1)
        passages = re.findall(r"^\[(\d+)\] (.*)$", prompt, re.MULTILINE)
        return "\n".join(fmt.format(n=n, s=rating(query, text)) for n, text in passages)

    return respond


@pytest.mark.parametrize("fmt", ["[{n}] {s}", "Passage {n}: {s}/10", "{n}. {s}"])
def test_scores_are_ratings_over_ten_in_batches(fmt: str) -> None:
    with FakeOpenAIServer(responder=judge(fmt)) as server:
        reranker = LLMReranker(OpenAIChatModel(server.base_url, "fake-chat"), batch_size=2)
        assert isinstance(reranker, Reranker) and reranker.name == "llm/fake-chat"
        scores = reranker.score(QUERY, DOCS)
        assert np.allclose(scores, [rating(QUERY, d) / 10 for d in DOCS])
        chats = [r for r in server.requests if r.path == "/v1/chat/completions"]
        assert len(chats) == 3  # 5 passages, 2 per request
        first = chats[0].body
        assert first["temperature"] == 0.0 and first["messages"][0]["role"] == "system"
        assert "[1] Solar panel output" in first["messages"][1]["content"]
        assert "[2] Solar panel farms" in chats[1].body["messages"][1]["content"]


def test_unrated_passages_score_zero_and_an_unreadable_reply_fails() -> None:
    with FakeOpenAIServer() as server:
        reranker = LLMReranker(OpenAIChatModel(server.base_url, "fake-chat"), batch_size=8)
        server.queue_reply("<think>[1] 0 [2] 0</think>\n[2] 9")
        assert np.allclose(reranker.score(QUERY, DOCS[:3]), [0.0, 0.9, 0.0])
        server.queue_reply("I cannot rate these passages.")
        with pytest.raises(ModelError, match="no scores"):
            reranker.score(QUERY, DOCS[:3])
        server.fail_next(500)
        with pytest.raises(ModelError):
            reranker.score(QUERY, DOCS[:3])
        assert reranker.score(QUERY, []).shape == (0,)


def test_long_passages_are_cut_in_the_prompt() -> None:
    with FakeOpenAIServer(replies=["[1] 5"]) as server:
        reranker = LLMReranker(OpenAIChatModel(server.base_url, "fake-chat"), max_chars=50)
        assert reranker.score(QUERY, ["word " * 200]).tolist() == [0.5]
        prompt = server.requests[-1].body["messages"][1]["content"]
        assert "word " * 10 in prompt and len(prompt) < 400


@pytest.mark.parametrize(
    ("reply", "n", "found"),
    [
        ("[1] 7\n[2] 3", 2, {0: 7.0, 1: 3.0}),
        ("[1]: 7/10\n[2] - 3", 2, {0: 7.0, 1: 3.0}),
        ("1: 7\n2. 3.5", 2, {0: 7.0, 1: 3.5}),
        ("Document #2: score: 4; document #1: score 6", 2, {0: 6.0, 1: 4.0}),
        ('{"1": 7, "2": 3}', 2, {0: 7.0, 1: 3.0}),
        ("7\n3.5\n", 2, {0: 7.0, 1: 3.5}),          # bare numbers, exactly n of them
        ("Scores: 7, 3.", 2, {0: 7.0, 1: 3.0}),
        ("7 3 9", 2, {}),                           # bare numbers, but not n of them
        ("[3] 5", 2, {}),                           # index out of range; not read as bare numbers
        ("[1] 85\n[1] 2", 1, {0: 10.0}),            # clipped; the first rating wins
        ("<think>[1] 1</think>[1] 8", 1, {0: 8.0}),
        ("nothing useful", 2, {}),
    ],
)
def test_parse_scores_is_lenient_but_not_credulous(reply: str, n: int, found: dict[int, float]) -> None:
    assert parse_scores(reply, n) == found


def test_registry_needs_a_chat_model() -> None:
    with FakeOpenAIServer() as server:
        chat = OpenAIChatModel(server.base_url, "fake-chat")
        reranker = make_reranker(RerankerSpec(provider="llm", chat=chat, batch_size=4))
        assert isinstance(reranker, LLMReranker) and reranker.batch_size == 4
    with pytest.raises(ConfigError, match="chat model"):
        make_reranker(RerankerSpec(provider="llm"))
