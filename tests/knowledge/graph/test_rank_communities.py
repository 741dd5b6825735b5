"""PageRank, Leiden communities and their reports (offline and by the chat model)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ragloom.knowledge.graph import (
    Entity,
    Graph,
    LlmRunner,
    MemoryLlmCache,
    Relation,
    Subgraph,
    build_communities,
    compute_pagerank,
    detect_communities,
    node_link,
)
from ragloom.models.chat import OpenAIChatModel
from tests.fakes.openai_server import FakeOpenAIServer

# two tight groups joined by one weak link, and a lone entity
PUMP_GROUP = ["Orion Pump", "Acme Corporation", "Kappa Labs", "Ann Berg"]
ENGINE_GROUP = ["Vega Engine", "Nordic Motors", "Polar Freight", "Lars Holm"]


def clustered_graph() -> Graph:
    entities = [Entity(n, "ORGANIZATION" if " " in n else "ENTITY", f"About {n}.", [f"ch-{i}"], ["d1"], 1.0)
                for i, n in enumerate([*PUMP_GROUP, *ENGINE_GROUP, "Loner"])]
    relations = []
    for group in (PUMP_GROUP, ENGINE_GROUP):
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                relations.append(Relation(a, b, f"{a} works with {b}.", [], 5.0, ["ch-x"], ["d1"]))
    relations.append(Relation("Kappa Labs", "Nordic Motors", "Kappa Labs once tested a part for Nordic Motors.",
                              [], 0.5, ["ch-y"], ["d1"]))
    return Graph.from_subgraphs([Subgraph("d1", entities, relations)])


def star_graph() -> Graph:
    spokes = ["B", "C", "D", "E"]
    entities = [Entity(n, "ENTITY", "", ["c"], ["d"], 1.0) for n in ["Hub", *spokes, "Alone"]]
    relations = [Relation("Hub", s, "", [], 1.0, ["c"], ["d"]) for s in spokes]
    return Graph.from_subgraphs([Subgraph("d", entities, relations)])


def test_pagerank_favours_the_hub_and_sums_to_one() -> None:
    graph = star_graph()
    values = compute_pagerank(graph)
    assert sum(values.values()) == pytest.approx(1.0)
    assert max(values, key=values.__getitem__) == "hub"
    assert values["b"] == pytest.approx(values["e"])
    assert 0 < values["alone"] < values["b"]
    assert graph.entity("Hub").pagerank == values["hub"]  # type: ignore[union-attr]
    assert not graph.pagerank_stale
    graph.merge(Subgraph("d2", [Entity("F", "ENTITY", "", ["c2"], ["d2"], 1.0)]))
    assert graph.pagerank_stale


def test_pagerank_weights_heavier_relations() -> None:
    graph = Graph.from_subgraphs([Subgraph("d", [Entity(n, "ENTITY", "", ["c"], ["d"], 1.0) for n in "ABC"],
                                           [Relation("A", "B", "", [], 9.0, ["c"], ["d"]),
                                            Relation("A", "C", "", [], 1.0, ["c"], ["d"])])])
    values = compute_pagerank(graph)
    assert values["b"] > values["c"]


def test_leiden_finds_the_two_groups_deterministically() -> None:
    graph = clustered_graph()
    compute_pagerank(graph)
    found = detect_communities(graph)
    assert sorted(sorted(c.entities) for c in found) == sorted([sorted(PUMP_GROUP), sorted(ENGINE_GROUP)])
    assert [c.id for c in found] == ["c0-0", "c0-1"] and all(c.level == 0 and c.parent is None for c in found)
    assert "Loner" not in {n for c in found for n in c.entities}
    assert max(c.weight for c in found) == 1.0
    again = clustered_graph()
    compute_pagerank(again)
    assert [c.to_dict() for c in detect_communities(again)] == [c.to_dict() for c in found]


def ring_of_triangles(n: int = 24) -> Graph:
    """Triangles joined in a ring: modularity groups neighbouring triangles (its resolution limit), and
    each group, taken alone, splits into its triangles."""
    names = [f"T{c:02d}-{i}" for c in range(n) for i in range(3)]
    relations = [Relation(f"T{c:02d}-{a}", f"T{c:02d}-{b}", "", [], 1.0, ["c"], ["d"])
                 for c in range(n) for a, b in ((0, 1), (0, 2), (1, 2))]
    relations += [Relation(f"T{c:02d}-0", f"T{(c + 1) % n:02d}-1", "", [], 1.0, ["c"], ["d"]) for c in range(n)]
    return Graph.from_subgraphs([Subgraph("d", [Entity(x, "ENTITY", "", ["c"], ["d"], 1.0) for x in names],
                                          relations)])


def test_large_communities_are_split_into_levels() -> None:
    graph = ring_of_triangles()
    compute_pagerank(graph)
    found = detect_communities(graph, max_cluster_size=4)
    top = {c.id: c for c in found if c.level == 0}
    deeper = [c for c in found if c.level == 1]
    assert all(len(c.entities) > 4 for c in top.values())
    assert len(deeper) == 24
    for c in deeper:
        assert c.parent in top and set(c.entities) <= set(top[c.parent].entities)
        assert len({name[:3] for name in c.entities}) == 1 and len(c.entities) == 3  # one triangle
    assert [c.to_dict() for c in detect_communities(graph, max_cluster_size=4)] == [c.to_dict() for c in found]


def test_offline_reports_name_the_central_entities() -> None:
    graph = clustered_graph()
    compute_pagerank(graph)
    communities, stats = build_communities(graph)
    assert stats.offline == 2 and stats.llm == 0
    pump = next(c for c in communities if "Orion Pump" in c.entities)
    assert pump.method == "offline" and pump.rating == 0.0 and "offline" in pump.rating_explanation
    assert pump.entities[0] == "Kappa Labs"  # the bridge end has the highest PageRank of its group
    assert pump.title.startswith("Kappa Labs, ")
    assert pump.summary.startswith("4 related entities (ORGANIZATION), the most central being Kappa Labs")
    assert len(pump.findings) == 5 and all(" – " in f.summary for f in pump.findings)
    assert all(f.explanation.endswith(".") for f in pump.findings)


def report_reply(body: dict[str, Any]) -> str:
    prompt = body["messages"][-1]["content"]
    title = "Pump makers" if "Orion Pump" in prompt else "Engine trade"
    return "Here is the report:\n```json\n" + json.dumps({
        "title": title, "summary": f"{title} summary.",
        "findings": [{"summary": "One", "explanation": "Because."}, "Two"],
        "rating": "7.5", "rating_explanation": "Matters."}) + "\n```"


def test_llm_reports_are_read_and_cached(server: FakeOpenAIServer, chat: OpenAIChatModel) -> None:
    server.responder = report_reply
    graph = clustered_graph()
    compute_pagerank(graph)
    cache = MemoryLlmCache()
    communities, stats = build_communities(graph, runner=LlmRunner(chat, cache=cache))
    assert stats.llm == 2 and stats.unreadable == 0
    pump = next(c for c in communities if "Orion Pump" in c.entities)
    assert (pump.title, pump.summary, pump.rating, pump.method) == ("Pump makers", "Pump makers summary.", 7.5, "llm")
    assert [f.summary for f in pump.findings] == ["One", "Two"]
    prompt = next(r.body["messages"][0]["content"] for r in server.requests
                  if "Orion Pump" in r.body["messages"][0]["content"])
    assert "Kappa Labs,ORGANIZATION" in prompt and "Acme Corporation works with" in prompt
    sent = len(server.requests)
    again, _ = build_communities(graph, runner=LlmRunner(chat, cache=cache))
    assert len(server.requests) == sent and again == communities


def test_an_unreadable_report_falls_back_to_offline(server: FakeOpenAIServer, chat: OpenAIChatModel) -> None:
    server.responder = lambda body: "Sorry, no." if "Orion Pump" in body["messages"][-1]["content"] \
        else report_reply(body)
    graph = clustered_graph()
    compute_pagerank(graph)
    communities, stats = build_communities(graph, runner=LlmRunner(chat))
    assert stats.unreadable == 1 and stats.llm == 1
    assert {c.method for c in communities} == {"llm", "offline"}


def test_node_link_view() -> None:
    graph = clustered_graph()
    compute_pagerank(graph)
    communities, _ = build_communities(graph)
    view = node_link(graph, communities, limit=4)
    assert len(view["nodes"]) == 4 and view["nodes"][0]["id"] == "kappa labs"
    shown = {n["id"] for n in view["nodes"]}
    assert all(link["source"] in shown and link["target"] in shown for link in view["links"])
    assert all(n["community"] for n in view["nodes"])
    assert {g["id"] for g in view["communities"]} == {n["community"] for n in view["nodes"]}
    assert len(node_link(graph)["nodes"]) == 9
