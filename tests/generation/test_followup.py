"""Follow-up questions rewritten into standalone ones: the offline rule (English, Chinese) and
the chat-model path over the real OpenAI wire protocol (the fake server on loopback)."""

from __future__ import annotations

import pytest

from ragloom.generation import Rewrite, rewrite_question
from ragloom.generation.followup import rule_rewrite
from ragloom.models.chat import OpenAIChatModel
from tests.fakes import FakeOpenAIServer

BTREE = [("What is a B-tree?", "A self-balancing search tree that keeps data sorted [ID:0].")]
BTREE_ZH = [("什么是B树？", "一种自平衡的多路搜索树。")]
FILTER_ZH = [("KJ-500 的滤芯多久换一次？", "建议每六个月更换一次。")]


# --- the offline rule ------------------------------------------------------------------------------

def test_an_anaphoric_follow_up_gets_the_previous_subject() -> None:
    assert rewrite_question(BTREE, "and what about its leaf nodes?", None) == Rewrite(
        "what about B-tree leaf nodes?", "rule")
    assert rewrite_question(BTREE, "How is it balanced?", None) == Rewrite("How is B-tree balanced?", "rule")
    assert rewrite_question(BTREE, "How do I configure this?", None).question == "How do I configure B-tree?"


def test_an_elliptical_or_very_short_follow_up_gets_the_subject_in_front() -> None:
    assert rewrite_question(BTREE, "Leaf nodes?", None) == Rewrite("B-tree: Leaf nodes?", "rule")
    assert rewrite_question(BTREE, "Why?", None) == Rewrite("B-tree: Why?", "rule")
    long_subject = [("How does PostgreSQL store B-tree indexes?", "In pages.")]
    rewritten = rewrite_question(long_subject, "And what about their size?", None)
    assert rewritten.method == "rule"
    assert rewritten.question.endswith(": what about their size?")
    assert {"PostgreSQL", "B-tree", "indexes"} <= set(rewritten.question.replace(":", "").split())


@pytest.mark.parametrize("question", [
    "What is a hash index?",
    "What is RCAC?",
    "what is kafka?",
    "What is the tool that parses PDF files?",  # "that" is a relative pronoun here
    "And B-tree leaf nodes?",  # names the subject already
])
def test_a_self_contained_question_is_left_unchanged(question: str) -> None:
    assert rewrite_question(BTREE, question, None) == Rewrite(question, "unchanged")


def test_no_history_means_nothing_to_rewrite() -> None:
    assert rewrite_question([], "How is it balanced?", None) == Rewrite("How is it balanced?", "unchanged")


def test_a_chain_of_follow_ups_keeps_the_first_subject() -> None:
    history = [*BTREE, ("and what about its leaf nodes?", "They hold the keys.")]
    assert rewrite_question(history, "How many keys do they hold?", None) == Rewrite(
        "How many keys do B-tree leaf nodes hold?", "rule")


def test_chinese_follow_ups() -> None:
    assert rewrite_question(BTREE_ZH, "它的叶子节点呢？", None) == Rewrite("B树的叶子节点呢？", "rule")
    assert rewrite_question(BTREE_ZH, "那叶子节点呢？", None) == Rewrite("B树叶子节点呢？", "rule")
    assert rewrite_question(BTREE_ZH, "为什么？", None) == Rewrite("B树：为什么？", "rule")
    price = rewrite_question(FILTER_ZH, "价格呢？", None)
    assert price.method == "rule" and price.question.startswith("KJ-500") and price.question.endswith("价格呢？")
    # a determiner (该型号) is not replaced: the subject goes in front
    model = rewrite_question(FILTER_ZH, "该型号的适用面积是多少？", None)
    assert model.method == "rule" and model.question.endswith("：该型号的适用面积是多少？")
    assert rewrite_question([("行列访问控制是什么？", "")], "它是哪个版本引入的？", None) == Rewrite(
        "行列访问控制是哪个版本引入的？", "rule")


@pytest.mark.parametrize("question", ["哈希索引是什么？", "为什么天空是蓝色的呢？", "KJ-5000 的适用面积是多少？"])
def test_a_self_contained_chinese_question_is_left_unchanged(question: str) -> None:
    assert rewrite_question(BTREE_ZH, question, None) == Rewrite(question, "unchanged")


# --- with a chat model (the real wire protocol) ---------------------------------------------------

@pytest.fixture
def chat(fake_openai: FakeOpenAIServer) -> OpenAIChatModel:
    return OpenAIChatModel(fake_openai.base_url, "fake-chat")


def test_the_chat_model_rewrites_with_the_conversation_in_one_call(
    fake_openai: FakeOpenAIServer, chat: OpenAIChatModel
) -> None:
    fake_openai.queue_reply("<think>its = the B-tree</think>\nOutput: What about the leaf nodes of a B-tree?")
    history = [("What is a hash index?", "An index built on a hash table."), *BTREE]
    result = rewrite_question(history, "and what about its leaf nodes?", chat)
    assert result == Rewrite("What about the leaf nodes of a B-tree?", "model")
    chats = [r for r in fake_openai.requests if r.path == "/v1/chat/completions"]
    assert len(chats) == 1
    prompt = chats[0].body["messages"][-1]["content"]
    assert "User: What is a hash index?" in prompt and "User: What is a B-tree?" in prompt
    assert "Assistant: A self-balancing search tree that keeps data sorted.\n" in prompt  # markers left out
    assert prompt.rstrip().endswith("User: and what about its leaf nodes?\nOutput:")


def test_an_introduced_reply_is_taken_from_its_second_line(
    fake_openai: FakeOpenAIServer, chat: OpenAIChatModel
) -> None:
    fake_openai.queue_reply("Here is the standalone question:\n“What about the leaf nodes of a B-tree?”")
    assert rewrite_question(BTREE, "and its leaf nodes?", chat) == Rewrite(
        "What about the leaf nodes of a B-tree?", "model")


def test_the_model_keeping_the_question_means_unchanged(fake_openai: FakeOpenAIServer, chat: OpenAIChatModel) -> None:
    fake_openai.queue_reply('"What is a hash index?"')
    assert rewrite_question(BTREE, "What is a hash index?", chat) == Rewrite("What is a hash index?", "unchanged")


def test_a_failing_model_falls_back_to_the_rule(fake_openai: FakeOpenAIServer, chat: OpenAIChatModel) -> None:
    fake_openai.fail_next(500, '{"error": {"message": "overloaded"}}')
    assert rewrite_question(BTREE, "and what about its leaf nodes?", chat) == Rewrite(
        "what about B-tree leaf nodes?", "rule")


@pytest.mark.parametrize("reply", [
    "",
    "   ",
    "A B-tree keeps its leaf nodes at the same depth [ID:0].",
    "Sure! Here is the rewritten question.\nWhat about B-tree leaf nodes?\nHope this helps.",
    "B-tree leaf nodes " * 40,
])
def test_an_odd_reply_falls_back_to_the_rule(fake_openai: FakeOpenAIServer, chat: OpenAIChatModel, reply: str) -> None:
    fake_openai.queue_reply(reply)
    assert rewrite_question(BTREE, "and what about its leaf nodes?", chat) == Rewrite(
        "what about B-tree leaf nodes?", "rule")


def test_the_model_is_not_called_without_history(fake_openai: FakeOpenAIServer, chat: OpenAIChatModel) -> None:
    assert rewrite_question([], "What is a B-tree?", chat) == Rewrite("What is a B-tree?", "unchanged")
    assert fake_openai.requests == []


def test_rule_rewrite_alone_matches_the_no_model_path() -> None:
    assert rule_rewrite(BTREE, "Leaf nodes?") == rewrite_question(BTREE, "Leaf nodes?", None)
