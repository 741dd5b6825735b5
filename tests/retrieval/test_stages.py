"""The tag and graph-evidence stages take plain data (the service loads it): what they do with it."""

from __future__ import annotations

import numpy as np

from ragloom.dataflow import Candidate, ChunkRecord
from ragloom.retrieval.graph_evidence import evidence_candidates, is_kg_id, kg_id, put_first
from ragloom.retrieval.tags import QuestionTagSets, question_tag_sets, question_tags
from ragloom.retrieval.types import RetrievalResult


def test_a_question_is_tagged_with_the_union_of_the_tag_sets_and_the_largest_topn() -> None:
    searched = [(["t1", "t2"], 3), (None, 7), (["t2", "t3"], 2)]
    assert question_tag_sets("the router", searched) == QuestionTagSets(kb_ids=["t1", "t2", "t3"], topn=7)


def test_no_tag_set_or_a_blank_question_tags_nothing() -> None:
    assert question_tag_sets("the router", [(None, 3), ([], 5)]) is None
    assert question_tag_sets("  ", [(["t1"], 3)]) is None
    assert question_tags("the router", None) == {}


def test_graph_evidence_has_stable_ids_and_goes_first() -> None:
    assert kg_id("kb1") == "kg-kb1" and is_kg_id(kg_id("kb1")) and not is_kg_id("kb1")
    record = ChunkRecord(id="c1", kb_id="kb1", doc_id="d1", version_id="v1", content="x",
                         vector=np.ones(2, dtype=np.float32))
    chunk = Candidate(record=record)
    evidence = Candidate(record=ChunkRecord(id=kg_id("kb1"), kb_id="kb1", doc_id=kg_id("kb1"),
                                            version_id=kg_id("kb1"), content="y", vector=np.ones(2, dtype=np.float32)))
    result = RetrievalResult(chunks=[chunk], total=5)
    put_first(result, [evidence])
    assert [c.record.id for c in result.chunks] == [kg_id("kb1"), "c1"] and result.total == 6


def test_without_graphs_there_is_no_evidence() -> None:
    assert evidence_candidates("anything", [], lambda texts: np.zeros((len(texts), 2), dtype=np.float32)) == []
