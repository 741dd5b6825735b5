"""Entity resolution: which names are one entity, merged as aliases that outlive later changes."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from ragloom.knowledge.graph import (
    Entity,
    Graph,
    LlmRunner,
    Relation,
    Subgraph,
    find_candidates,
    resolve_entities,
)
from ragloom.knowledge.graph.resolution import acronym, initials, loose, singular, without_suffix
from ragloom.models.chat import OpenAIChatModel
from tests.fakes.openai_server import FakeOpenAIServer


def doc(doc_id: str, entities: list[tuple[str, str, float]], relations: list[tuple[str, str]] = ()) -> Subgraph:
    chunk = f"{doc_id}-c"
    return Subgraph(doc_id, entities=[Entity(n, t, f"{n} in {doc_id}", [chunk], [doc_id], w) for n, t, w in entities],
                    relations=[Relation(a, b, f"{a} and {b}", [], 1.0, [chunk], [doc_id]) for a, b in relations])


def assert_consistent(graph: Graph) -> None:
    """The incrementally kept graph equals one recomputed from what it stores."""
    again = Graph.from_dict(json.loads(json.dumps(graph.to_dict())))
    assert again.entities == graph.entities
    assert again.relations == graph.relations


@pytest.fixture
def graph() -> Graph:
    return Graph.from_subgraphs([
        doc("d1", [("Acme Inc", "ORGANIZATION", 3), ("Orion Pumps", "PRODUCT", 1), ("IBM", "ORGANIZATION", 2),
                   ("Model 3", "PRODUCT", 1), ("Bank of England", "ORGANIZATION", 1)],
            [("Acme Inc", "Orion Pumps"), ("Acme Inc", "IBM")]),
        doc("d2", [("ACME", "ORGANIZATION", 1), ("Orion Pump", "PRODUCT", 2), ("Model 5", "PRODUCT", 1),
                   ("International Business Machines", "ENTITY", 1), ("England", "GEO", 1),
                   ("Orion-Pump", "PRODUCT", 1)],
            [("ACME", "Orion Pump"), ("ACME", "International Business Machines")]),
        doc("d3", [("华为技术有限公司", "ORGANIZATION", 1), ("华为技术", "ORGANIZATION", 1), ("深圳", "GEO", 1),
                   ("Northern Steel Works", "ORGANIZATION", 1), ("Northern Steel Work", "ORGANIZATION", 1)]),
    ])


def test_name_forms() -> None:
    assert loose("Orion-Pump") == loose("ORION PUMP") == "orionpump"
    assert loose("AT&T") == loose("AT and T")
    assert without_suffix("Acme Inc.") == without_suffix("ACME Corporation") == "acme"
    assert without_suffix("华为技术有限公司") == "华为技术"
    assert [singular(w) for w in ("pumps", "companies", "boxes", "glass", "status", "gas")] == [
        "pump", "company", "box", "glass", "status", "gas"]
    assert acronym("IBM") == "ibm" and acronym("U.S.A.") == "usa" and acronym("ANN BERG") is None
    assert initials("International Business Machines") == "ibm" and initials("Bank of England") == "be"


def test_candidates_follow_the_rules(graph: Graph) -> None:
    found = {(c.a, c.b): c.rule for c in find_candidates(graph)}
    assert found == {
        ("orion pump", "orion-pump"): "variant",
        ("acme", "acme inc"): "suffix",
        ("华为技术", "华为技术有限公司"): "suffix",
        ("orion pump", "orion pumps"): "plural",
        ("orion pumps", "orion-pump"): "plural",
        ("ibm", "international business machines"): "abbreviation",
        ("northern steel work", "northern steel works"): "plural",
    }
    # never: Model 3 / Model 5 (a digit differs), Bank of England / England (different things)


def test_resolution_merges_into_the_heaviest_and_repoints_relations(graph: Graph) -> None:
    result = resolve_entities(graph)
    assert result.merged == {
        "Acme Inc": ["ACME"], "IBM": ["International Business Machines"],
        "Orion Pump": ["Orion Pumps", "Orion-Pump"], "华为技术有限公司": ["华为技术"],
        "Northern Steel Works": ["Northern Steel Work"]}
    acme = graph.entity("ACME")
    assert acme is not None and acme.name == "Acme Inc" and acme.aliases == ["ACME"]
    assert acme.doc_ids == ["d1", "d2"] and acme.weight == 4
    orion = graph.entity("orion pumps")
    assert orion is not None and orion.name == "Orion Pump" and orion.type == "PRODUCT"
    assert set(orion.aliases) == {"Orion Pumps", "Orion-Pump"}
    ibm = graph.entity("International Business Machines")
    assert ibm is not None and ibm.name == "IBM" and ibm.type == "ORGANIZATION"
    rel = graph.relation("ACME", "Orion Pumps")
    assert rel is not None and rel.doc_ids == ["d1", "d2"] and rel.weight == 2
    assert graph.relation("Acme Inc", "IBM").weight == 2  # type: ignore[union-attr]
    assert graph.entity("Model 3") is not graph.entity("Model 5")
    assert "ibm" in result.change.touched and "international business machines" in result.change.removed
    assert_consistent(graph)


def test_aliases_hold_for_documents_merged_later_and_removed(graph: Graph) -> None:
    resolve_entities(graph)
    graph.merge(doc("d4", [("ACME", "ORGANIZATION", 5), ("Orion Pumps", "PRODUCT", 1)], [("ACME", "Orion Pumps")]))
    acme = graph.entity("Acme Inc")
    assert acme is not None and acme.name == "ACME" and acme.weight == 9  # ACME now outweighs Acme Inc
    assert graph.relation("acme inc", "orion pump").weight == 3  # type: ignore[union-attr]
    graph.remove("d1")
    acme = graph.entity("Acme Inc")
    assert acme is not None and acme.doc_ids == ["d2", "d4"] and acme.aliases == []
    assert_consistent(graph)


def test_only_pairs_with_new_entities(graph: Graph) -> None:
    found = find_candidates(graph, only=["ibm"])
    assert [(c.a, c.b) for c in found] == [("ibm", "international business machines")]


def test_the_chat_model_confirms_pairs(graph: Graph, server: FakeOpenAIServer, chat: OpenAIChatModel) -> None:
    asked: list[str] = []

    def respond(body: dict[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        asked.append(prompt)
        lines = re.findall(r"^(\d+)\. (.*)$", prompt, re.M)
        return "\n".join(f"{n}: {'no' if 'IBM' in pair else 'yes'}" for n, pair in lines)

    server.responder = respond
    result = resolve_entities(graph, runner=LlmRunner(chat))
    assert len(asked) == 1 and result.asked == 6 and result.confirmed == 5
    assert '"IBM" (ORGANIZATION) | "International Business Machines" (ENTITY)' in asked[0]
    assert '"Orion Pump" (PRODUCT) | "Orion-Pump"' not in asked[0]  # variants need no confirmation
    assert graph.entity("IBM") is not graph.entity("International Business Machines")
    assert graph.entity("ACME") is graph.entity("Acme Inc")
    assert graph.entity("Orion-Pump") is graph.entity("Orion Pump")


def test_unanswered_pairs_are_not_merged(graph: Graph, server: FakeOpenAIServer, chat: OpenAIChatModel) -> None:
    server.default_reply = "I am not sure."
    result = resolve_entities(graph, runner=LlmRunner(chat))
    assert result.confirmed == 0 and list(result.merged) == ["Orion Pump"]  # the variant only
