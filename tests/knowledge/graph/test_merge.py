"""Merging per-document subgraphs into a knowledge base's graph, and taking them out again."""

from __future__ import annotations

import json

import pytest

from ragloom.knowledge.graph import (
    DescriptionPolicy,
    Entity,
    Graph,
    LlmRunner,
    OfflineExtractor,
    Relation,
    Subgraph,
    summarize_long_descriptions,
)
from ragloom.models.chat import OpenAIChatModel
from ragloom.nlp import Analyzer
from tests.fakes.openai_server import FakeOpenAIServer
from tests.knowledge.graph.texts import ENGINES, LABS, PUMPS


@pytest.fixture(scope="module")
def subgraphs(analyzer: Analyzer) -> dict[str, Subgraph]:
    ex = OfflineExtractor(analyzer)
    return {"a": ex.extract(PUMPS), "b": ex.extract(LABS), "c": ex.extract(ENGINES)}


def state(graph: Graph) -> tuple[dict[str, dict[str, object]], dict[str, dict[str, object]]]:
    return ({k: e.to_dict() for k, e in graph.entities.items()},
            {f"{a}|{b}": r.to_dict() for (a, b), r in graph.relations.items()})


def test_shared_entities_merge_their_sources(subgraphs: dict[str, Subgraph]) -> None:
    graph = Graph.from_subgraphs(subgraphs.values())
    kappa = graph.entity("kappa labs")
    assert kappa is not None
    assert kappa.doc_ids == ["doc-a", "doc-b"]
    assert kappa.source_chunk_ids == ["a2", "b1"]
    assert kappa.weight == 2 + 2
    assert kappa.description.splitlines()[0] == "Kappa Labs tests every Orion Pump before it ships."
    assert len(kappa.description.splitlines()) == 4  # two quotes from each document
    orion = graph.relation("Orion Pump", "Kappa Labs")
    assert orion is not None and orion.doc_ids == ["doc-a", "doc-b"] and orion.weight == 2
    assert graph.entity("Vega Engine").doc_ids == ["doc-c"]  # type: ignore[union-attr]
    assert graph.doc_ids == ["doc-a", "doc-b", "doc-c"]


def test_removing_a_document_removes_its_contribution(subgraphs: dict[str, Subgraph]) -> None:
    graph = Graph.from_subgraphs(subgraphs.values())
    change = graph.remove("doc-b")
    assert graph.entity("Oslo") is None and graph.entity("Lars Holm") is None  # only doc-b named them
    assert "oslo" in change.removed and "kappa labs" in change.updated
    kappa = graph.entity("Kappa Labs")
    assert kappa is not None and kappa.doc_ids == ["doc-a"] and kappa.source_chunk_ids == ["a2"]
    assert kappa.weight == 2 and "Oslo" not in kappa.description
    assert graph.relation("Kappa Labs", "Oslo") is None
    orion = graph.relation("Orion Pump", "Kappa Labs")
    assert orion is not None and orion.weight == 1 and orion.doc_ids == ["doc-a"]
    assert graph.relation("Ann Berg", "Lars Holm") is None
    assert change.relations_removed > 0
    # the same as never having merged doc-b
    assert state(graph) == state(Graph.from_subgraphs([subgraphs["a"], subgraphs["c"]]))
    assert graph.remove("doc-b").touched == []  # removing twice changes nothing


def test_merge_order_does_not_matter(subgraphs: dict[str, Subgraph]) -> None:
    one = Graph.from_subgraphs([subgraphs["a"], subgraphs["b"], subgraphs["c"]])
    two = Graph.from_subgraphs([subgraphs["c"], subgraphs["b"], subgraphs["a"]])
    assert state(one) == state(two)
    assert json.dumps(one.to_dict()) == json.dumps(two.to_dict())


def test_a_new_version_replaces_the_document(analyzer: Analyzer, subgraphs: dict[str, Subgraph]) -> None:
    graph = Graph.from_subgraphs(subgraphs.values())
    reparsed = OfflineExtractor(analyzer).extract([("a9", "doc-a", "Acme Corporation now sells the Vega Engine.")])
    change = graph.merge(reparsed)
    assert graph.entity("Dayton") is None  # gone with the old version
    assert graph.entity("Ann Berg").doc_ids == ["doc-b"]  # type: ignore[union-attr]
    assert graph.entity("Acme Corporation").source_chunk_ids == ["a9"]  # type: ignore[union-attr]
    assert graph.relation("Acme Corporation", "Vega Engine") is not None
    assert "dayton" in change.removed and "vega engine" in change.updated
    assert graph.pagerank_stale


def test_json_round_trip_keeps_everything(subgraphs: dict[str, Subgraph]) -> None:
    graph = Graph.from_subgraphs(subgraphs.values())
    graph.add_aliases({"lars holm": "ann berg"})
    graph.set_pagerank({k: 0.5 for k in graph.entities})
    again = Graph.from_dict(json.loads(json.dumps(graph.to_dict())))
    assert state(again) == state(graph)
    assert again.aliases == {"lars holm": "ann berg"} and not again.pagerank_stale
    assert again.remove("doc-b").removed  # removal still works after loading


def test_relations_need_both_ends_and_types_follow_weight() -> None:
    one = Subgraph("d1", entities=[Entity("Acme", "ENTITY", "a maker", ["c1"], ["d1"], 1.0),
                                   Entity("Orion", "PRODUCT", "a pump", ["c1"], ["d1"], 1.0)],
                   relations=[Relation("Acme", "Orion", "makes", ["make"], 2.0, ["c1"], ["d1"]),
                              Relation("Acme", "Ghost", "haunts", [], 1.0, ["c1"], ["d1"])])
    two = Subgraph("d2", entities=[Entity("ACME", "ORGANIZATION", "a maker", ["c2"], ["d2"], 1.0),
                                   Entity("Orion", "PRODUCT", "a pump", ["c2"], ["d2"], 3.0)],
                   relations=[Relation("ACME", "Orion", "sells", ["sell", "make"], 1.0, ["c2"], ["d2"])])
    graph = Graph.from_subgraphs([two, one])
    acme = graph.entity("acme")
    assert acme is not None and acme.name == "Acme" and acme.type == "ORGANIZATION"  # a tie: first document's name
    assert acme.description == "a maker" and acme.source_chunk_ids == ["c1", "c2"]
    rel = graph.relation("Orion", "Acme")
    assert rel is not None and rel.description == "makes\nsells" and rel.keywords == ["make", "sell"]
    assert rel.weight == 3 and len(graph.relations) == 1  # the ghost relation was never merged
    assert [k for k, _ in graph.neighbours("orion")] == ["acme"] and graph.degree("acme") == 1


def test_long_merged_descriptions_are_summarised(subgraphs: dict[str, Subgraph], server: FakeOpenAIServer,
                                                 chat: OpenAIChatModel) -> None:
    server.default_reply = "A summary."
    graph = Graph.from_subgraphs(subgraphs.values())
    joined = graph.entity("Kappa Labs").description  # type: ignore[union-attr]
    done = summarize_long_descriptions(graph, LlmRunner(chat), DescriptionPolicy(max_fragments=3))
    assert done == len(server.requests) >= 1
    assert graph.entity("Kappa Labs").description == "A summary."  # type: ignore[union-attr]
    assert graph.entity("Vega Engine").description.startswith("The Vega Engine")  # type: ignore[union-attr]
    prompt = server.requests[0].body["messages"][0]["content"]
    assert "- Kappa Labs tests every Orion Pump before it ships." in prompt
    again = Graph.from_dict(json.loads(json.dumps(graph.to_dict())))
    assert again.entity("Kappa Labs").description == "A summary."  # type: ignore[union-attr]
    graph.remove("doc-b")  # other descriptions now: the summary no longer applies
    assert graph.entity("Kappa Labs").description == "\n".join(joined.split("\n")[:2])  # type: ignore[union-attr]
    graph.merge(subgraphs["b"])
    assert graph.entity("Kappa Labs").description == "A summary."  # type: ignore[union-attr]
