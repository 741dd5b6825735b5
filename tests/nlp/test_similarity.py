from __future__ import annotations

import logging
import random
import time

import numpy as np
import pytest

from ragloom.nlp import ChunkTerms, pair_key, query_weights, token_similarities, token_similarity

logger = logging.getLogger(__name__)
KW = [("apple", 0.5), ("banana", 0.3), ("cherry", 0.2)]
# query dict: apple .2, banana .12, cherry .08, "apple banana" .3, "banana cherry" .18 -> total .88


def _chunk(content: list[str], **fields: list[str]) -> ChunkTerms:
    return ChunkTerms(content_terms=content, **fields)


def test_query_weights_hand_computed() -> None:
    d = query_weights(KW)
    assert d == pytest.approx(
        {"apple": 0.2, "banana": 0.12, "cherry": 0.08, "apple banana": 0.3, "banana cherry": 0.18}
    )


def test_similarity_hand_computed() -> None:
    assert token_similarity(KW, _chunk(["banana", "apple", "cherry"])) == pytest.approx(0.4 / 0.88)
    assert token_similarity(KW, _chunk(["apple", "banana", "x"])) == pytest.approx(0.62 / 0.88)
    assert token_similarity(KW, _chunk(["apple", "banana", "cherry"])) == pytest.approx(1.0)
    assert token_similarity(KW, _chunk(["durian"])) == 0.0
    # title, important keywords/terms and question terms count like content
    chunk = _chunk(["x"], title_terms=["apple"], important_keywords=["banana"], question_terms=["banana", "cherry"])
    assert token_similarity(KW, chunk) == pytest.approx((0.2 + 0.12 + 0.08 + 0.18) / 0.88)
    # pairs are adjacency within one field, not across fields
    split = _chunk(["apple"], title_terms=["banana"])
    assert token_similarity(KW, split) == pytest.approx(0.32 / 0.88)


def test_chinese_pairs_concatenate() -> None:
    assert pair_key("北京", "大学") == "北京大学" and pair_key("new", "york") == "new york"
    kw = [("北京", 0.5), ("大学", 0.5)]  # 北京 .2, 大学 .2, 北京大学 .3
    assert token_similarity(kw, _chunk(["北京大学"])) == pytest.approx(0.3 / 0.7)
    assert token_similarity(kw, _chunk(["北京", "大学"])) == pytest.approx(1.0)
    # a Chinese query term also matches when the chunk segmented it into adjacent parts
    assert token_similarity([("北京大学", 1.0)], _chunk(["在", "北京", "大学", "读书"])) == 1.0
    assert token_similarity([("北京大学", 1.0)], _chunk(["北京", "的", "大学"])) == 0.0


def test_empty_inputs() -> None:
    assert token_similarity([], _chunk(["a"])) == 0.0
    assert token_similarities(KW, []).shape == (0,)
    assert token_similarities([], [_chunk(["a"])]).tolist() == [0.0]


def _oracle(keywords: list[tuple[str, float]], chunk: ChunkTerms) -> float:
    """The reference formula, written plainly: dicts of terms and concatenated pairs."""
    q = query_weights(keywords)
    d: set[str] = set(chunk.important_keywords)
    for seq in (chunk.content_terms, chunk.title_terms, chunk.important_terms, chunk.question_terms):
        d.update(seq)
        d.update(pair_key(a, b) for a, b in zip(seq, seq[1:], strict=False))
    total = sum(q.values())
    return sum(w for k, w in q.items() if k in d) / total if total else 0.0


def test_batch_agrees_with_the_plain_formula() -> None:
    rng = random.Random(7)
    vocab = [
        "北京",
        "大学",
        "北京大学",
        "北",
        "京大学",
        "北京大",
        "学",
        "打印",
        "打印机",
        "机",
        "apple",
        "banana",
        "cherry",
        "x-200",
        "的",
    ]
    for _ in range(200):
        keywords = [(rng.choice(vocab), rng.random() + 0.01) for _ in range(rng.randint(1, 5))]
        chunks = [
            ChunkTerms(
                content_terms=rng.choices(vocab, k=rng.randint(0, 12)),
                title_terms=rng.choices(vocab, k=rng.randint(0, 3)),
                important_keywords=rng.choices(vocab, k=rng.randint(0, 2)),
                question_terms=rng.choices(vocab, k=rng.randint(0, 4)),
            )
            for _ in range(8)
        ]
        got = token_similarities(keywords, chunks)
        want = np.array([_oracle(keywords, c) for c in chunks])
        np.testing.assert_allclose(got, want, atol=1e-12)


def test_batch_speed() -> None:
    rng = random.Random(0)
    words = [f"w{i}" for i in range(20000)] + [chr(0x4E00 + i) * 2 for i in range(3000)]
    keywords = [("x-200", 0.3), ("打印机", 0.25), ("双面", 0.2), ("打印", 0.1), ("分辨率", 0.15)]
    chunks = []
    for i in range(64):
        content = rng.choices(words, k=200)
        if i % 3 == 0:
            content[50:53] = ["x-200", "打印机", "双面"]
        chunks.append(ChunkTerms(content_terms=content, title_terms=rng.choices(words, k=5)))
    token_similarities(keywords, chunks)
    best = float("inf")
    for _ in range(20):
        start = time.perf_counter()
        token_similarities(keywords, chunks)
        best = min(best, time.perf_counter() - start)
    logger.info("token_similarities 64 chunks x 200 terms: %.3f ms", best * 1e3)
    assert best < 0.01  # ~0.5-1 ms measured; generous bound for busy CI machines
