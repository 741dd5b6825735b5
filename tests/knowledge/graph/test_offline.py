"""The offline extraction method on English and Chinese text, and the data types' JSON round trip."""

from __future__ import annotations

import json

import pytest

from ragloom.knowledge.graph import (
    Community,
    Finding,
    OfflineExtractor,
    Subgraph,
    canonical_name,
    entity_key,
    make_extractor,
)
from ragloom.knowledge.graph.offline import english_phrases
from ragloom.knowledge.graph.text import sentences
from ragloom.nlp import Analyzer
from tests.knowledge.graph.texts import ENGINES, HUAWEI, LABS, PUMPS


@pytest.fixture(scope="module")
def pumps(analyzer: Analyzer) -> Subgraph:
    return OfflineExtractor(analyzer).extract(PUMPS)


def names(sg: Subgraph) -> dict[str, str]:
    return {e.name: e.type for e in sg.entities}


def test_english_entities_are_capitalised_noun_phrases(pumps: Subgraph) -> None:
    assert names(pumps) == {
        "Acme Corporation": "ORGANIZATION",  # ends in Corporation
        "Orion Pump": "ENTITY",  # "The Orion Pump" loses its article
        "Dayton": "ENTITY", "Ohio": "ENTITY",  # the comma separates them
        "Kappa Labs": "ORGANIZATION",
        "Ann Berg": "PERSON",  # "Dr." dropped, and it makes a person
    }
    # "Engineers" and "Spare" start sentences but are no names; "pump" in lower case is not the Orion Pump


def test_weights_count_mentions_and_sources_name_the_chunks(pumps: Subgraph) -> None:
    acme = pumps.entity("acme corporation")
    assert acme is not None
    assert acme.weight == 3 and acme.source_chunk_ids == ["a1", "a2", "a3"] and acme.doc_ids == ["doc-a"]
    orion = pumps.entity("Orion Pump")
    assert orion is not None and orion.source_chunk_ids == ["a1", "a2"]
    assert orion.description.splitlines() == [
        "Acme Corporation builds the Orion Pump at its plant in Dayton, Ohio.",
        "The Orion Pump must be serviced every 450 operating hours.",
    ]


def test_relations_are_sentence_cooccurrences_weighted_by_count(pumps: Subgraph) -> None:
    pairs = {(r.source, r.target): r.weight for r in pumps.relations}
    assert pairs[("Acme Corporation", "Orion Pump")] == 1
    assert pairs[("Kappa Labs", "Orion Pump")] == 1
    assert pairs[("Ann Berg", "Kappa Labs")] == 1
    assert pairs[("Acme Corporation", "Ann Berg")] == 1
    assert ("Dayton", "Kappa Labs") not in pairs  # never in one sentence
    rel = pumps.relation("Kappa Labs", "Orion Pump")
    assert rel is not None and rel.source_chunk_ids == ["a2"]
    assert rel.description == "Kappa Labs tests every Orion Pump before it ships."
    for r in pumps.relations:  # undirected: endpoints in key order
        assert entity_key(r.source) < entity_key(r.target)


def test_cooccurrence_counts_every_shared_sentence(analyzer: Analyzer) -> None:
    chunks = [("k1", "d", "Kappa Labs moved to Oslo. Oslo welcomed Kappa Labs warmly. Kappa Labs grew.")]
    sg = OfflineExtractor(analyzer).extract(chunks)
    rel = sg.relation("Oslo", "Kappa Labs")
    assert rel is not None and rel.weight == 2
    assert sg.entity("Kappa Labs").weight == 3  # type: ignore[union-attr]


def test_chunk_window_relates_entities_of_one_chunk(analyzer: Analyzer) -> None:
    sg = OfflineExtractor(analyzer, window="chunk").extract(PUMPS)
    assert sg.relation("Dayton", "Orion Pump") is not None
    assert sg.relation("Kappa Labs", "Dayton") is None  # different chunks
    assert sg.relation("Ann Berg", "Orion Pump") is not None  # same chunk a2, different sentences


@pytest.mark.parametrize(("sentence", "expected"), [
    ("The Bank of England raised rates.", [("Bank of England", "ORGANIZATION")]),
    ("Engineers at Procter & Gamble use NASA data.", [("Procter & Gamble", "ENTITY"), ("NASA", "ENTITY")]),
    ("Yesterday Acme Corp signed the deal.", [("Acme Corp", "ORGANIZATION")]),
    ("In March the Orion X-200 replaced the Orion 3000 units.", [("Orion X-200", "ENTITY"), ("Orion 3000", "ENTITY")]),
    ("Maintenance Schedule For The Orion Pump", []),  # a title-case heading
    ("Ann Berg's report praised the work.", [("Ann Berg", "ENTITY")]),
    ("It was quiet on Monday in January.", []),
])
def test_english_phrase_rules(sentence: str, expected: list[tuple[str, str]]) -> None:
    assert english_phrases(sentence, confirmed={"Ann", "Acme"}) == expected


def test_chinese_entities_come_from_the_dictionary_tags(analyzer: Analyzer) -> None:
    sg = OfflineExtractor(analyzer).extract(HUAWEI)
    found = names(sg)
    assert found["华为技术有限公司"] == "ORGANIZATION"  # nt
    assert found["深圳"] == "GEO"  # ns
    assert found["任正非"] == "PERSON" and found["马化腾"] == "PERSON"  # nr
    assert found["腾讯公司"] == "ORGANIZATION"  # 腾讯 (nz) + 公司 merged
    assert found["中国移动"] == "ORGANIZATION"
    assert found["总部"] == "CONCEPT"  # a common noun named twice
    assert "网络" not in found  # a common noun named once
    assert "创始人" not in found and "公司" not in found
    shenzhen = sg.entity("深圳")
    assert shenzhen is not None and shenzhen.weight == 4 and shenzhen.source_chunk_ids == ["z1", "z2"]
    assert sg.relation("任正非", "华为") is not None
    assert sg.relation("马化腾", "腾讯公司") is not None
    assert sg.relation("马化腾", "任正非").weight == 1  # type: ignore[union-attr]
    assert sg.relation("马化腾", "中国移动") is None


def test_recurring_unknown_words_and_book_titles(analyzer: Analyzer) -> None:
    text = "《星海纪元》由蓝鲸工作室开发。蓝鲸工作室位于杭州。玩家喜欢《星海纪元》的剧情。"
    sg = OfflineExtractor(analyzer).extract([("t1", "d", text)])
    found = names(sg)
    assert found["星海纪元"] == "WORK"
    assert found["杭州"] == "GEO"
    assert sg.relation("星海纪元", "杭州") is None


def test_mixed_language_text(analyzer: Analyzer) -> None:
    sg = OfflineExtractor(analyzer).extract([("m1", "d", "Acme Corporation 在深圳设立了研发中心。")])
    assert {"Acme Corporation", "深圳"} <= set(names(sg))
    assert sg.relation("Acme Corporation", "深圳") is not None


def test_extraction_is_deterministic_and_single_document(analyzer: Analyzer) -> None:
    a = OfflineExtractor(analyzer).extract(PUMPS + [])
    b = make_extractor("offline", analyzer=analyzer).extract(list(PUMPS))
    assert a.to_dict() == b.to_dict()
    with pytest.raises(ValueError, match="one document"):
        OfflineExtractor(analyzer).extract(PUMPS + LABS)
    empty = OfflineExtractor(analyzer).extract([])
    assert empty.doc_id == "" and not empty.entities
    progress: list[tuple[int, int]] = []
    OfflineExtractor(analyzer).extract(ENGINES, progress=lambda d, t: progress.append((d, t)))
    assert progress == [(1, 1)]


def test_subgraph_and_community_survive_json(pumps: Subgraph) -> None:
    again = Subgraph.from_dict(json.loads(json.dumps(pumps.to_dict())))
    assert again == pumps
    community = Community(id="c0-0", level=0, entities=["Orion Pump", "Kappa Labs"], title="Pumps",
                          summary="s", findings=[Finding("f", "why")], rating=7.5, parent=None, method="llm")
    assert Community.from_dict(json.loads(json.dumps(community.to_dict()))) == community
    assert community.report == "# Pumps\ns\n- f: why"


def test_names_and_keys() -> None:
    assert canonical_name('  "Acme   Inc."  ') == "Acme Inc"
    assert canonical_name("U.S.") == "U.S."
    assert entity_key("ORION  PUMP") == entity_key("Orion Pump") == "orion pump"
    assert sentences("Dr. Berg met Acme Inc. staff. They agreed!\n华为在深圳。任正非创立了华为。") == [
        "Dr. Berg met Acme Inc. staff.", "They agreed!", "华为在深圳。", "任正非创立了华为。"]
