"""The chat model's table of contents, over the real OpenAI wire protocol (a test server on loopback)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from ragloom.errors import ModelError
from ragloom.knowledge.toc_llm import build_toc_with_llm, make_batches, parse_json_reply
from ragloom.models.chat import OpenAIChatModel
from tests.fakes.openai_server import FakeOpenAIServer


def words(text: str) -> int:
    return len(text.split())


def script_toc(titles: dict[str, str], levels: dict[str, int]):  # type: ignore[no-untyped-def]
    """A responder that reads the chunks of a TOC prompt and names the title of each chunk whose text
    holds a key of ``titles`` ("-1" for the others); for a levels prompt, levels by title."""

    def respond(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        if "### chunk" in prompt:
            answer = []
            for idx, text in re.findall(r"### chunk (\d+)\n(.*?)(?=\n\n### chunk|\n\nReply with)", prompt, re.S):
                title = next((t for key, t in titles.items() if key in text), "-1")
                answer.append({"chunk_id": idx, "title": title})
            return json.dumps(answer)
        listing = re.findall(r"^(\d+)\. (.+)$", prompt, re.M)
        return json.dumps([{"index": int(i), "level": levels.get(t, 1)} for i, t in listing])

    return respond


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture
def chat(server: FakeOpenAIServer) -> OpenAIChatModel:
    return OpenAIChatModel(server.base_url, "fake-chat")


CHUNKS = [
    ("c0", "Pump manual. This guide covers the Orion pump."),
    ("c1", "Installation. Bolt the pump to a level floor."),
    ("c2", "Keep the inlet free of debris during installation."),
    ("c3", "Electrical connection. Use a 16 A fuse."),
    ("c4", "12"),
    ("c5", "Maintenance. Grease the bearings every 450 hours."),
    ("c6", "Replace the seals every two years."),
]
TITLES = {"Pump manual": "Pump manual", "Bolt the pump": "Installation", "16 A fuse": "Electrical connection",
          "12": "12", "Grease": "Maintenance",
          "seals": " ".join(["Replacing the seals of the pump housing when they have worn out"] * 3)}  # 33 words
LEVELS = {"Pump manual": 1, "Installation": 2, "Electrical connection": 3, "Maintenance": 2}


def test_batches_keep_chunks_whole_and_in_order() -> None:
    texts = ["a b c", "d e", "f g h i j k l m", "n", "o p"]
    batches = make_batches(texts, words, budget=5)
    assert batches == [[0, 1], [2], [3, 4]]  # the 8-word chunk is over the budget: alone, never split
    assert [i for b in batches for i in b] == list(range(len(texts)))


@pytest.mark.parametrize(("reply", "expected"), [
    ('[{"chunk_id": "0", "title": "A"}]', [{"chunk_id": "0", "title": "A"}]),
    ('Sure! Here it is:\n```json\n[{"chunk_id": 1, "title": "B"},]\n```', [{"chunk_id": 1, "title": "B"}]),
    ("[{'chunk_id': '2', 'title': 'C'}]", [{"chunk_id": "2", "title": "C"}]),
    ('{"index": 0, "level": 2}', {"index": 0, "level": 2}),
    ("I cannot help with that.", None),
    ('[{"chunk_id": "0", "title": ', None),
])
def test_json_replies_are_repaired_or_refused(reply: str, expected: object) -> None:
    assert parse_json_reply(reply) == expected


def test_titles_and_levels_become_entries(server: FakeOpenAIServer, chat: OpenAIChatModel) -> None:
    server.responder = script_toc(TITLES, LEVELS)
    built = build_toc_with_llm(chat, CHUNKS, words, budget=20)
    assert built.batches > 1 and built.skipped_batches == 0
    assert [(e.level, e.title, e.ids) for e in built.entries] == [
        (1, "Pump manual", ("c0",)),
        (2, "Installation", ("c1", "c2")),  # its chunk through the chunk before the next entry
        (3, "Electrical connection", ("c3", "c4")),  # "12" (numeric only) is no title
        (2, "Maintenance", ("c5", "c6")),  # the 33-word title of c6 is over 22 tokens: no entry
    ]
    assert built.dropped_titles == 2  # "12" and the over-long title
    assert "4 entries" in built.note


def test_an_unreadable_batch_is_skipped_and_unreadable_levels_are_flat(server: FakeOpenAIServer,
                                                                       chat: OpenAIChatModel) -> None:
    budget = 12
    batches = make_batches([t for _, t in CHUNKS], words, budget)
    assert len(batches) >= 3
    server.queue_reply("I'm sorry, I can't produce JSON today.")  # batch 1: garbage
    server.queue_reply(*[  # the other batches: fenced, with trailing commas
        "```json\n" + json.dumps([{"chunk_id": str(i), "title": TITLES.get("Grease") if i == 5 else "-1"}
                                  for i in b]).replace("}]", "},]") + "\n```"
        for b in batches[1:]
    ])
    server.queue_reply("level one, mostly")  # levels: unreadable -> flat
    built = build_toc_with_llm(chat, CHUNKS, words, budget=budget)
    assert built.skipped_batches == 1
    assert [(e.level, e.title, e.ids) for e in built.entries] == [(1, "Maintenance", ("c5", "c6"))]
    assert "1 of" in built.note and "batches skipped" in built.note and "kept flat" in built.note


def test_more_than_512_entries_drop_the_deepest_level(server: FakeOpenAIServer, chat: OpenAIChatModel) -> None:
    chunks = [(f"c{i}", f"Topic {i} text") for i in range(600)]
    server.responder = lambda body: (
        json.dumps([{"chunk_id": i, "title": f"Topic {i}"}
                    for i in re.findall(r"### chunk (\d+)", body["messages"][-1]["content"])])
        if "### chunk" in body["messages"][-1]["content"]
        else json.dumps([1 if int(n) % 10 == 0 else 2
                         for n in re.findall(r"^\d+\. Topic (\d+)$", body["messages"][-1]["content"], re.M)]))
    built = build_toc_with_llm(chat, chunks, words, budget=1024)
    assert len(built.entries) == 60 and {e.level for e in built.entries} == {1}
    assert built.entries[0].ids == tuple(f"c{i}" for i in range(10))


def test_an_unreachable_model_raises_model_error(chat: OpenAIChatModel, server: FakeOpenAIServer) -> None:
    server.fail_next(503)
    with pytest.raises(ModelError):
        build_toc_with_llm(chat, CHUNKS, words, budget=1024)
