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


def test_an_acronym_the_candidates_write_out_is_answerable_whatever_the_gate() -> None:
    from ragloom.retrieval.relevance import spelled_out

    def cand(text: str, sim: float) -> Candidate:
        return Candidate(record=ChunkRecord(id=text[:8], kb_id="kb", doc_id="d", version_id="v", content=text,
                                            vector=np.ones(2, dtype=np.float32)), similarity=sim)

    page = [cand("MCAS is activated only during manual flight.", 0.9),
            cand("the maneuvering characteristics augmentation system (MCAS) commands trim", 0.5)]
    assert spelled_out("What does MCAS stand for?", page)
    assert spelled_out("MCAS是什么的缩写？", page)
    assert not spelled_out("What does MCAS stand for?", page[:1])  # named, never written out
    assert not spelled_out("What does MCAS do?", page)  # not asking what it stands for
    assert not spelled_out("What does the FAA stand for?", page)  # another acronym
