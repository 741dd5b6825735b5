"""The chat-model extraction methods over the real OpenAI wire protocol (a test server on loopback)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from ragloom.errors import ModelError, TaskCancelledError
from ragloom.knowledge.graph import (
    EXTRACTION_METHODS,
    Extractor,
    LlmExtractor,
    LlmRunner,
    MemoryLlmCache,
    estimate_cost,
    llm_cache_key,
    make_extractor,
)
from ragloom.knowledge.graph.describe import DescriptionPolicy
from ragloom.knowledge.graph.prompts import COMPLETION_DELIMITER, extraction_prompt
from ragloom.knowledge.graph.records import parse_records
from ragloom.models.chat import OpenAIChatModel
from ragloom.nlp import Analyzer
from tests.fakes.openai_server import FakeOpenAIServer
from tests.knowledge.graph.texts import LABS, PUMPS, ScriptedExtractor

KNOWN = {
    "ACME CORPORATION": ("organization", "A manufacturer that builds the Orion Pump."),
    "ORION PUMP": ("category", "A pump built by Acme Corporation."),
    "KAPPA LABS": ("organization", "A laboratory that tests pumps."),
    "ANN BERG": ("person", "Director of Kappa Labs."),
    "DAYTON": ("geo", "City of the Acme plant."),
    "SEALS": ("equipment", "Parts of the pump replaced every two years."),
}
LINKS = [
    ("ACME CORPORATION", "ORION PUMP", "Acme Corporation builds the Orion Pump.", "manufacturing, product", 9),
    ("KAPPA LABS", "ORION PUMP", "Kappa Labs tests every Orion Pump.", "testing, quality", 8),
    ("ANN BERG", "KAPPA LABS", "Ann Berg directs Kappa Labs.", "leadership", 7),
    ("ANN BERG", "DAYTON", "no relationship stated", "", 1),
]
JUNK = ["this line is not a record", '("entity"<|>ONLY A NAME)', '("relationship"<|>ACME CORPORATION)',
        '("weather"<|>SUNNY<|>today<|>nice)', "```",
        '("relationship"<|>ACME CORPORATION<|>NOBODY<|>Acme knows nobody.<|>none<|>2)']


def scripted(**kwargs: Any) -> ScriptedExtractor:
    return ScriptedExtractor(dict(KNOWN), list(LINKS), junk=list(JUNK), **kwargs)


def test_records_are_read_robustly() -> None:
    reply = ('("entity"<|>"Acme Corp."<|>Organization<|>A maker of pumps (and seals))##\n'
             '("relationship"<|>acme corp<|>Orion Pump<|>builds it<|>make, build<|>8)##'
             '("relationship"<|>Acme Corp<|>Kappa Labs<|>works with<|>3.5)\n'
             '("relationship"<|>A<|>B<|>no number at the end)\n'
             '("content_keywords"<|>pumps, testing)##\n'
             'garbage here##("entity"<|>X)\n```\n' + COMPLETION_DELIMITER)
    records = parse_records(reply)
    assert [(e.name, e.type, e.description) for e in records.entities] == [
        ("ACME CORP", "ORGANIZATION", "A maker of pumps (and seals)")]
    assert [(r.source, r.target, r.keywords, r.weight) for r in records.relations] == [
        ("ACME CORP", "ORION PUMP", ["make", "build"], 8.0),
        ("ACME CORP", "KAPPA LABS", [], 3.5),
        ("A", "B", [], 1.0)]
    assert records.bad == 2 and records.total == 6


def test_light_extraction_reads_records_and_skips_bad_lines(server: FakeOpenAIServer,
                                                            chat: OpenAIChatModel) -> None:
    model = scripted()
    server.responder = model
    sg = LlmExtractor(chat, method="light").extract(PUMPS)
    assert model.seen == {"extract": 1, "glean": 0, "loop": 0, "other": 0}  # one batch, no gleaning
    assert {e.name: e.type for e in sg.entities} == {
        "ACME CORPORATION": "ORGANIZATION", "ORION PUMP": "CATEGORY", "KAPPA LABS": "ORGANIZATION",
        "ANN BERG": "PERSON", "DAYTON": "GEO", "SEALS": "EQUIPMENT"}  # light keeps every type
    assert sg.stats.bad_records == 4  # the code fence is not counted
    assert sg.stats.dropped_relations == 2  # "no relationship" and an unknown endpoint
    rel = sg.relation("Orion Pump", "Kappa Labs")
    assert rel is not None and rel.keywords == ["testing", "quality"] and rel.weight == 8
    assert rel.source_chunk_ids == ["a2"]  # the one chunk of the batch naming both
    acme = sg.entity("Acme Corporation")
    assert acme is not None and acme.source_chunk_ids == ["a1", "a2", "a3"] and acme.doc_ids == ["doc-a"]
    prompt = server.requests[-1].body["messages"][0]["content"]
    assert "<|>" in prompt and "##" in prompt and COMPLETION_DELIMITER in prompt and "keywords" in prompt
    assert sg.stats.llm_calls == 1 and sg.method == "light"


def test_general_gleans_and_keeps_only_its_entity_types(server: FakeOpenAIServer, chat: OpenAIChatModel) -> None:
    model = scripted(held_back={"DAYTON"}, light=False, more="Y")
    server.responder = model
    sg = make_extractor("general", chat=chat).extract(PUMPS)
    # extract, glean, "more?" Y, glean again (the last round asks no more)
    assert model.seen == {"extract": 1, "glean": 2, "loop": 1, "other": 0}
    assert sg.stats.gleaning_rounds == 2 and sg.stats.llm_calls == 4
    assert "DAYTON" in {e.name for e in sg.entities}  # found by gleaning only
    assert "SEALS" not in {e.name for e in sg.entities}  # "equipment" is not a default type
    assert sg.stats.dropped_entities == 1
    dayton = sg.entity("Dayton")
    assert dayton is not None and dayton.weight == 2  # both gleaning rounds wrote it
    assert sg.relation("ACME CORPORATION", "ORION PUMP").keywords == []  # type: ignore[union-attr]
    conversation = server.requests[-1].body["messages"]
    assert [m["role"] for m in conversation] == ["user", "assistant", "user", "assistant", "user", "assistant",
                                                 "user"]


def test_gleaning_stops_when_the_model_says_nothing_is_missing(server: FakeOpenAIServer,
                                                               chat: OpenAIChatModel) -> None:
    model = scripted(more="N.", light=False)
    server.responder = model
    sg = LlmExtractor(chat, method="general", max_gleanings=3).extract(PUMPS)
    assert model.seen == {"extract": 1, "glean": 1, "loop": 1, "other": 0}
    assert sg.stats.gleaning_rounds == 1


def test_batches_keep_chunks_whole_and_rerun_is_free(server: FakeOpenAIServer, chat: OpenAIChatModel) -> None:
    model = scripted()
    server.responder = model
    cache = MemoryLlmCache()
    first = LlmExtractor(chat, method="light", cache=cache, batch_tokens=30).extract(PUMPS)
    assert first.stats.batches == 3 and first.stats.llm_calls == 3
    sent = len(server.requests)
    # a re-run with the same cache (e.g. restored from its JSON) asks the model nothing
    again = LlmExtractor(chat, method="light", cache=MemoryLlmCache.from_dict(cache.to_dict()),
                         batch_tokens=30).extract(PUMPS)
    assert len(server.requests) == sent
    assert again.stats.cache_hits == 3 and again.stats.llm_calls == 0
    assert again.entities == first.entities and again.relations == first.relations
    # three batches each naming Acme: its weight counts the records
    assert again.entity("ACME CORPORATION").weight == 3  # type: ignore[union-attr]


def test_cache_key_is_a_hash_of_model_and_prompt() -> None:
    messages = [{"role": "user", "content": "hi"}]
    key = llm_cache_key("m", messages)
    assert len(key) == 64 and key == llm_cache_key("m", [{"role": "user", "content": "hi"}])
    assert key != llm_cache_key("m2", messages) and key != llm_cache_key("m", [{"role": "user", "content": "ho"}])


def test_calls_run_in_parallel_within_the_bound(server: FakeOpenAIServer, chat: OpenAIChatModel) -> None:
    model = scripted()
    lock = threading.Lock()
    state = {"now": 0, "most": 0}

    def slow(body: dict[str, Any]) -> str:
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        time.sleep(0.15)
        with lock:
            state["now"] -= 1
        return model(body)

    server.responder = slow
    chunks = [(f"x{i}", "doc-x", f"Kappa Labs tests the Orion Pump, report {i}.") for i in range(6)]
    sg = LlmExtractor(chat, method="light", max_workers=2, batch_tokens=12).extract(chunks)
    assert sg.stats.batches == 6
    assert state["most"] == 2
    assert sg.relation("KAPPA LABS", "ORION PUMP").weight == 6 * 8  # type: ignore[union-attr]
    assert sg.relation("KAPPA LABS", "ORION PUMP").source_chunk_ids == [c[0] for c in chunks]  # type: ignore[union-attr]


def test_a_failing_call_is_retried_then_reported(server: FakeOpenAIServer, chat: OpenAIChatModel) -> None:
    server.responder = scripted()
    runner = LlmRunner(chat, backoff=0.0, retries=1)
    server.fail_next(500)
    sg = LlmExtractor(method="light", runner=runner).extract(PUMPS)
    assert runner.usage.retries == 1 and sg.entities
    server.fail_next(500)
    server.fail_next(503)
    with pytest.raises(ModelError):
        LlmExtractor(method="light", runner=runner).extract(LABS)


def test_progress_can_cancel_the_extraction(server: FakeOpenAIServer, chat: OpenAIChatModel) -> None:
    server.responder = scripted()
    seen: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        seen.append((done, total))
        raise TaskCancelledError("stopped by the user")

    with pytest.raises(TaskCancelledError):
        LlmExtractor(chat, method="light", max_workers=1, batch_tokens=30).extract(PUMPS, progress=progress)
    assert seen == [(1, 3)] and len(server.requests) == 1


def test_long_descriptions_are_summarised_by_the_model(server: FakeOpenAIServer, chat: OpenAIChatModel) -> None:
    model = scripted()

    def respond(body: dict[str, Any]) -> str:
        last = body["messages"][-1]["content"]
        if "Several descriptions of the same" in last:
            return "Acme Corporation makes and sells pumps."
        return model(body).replace("A manufacturer that builds the Orion Pump.", "Maker {n}.")

    counter = iter(range(100))
    server.responder = lambda body: respond(body).replace("{n}", str(next(counter)))
    chunks = [(f"x{i}", "doc-x", f"Acme Corporation, note {i}.") for i in range(3)]
    policy = DescriptionPolicy(max_fragments=2)
    sg = LlmExtractor(chat, method="light", batch_tokens=5, descriptions=policy).extract(chunks)
    acme = sg.entity("ACME CORPORATION")
    assert acme is not None and acme.description == "Acme Corporation makes and sells pumps."
    assert sg.stats.summaries == 1
    short = LlmExtractor(chat, method="light", batch_tokens=5).extract(chunks[:2])
    assert short.entity("ACME CORPORATION").description.count("\n") == 1  # type: ignore[union-attr]


def test_cost_estimate_counts_batches_calls_and_tokens() -> None:
    def words(text: str) -> int:
        return len(text.split())

    chunks = [(f"x{i}", "d", "word " * 40) for i in range(5)]
    light = estimate_cost(chunks, method="light", batch_tokens=100, count_tokens=words)
    assert (light.batches, light.min_calls, light.max_calls) == (3, 3, 3)
    overhead = words(extraction_prompt("", method="light", entity_types=None, language="English"))
    assert light.max_prompt_tokens == 3 * overhead + 200
    general = estimate_cost(chunks, method="general", batch_tokens=100, count_tokens=words)
    assert (general.batches, general.min_calls, general.max_calls) == (3, 9, 12)
    assert estimate_cost(chunks, method="offline").max_calls == 0
    assert (light + general).max_calls == 15


def test_an_llm_method_needs_a_model() -> None:
    with pytest.raises(ValueError, match="chat model"):
        LlmExtractor(method="light")
    with pytest.raises(ValueError, match="unknown"):
        make_extractor("ner")


@pytest.mark.parametrize("method", EXTRACTION_METHODS)
def test_every_method_keeps_the_extractor_contract(method: str, server: FakeOpenAIServer, chat: OpenAIChatModel,
                                                   analyzer: Analyzer) -> None:
    server.responder = scripted()
    extractor = make_extractor(method, chat=chat, analyzer=analyzer)
    assert isinstance(extractor, Extractor) and extractor.method == method
    with pytest.raises(ValueError, match="one document"):
        extractor.extract(PUMPS + LABS)
    empty = extractor.extract([])
    assert empty.doc_id == "" and not empty.entities and not empty.relations
    sg = extractor.extract(PUMPS)
    assert sg.doc_id == "doc-a" and sg.method == method and sg.stats.chunks == 3
    keys = [e.key for e in sg.entities]
    assert len(keys) == len(set(keys)) and "orion pump" in keys
    assert all(set(r.pair) <= set(keys) for r in sg.relations)
    assert {c for e in sg.entities for c in e.source_chunk_ids} <= {"a1", "a2", "a3"}
    assert extractor.extract(PUMPS).to_dict()["entities"] == sg.to_dict()["entities"]
