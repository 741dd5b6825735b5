"""Chunk enrichment's replies read as keywords, questions and metadata, and its calls cached, against
a real OpenAI-compatible server on loopback (tests/fakes/openai_server.py)."""

from __future__ import annotations

from typing import Any

from ragloom.knowledge.enrich import (
    Enricher,
    EnrichSettings,
    parse_keywords,
    parse_metadata,
    parse_questions,
)
from ragloom.models.chat import OpenAIChatModel
from tests.fakes.openai_server import FakeOpenAIServer


def test_keywords_are_read_from_the_shapes_models_answer_in() -> None:
    assert parse_keywords("pump, impeller, seal", 5) == ["pump", "impeller", "seal"]
    assert parse_keywords("Keywords: Pump; pump; 'copper filter'\n- signal lamp", 5) == [
        "Pump", "copper filter", "signal lamp"]
    assert parse_keywords("```\n1. 水泵\n2. 叶轮、密封圈\n```", 2) == ["水泵", "叶轮"]
    assert parse_keywords("关键词：年假，病假", 5) == ["年假", "病假"]
    assert parse_keywords("", 3) == []


def test_questions_are_read_one_a_line_without_markers_or_headers() -> None:
    reply = "Here are the questions:\n1. How often is the pump serviced?\n2) Who services the pump\n- ok\n"
    assert parse_questions(reply, 5) == ["How often is the pump serviced?", "Who services the pump"]
    assert parse_questions("问题1：水泵多久保养一次？\n问题2：谁负责保养水泵？", 1) == ["水泵多久保养一次？"]


def test_metadata_keeps_only_the_asked_fields_with_usable_values() -> None:
    fields = {"author": "who wrote it", "year": "year written", "topics": "subjects"}
    reply = 'Sure! ```json\n{"author": "Ada Lovelace", "year": 1843, "topics": ["engines", 7], "extra": "x", ' \
            '"empty": ""}\n```'
    assert parse_metadata(reply, fields) == {"author": "Ada Lovelace", "year": 1843, "topics": ["engines", "7"]}
    assert parse_metadata("no json here", fields) == {}
    assert parse_metadata('{"author": null}', fields) == {}


def _responder(body: dict[str, Any]) -> str:
    prompt = body["messages"][-1]["content"]
    if "keywords" in prompt:
        return "harbor pump, copper filter, signal lamp, extra one"
    if "questions" in prompt:
        return "1. When is the copper filter replaced?\n2. What does the signal lamp show?"
    return '{"author": "Harbor crew", "year": 2024}'


def test_an_enricher_reads_each_reply_and_counts_the_unreadable() -> None:
    texts = ["Replace the copper filter when the signal lamp is red.", "The harbor pump runs all night.", "  "]
    settings = EnrichSettings.of({"auto_keywords": 3, "auto_questions": 2,
                                  "metadata_fields": {"author": "who wrote it", "year": "year"}})
    with FakeOpenAIServer(responder=_responder) as server:
        enricher = Enricher(OpenAIChatModel(server.base_url, "fake-chat"))
        out = enricher.chunks(texts, settings)
        meta = enricher.metadata("\n".join(texts), settings.metadata_fields)
        assert out[0] == (["harbor pump", "copper filter", "signal lamp"],
                          ["When is the copper filter replaced?", "What does the signal lamp show?"])
        assert out[2] == ([], [])  # a blank text costs no call
        assert meta == {"author": "Harbor crew", "year": 2024}
        assert len(server.requests) == 5 and enricher.unreadable == 0
        server.queue_reply("")  # an empty reply gives nothing, counted
        assert enricher.keywords("Some text", 3) == [] and enricher.unreadable == 1
