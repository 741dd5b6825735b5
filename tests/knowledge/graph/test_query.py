"""Graph evidence for a question: entities, relations, n-hop paths and a community report in one block."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from ragloom.knowledge.graph import (
    Community,
    Entity,
    Graph,
    GraphIndex,
    LlmRunner,
    OfflineExtractor,
    Relation,
    Subgraph,
    build_communities,
    compute_pagerank,
    graph_evidence,
    n_hop_paths,
    resolve_entities,
)
from ragloom.knowledge.graph.text import rough_tokens
from ragloom.models.chat import OpenAIChatModel
from ragloom.nlp import Analyzer
from tests.fakes.openai_server import FakeOpenAIServer
from tests.knowledge.graph.texts import ENGINES, HUAWEI, LABS, PUMPS


@pytest.fixture(scope="module")
def built(analyzer: Analyzer) -> tuple[Graph, list[Community], GraphIndex]:
    ex = OfflineExtractor(analyzer)
    graph = Graph.from_subgraphs([ex.extract(PUMPS), ex.extract(LABS), ex.extract(ENGINES), ex.extract(HUAWEI)])
    resolve_entities(graph)
    compute_pagerank(graph)
    communities, _ = build_communities(graph)
    return graph, communities, GraphIndex(graph, analyzer)


def chain(analyzer: Analyzer, **kwargs: Any) -> GraphIndex:
    """Alpha Works — Beta Station — Gamma Port — Delta Bay, one relation each."""
    names = ["Alpha Works", "Beta Station", "Gamma Port", "Delta Bay"]
    entities = [Entity(n, "ENTITY", f"{n} is a place.", [f"c{i}"], ["d"], 1.0) for i, n in enumerate(names)]
    relations = [Relation(a, b, f"{a} ships to {b}.", ["shipping"], 1.0, [f"r{i}"], ["d"])
                 for i, (a, b) in enumerate(zip(names, names[1:], strict=False))]
    return GraphIndex(Graph.from_subgraphs([Subgraph("d", entities, relations)]), analyzer, **kwargs)


def test_evidence_names_entities_relations_and_the_community(built: tuple[Graph, list[Community], GraphIndex]
                                                             ) -> None:
    graph, communities, index = built
    ev = graph_evidence("Who tests the Orion Pump?", index, communities)
    first = ev.entities[0]
    assert (first.entity.name, first.similarity, first.how) == ("Orion Pump", 1.0, "name")
    assert "Kappa Labs" in [e.entity.name for e in ev.entities]
    top = ev.relations[0].relation
    assert (top.source, top.target) == ("Kappa Labs", "Orion Pump") and ev.relations[0].hop == 0
    lines = ev.text.splitlines()
    assert lines[0] == "Knowledge graph evidence" and lines[1] == "Entities:"
    assert lines[2].startswith("- Orion Pump (ENTITY): Acme Corporation builds the Orion Pump")
    assert "- Kappa Labs — Orion Pump: Kappa Labs tests every Orion Pump before it ships." in ev.text
    assert lines.index("Entities:") < lines.index("Relations:") < lines.index("Paths:")
    assert ev.community is not None and "Orion Pump" in ev.community.entities
    assert f"Community: {ev.community.title}" in lines
    assert "Vega Engine" not in ev.text and "深圳" not in ev.text
    assert "a2" in ev.chunk_ids and set(ev.doc_ids) == {"doc-a", "doc-b"}
    cited = {c for e in ev.entities for c in e.entity.source_chunk_ids}
    cited |= {c for r in ev.relations for c in r.relation.source_chunk_ids}
    assert set(ev.chunk_ids) <= cited
    assert ev.tokens == rough_tokens(ev.text) and ev.tokens <= 1200
    assert json.loads(json.dumps(ev.to_dict()))["entities"][0]["name"] == "Orion Pump"


def test_n_hop_paths_reach_beyond_the_question(analyzer: Analyzer) -> None:
    index = chain(analyzer)
    two = graph_evidence("Where does Alpha Works ship?", index, hops=2)
    assert [e.entity.name for e in two.entities][:3] == ["Alpha Works", "Beta Station", "Gamma Port"]
    assert [(r.relation.source, r.relation.target, r.hop) for r in two.relations] == [
        ("Alpha Works", "Beta Station", 0), ("Beta Station", "Gamma Port", 1)]
    assert two.paths == [["Alpha Works", "Beta Station", "Gamma Port"]]
    assert "- Alpha Works → Beta Station → Gamma Port" in two.text
    assert "Delta Bay" not in two.text  # three hops away
    one = graph_evidence("Where does Alpha Works ship?", index, hops=1)
    assert [r.relation.target for r in one.relations] == ["Beta Station"] and one.paths == []
    three = graph_evidence("Where does Alpha Works ship?", index, hops=3)
    assert ["Alpha Works", "Beta Station", "Gamma Port", "Delta Bay"] in three.paths
    paths = n_hop_paths(index.graph, "beta station", hops=2)
    assert [p.names(index.graph) for p in paths] == [
        ["Beta Station", "Alpha Works"], ["Beta Station", "Gamma Port"], ["Beta Station", "Gamma Port", "Delta Bay"]]


def test_the_budget_is_kept(built: tuple[Graph, list[Community], GraphIndex]) -> None:
    graph, communities, index = built
    full = graph_evidence("Who tests the Orion Pump?", index, communities)
    small = graph_evidence("Who tests the Orion Pump?", index, communities, max_tokens=150)
    assert 0 < small.tokens <= 150 < full.tokens
    assert small.text.startswith("Knowledge graph evidence\nEntities:\n- Orion Pump")
    assert set(small.chunk_ids) <= set(full.chunk_ids)


def test_nothing_found_gives_empty_evidence(built: tuple[Graph, list[Community], GraphIndex]) -> None:
    _, communities, index = built
    ev = graph_evidence("What is the weather like today?", index, communities)
    assert ev.is_empty and ev.text == "" and ev.chunk_ids == [] and ev.community is None


def test_chinese_question(built: tuple[Graph, list[Community], GraphIndex]) -> None:
    _, communities, index = built
    ev = graph_evidence("任正非在哪里工作？", index, communities)
    assert (ev.entities[0].entity.name, ev.entities[0].how) == ("任正非", "name")
    pairs = {(r.relation.source, r.relation.target) for r in ev.relations}
    assert ("任正非", "深圳") in pairs
    assert ev.community is not None and "任正非" in ev.community.entities
    assert set(ev.doc_ids) == {"doc-z"}


def test_aliases_match_too(analyzer: Analyzer) -> None:
    graph = Graph.from_subgraphs([
        Subgraph("d1", [Entity("International Business Machines", "ORGANIZATION", "A computer maker.", ["c1"],
                               ["d1"], 3.0)]),
        Subgraph("d2", [Entity("IBM", "ORGANIZATION", "Known as Big Blue.", ["c2"], ["d2"], 1.0)])])
    resolve_entities(graph)
    ev = graph_evidence("What does IBM make?", GraphIndex(graph, analyzer))
    assert [(e.entity.name, e.how, e.similarity) for e in ev.entities] == [
        ("International Business Machines", "alias", 0.95)]
    assert ev.chunk_ids == ["c1", "c2"]


def toy_embed(texts: Sequence[str]) -> np.ndarray:
    """Three topics by words: propulsion is about engines, goods about freight (what words alone miss)."""
    topics = [("pump", "seal"), ("engine", "motor", "propulsion"), ("freight", "cargo", "goods")]
    rows = []
    for t in texts:
        low = t.lower()
        v = [float(sum(low.count(w) for w in words)) for words in topics]
        v.append(0.0 if any(v) else 1.0)  # no topic: a direction of its own
        rows.append(np.array(v, dtype=np.float32) / np.linalg.norm(v))
    return np.stack(rows)


def test_vectors_find_entities_the_words_miss(built: tuple[Graph, list[Community], GraphIndex],
                                              analyzer: Analyzer) -> None:
    graph, communities, lexical = built
    question = "Which company purchases propulsion units for its goods?"
    assert graph_evidence(question, lexical, communities).is_empty
    index = GraphIndex(graph, analyzer, embed=toy_embed)
    ev = graph_evidence(question, index, communities, min_similarity=0.3)
    assert {e.entity.name for e in ev.entities[:3]} == {"Vega Engine", "Nordic Motors", "Polar Freight"}
    assert ev.entities[0].how == "vector"
    precomputed = {k: toy_embed([graph.entities[k].name])[0] for k in graph.entities}
    again = graph_evidence(question, GraphIndex(graph, analyzer, entity_vectors=precomputed,
                                                embed_query=toy_embed), communities)
    assert again.entities[0].entity.name in {"Vega Engine", "Nordic Motors", "Polar Freight"}


def test_the_chat_model_can_name_the_question_entities(built: tuple[Graph, list[Community], GraphIndex],
                                                       server: FakeOpenAIServer, chat: OpenAIChatModel) -> None:
    _, communities, index = built
    server.default_reply = "- Orion Pump\n- Something Unknown"
    ev = graph_evidence("Who checks the device before shipping?", index, communities, runner=LlmRunner(chat))
    assert (ev.entities[0].entity.name, ev.entities[0].how) == ("Orion Pump", "llm")
    assert "entities" in server.requests[-1].body["messages"][0]["content"]
