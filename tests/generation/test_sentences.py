from __future__ import annotations

from ragloom.generation.sentences import attach_markers, cited_ids, sentence_text, split_sentences


def test_pieces_concatenate_back_to_the_text() -> None:
    text = "First one [ID:0]. Second one. [ID:1] Third?\n\nFourth!"
    pieces = split_sentences(text)
    assert "".join(pieces) == text
    assert [sentence_text(p) for p in pieces] == ["First one.", "Second one.", "Third?", "Fourth!"]
    assert cited_ids(pieces[1]) == [1]  # a marker after the full stop stays with its sentence


def test_code_blocks_stay_whole() -> None:
    text = "Run this. ```python\nx = a[1]. y = 2; z = 3\nprint(x)\n```\n[ID:2] Then stop."
    pieces = split_sentences(text)
    assert "".join(pieces) == text
    code = [p for p in pieces if p.startswith("```")]
    assert len(code) == 1 and "print(x)" in code[0] and cited_ids(code[0]) == [2]


def test_cjk_and_latin_sentence_ends() -> None:
    pieces = split_sentences("员工每年有25天年假。病假需要医生证明！Sick leave is unlimited; ask HR.")
    assert [sentence_text(p) for p in pieces] == [
        "员工每年有25天年假。",
        "病假需要医生证明！",
        "Sick leave is unlimited;",
        "ask HR.",
    ]


def test_list_numbers_abbreviations_and_decimals_do_not_end_sentences() -> None:
    pieces = split_sentences("1. Revenue was 4.2 billion, e.g. from cloud.\n2. Costs fell.")
    assert [sentence_text(p) for p in pieces] == [
        "1. Revenue was 4.2 billion, e.g. from cloud.",
        "2. Costs fell.",
    ]


def test_markers_go_before_the_final_punctuation() -> None:
    assert attach_markers("It is tall.  ", [0, 2]) == "It is tall [ID:0][ID:2].  "
    assert attach_markers("它很高。", [1]) == "它很高 [ID:1]。"
    assert attach_markers("It is tall [ID:0].", [3]) == "It is tall [ID:0][ID:3]."
    assert attach_markers("```\ncode\n```\n", [1]) == "```\ncode\n```\n[ID:1]\n"
