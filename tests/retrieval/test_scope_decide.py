"""The applicability scope decided before retrieval (issue 27), without a chat model: values read
from the question and the conversation by the values the documents carry."""

from __future__ import annotations

import pytest

from ragloom.retrieval.scope import clarification, decide, is_clarification
from ragloom.schemas.scope import ScopeKey, ScopeSettings

KEYS = [ScopeKey(key="model", aliases={"pro": "X200"}), ScopeKey(key="firmware", match="range", names=["fw"])]
DOCS = {
    "a": {"model": "X100", "firmware": ">=1.0,<2"},
    "b": {"model": "X100", "firmware": ">=2.0,<3"},
    "c": {"model": ["X200", "X200S"], "firmware": ">=2.1,<3"},
    "d": {"title": "no scope metadata"},
}


@pytest.mark.parametrize(("question", "status", "values", "docs"), [
    ("How do I reset my x-100 on firmware 2.4?", "scoped", {"model": "X100", "firmware": "2.4"}, ["b"]),
    ("How do I reset my X 100, fw v1.5?", "scoped", {"model": "X100", "firmware": "1.5"}, ["a"]),
    ("My Pro has fw 2.5: how do I descale it?", "scoped", {"model": "X200", "firmware": "2.5"}, ["c"]),
    ("x200s with firmware 2.2", "scoped", {"model": "X200S", "firmware": "2.2"}, ["c"]),
])
def test_values_are_read_in_their_variants_and_aliases(question: str, status: str, values: dict[str, str],
                                                       docs: list[str]) -> None:
    d = decide(KEYS, DOCS, question=question)
    assert (d.status, d.values, d.doc_ids) == (status, values, docs)
    assert d.message is None and "match" in d.reason


def test_a_missing_value_asks_naming_the_known_values() -> None:
    d = decide(KEYS, DOCS, question="How do I reset it?")
    assert d.status == "clarify" and d.doc_ids == [] and d.missing == ["model", "firmware"]
    assert d.message is not None and "Which model is it: X100, X200 or X200S?" in d.message
    assert is_clarification(d.message)
    # the known model narrows the firmware ranges it asks about
    d = decide(KEYS, DOCS, question="my X200 beeps")
    assert d.missing == ["firmware"] and d.known["firmware"] == [">=2.1,<3"]


def test_the_conversation_fills_a_value() -> None:
    d = decide(KEYS, DOCS, question="It is an X100", earlier=["firmware 2.7: how do I reset it?"])
    assert d.status == "scoped" and d.values == {"model": "X100", "firmware": "2.7"}
    assert d.sources == {"model": "question", "firmware": "conversation"}
    # the question wins over the conversation
    d = decide(KEYS, DOCS, question="and on the X200 fw 2.2?", earlier=["X100 fw 1.1 reset"])
    assert d.values == {"model": "X200", "firmware": "2.2"}


@pytest.mark.parametrize(("question", "named"), [
    ("How do I reset my X300 on fw 2.4?", "model X300"),
    ("model Z9: reset?", "model Z9"),
    ("X100 with firmware 7.1", "firmware version 7.1"),
])
def test_a_value_no_document_carries_is_a_gap_that_retrieves_nothing(question: str, named: str) -> None:
    d = decide(KEYS, DOCS, question=question)
    assert d.status == "gap" and d.doc_ids == []
    assert d.message is not None and named in d.message and "no document" in d.message


def test_values_carried_but_not_together_are_a_gap() -> None:
    d = decide(KEYS, DOCS, question="X200 fw 1.5")
    assert d.status == "gap" and d.doc_ids == [] and "X200" in (d.message or "")


def test_given_values_win_and_are_canonical() -> None:
    d = decide(KEYS, DOCS, question="reset?", given={"model": "x-100", "firmware": "1.2"})
    assert d.status == "scoped" and d.values == {"model": "X100", "firmware": "1.2"} and d.doc_ids == ["a"]
    assert d.sources == {"model": "request", "firmware": "request"}
    assert decide(KEYS, DOCS, question="reset?", given={"model": "pro", "firmware": "2.2"}).values["model"] == "X200"
    assert decide(KEYS, DOCS, question="X100 fw 1.2", given={"model": "Q1"}).status == "gap"


def test_no_keys_is_no_scope_and_settings_are_validated() -> None:
    assert decide([], DOCS, question="anything").status == "none"
    with pytest.raises(ValueError):
        ScopeSettings(keys=[ScopeKey(key="model"), ScopeKey(key="model")])
    with pytest.raises(ValueError):
        ScopeKey(key="bad key!")
    assert clarification([ScopeKey(key="model")], {}).startswith("Which model is it?")


# --- with a chat model: the keys the matching leaves without a value are asked of it ------------------

class _Model:
    name = "stub"

    def __init__(self, reply: str) -> None:
        self.reply, self.prompts = reply, []

    def chat(self, messages, **_):  # type: ignore[no-untyped-def]
        self.prompts.append(messages)
        return self.reply


def test_a_chat_models_values_fill_what_matching_missed() -> None:
    from ragloom.service.search.scope import extract_values

    model = _Model('Sure: {"model": "x200", "firmware": "2.6"}')
    got = extract_values(model, KEYS, {"model": ["X100", "X200"]}, ["the bigger one, on the latest 2.6 update"])
    assert got == {"model": "x200", "firmware": "2.6"}
    assert "known: X100, X200" in model.prompts[0][0]["content"]
    d = decide(KEYS, DOCS, question="the bigger one, on the latest 2.6 update", extracted=got)
    assert d.status == "scoped" and d.values == {"model": "X200", "firmware": "2.6"}
    assert d.sources == {"model": "chat model", "firmware": "chat model"}
    # a value the conversation names but no document carries is a gap; a guess it does not name is not
    assert decide(KEYS, DOCS, question="my Q7 on 2.6", extracted={"model": "Q7", "firmware": "2.6"}).status == "gap"
    assert decide(KEYS, DOCS, question="reset it", extracted={"model": "Z1"}).status == "clarify"
    assert extract_values(_Model("no idea"), KEYS, {}, ["reset"]) == {}
