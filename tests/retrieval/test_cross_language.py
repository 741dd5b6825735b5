"""Questions in another language than the documents (issue 26): a Chinese question over English text
(and the reverse) finds its chunk with the offline embedding model; the keyword side, which can only
match the few tokens both languages share, neither vetoes (weighted fusion, threshold) nor drowns
(normalized fusion, z-scores) the vector side."""

from __future__ import annotations

import numpy as np
import pytest

from ragloom.retrieval.fusion import NormalizedFusion, Sides, WeightedFusion, cross_language_weight
from ragloom.schemas.options import RetrievalOptions
from ragloom.service.search.retrieval import search
from tests.test_retrieval import _ingest

ENGLISH = {
    "router.md": "# Router\n\nTo reset the router to factory settings, hold the recessed button for 10 seconds "
                 "until the light blinks.\n",
    "bread.md": "# Sourdough\n\nFeed the sourdough starter every 12 hours with equal weights of flour and water.\n",
    "tyres.md": "# Tyres\n\nInflate road bicycle tyres to between 80 and 110 psi before a long ride.\n",
    "moon.md": "# The Moon\n\nThe Moon orbits the Earth once every 27.3 days relative to the stars.\n",
    "holiday.md": "# Annual leave\n\nFull-time staff have 25 days of paid holiday per calendar year.\n",
    # tokens the Chinese question below shares with an unrelated chunk (2024, 3000): all the keyword side can see
    "report.md": "# Report\n\nThe 2024 report counts 3000 visitors in 2024; 2024 revenue grew by 3000 euros.\n",
}
CHINESE = {
    "tea.md": "# 茶叶储存\n\n绿茶开封后应密封避光，放入冰箱冷藏，温度保持在零到五摄氏度之间。\n",
    "train.md": "# 高速铁路\n\n京沪高铁全长一千三百一十八公里，最高运营时速为三百五十公里。\n",
    "panda.md": "# 大熊猫\n\n大熊猫主要以竹子为食，每天要花十几个小时进食。\n",
}


def test_the_vector_side_takes_the_weight_the_term_side_cannot_reach() -> None:
    cos = np.array([0.8, 0.7, 0.6])
    same = Sides(term=np.array([0.9, 0.1, 0.0]), bm25=np.zeros(3), cosine=cos,
                 cross_language=np.zeros(3, dtype=bool))
    assert cross_language_weight(same, 0.7) == 0.7
    cross = Sides(term=np.array([0.2, 0.0, 0.0]), bm25=np.array([3.0, 0.0, 0.0]), cosine=np.array([0.6, 0.8, 0.7]),
                  cross_language=np.ones(3, dtype=bool))
    assert cross_language_weight(cross, 0.7) == pytest.approx(1 - 0.3 * 0.2)
    # the stray match (first) no longer outranks the best cosine (second), in either fusion
    assert int(np.argmax(NormalizedFusion().fuse(cross, mode="hybrid", weight=0.7))) == 1
    # the weighted similarity is the cosine: a threshold of 0.2 vetoes nothing, a stray match decides nothing
    assert list(WeightedFusion().fuse(cross, mode="hybrid", weight=0.3)) == pytest.approx([0.6, 0.8, 0.7])


def _first(ctx, principal, kb: str, question: str, fusion: str) -> str | None:
    res = search(ctx, principal=principal, kb_ids=[kb], question=question,
                 options=RetrievalOptions(fusion=fusion, page_size=3, min_relevance=0.0))
    return res.chunks[0].record.document_name if res.chunks else None


def test_a_chinese_question_finds_its_english_chunk(ctx, principal) -> None:
    _ingest(ctx, principal, "english", ENGLISH)
    for question, expected in [("路由器怎么恢复出厂设置？按住按钮 10 秒吗", "router.md"),
                               ("酸面团酵种多久喂一次？", "bread.md"), ("月球绕地球一圈要多少天？", "moon.md"),
                               ("2024 年 3000 名全职员工每年有多少天带薪年假？", "holiday.md")]:
        for fusion in ("normalized", "weighted"):
            assert _first(ctx, principal, "english", question, fusion) == expected, (fusion, question)


def test_an_english_question_finds_its_chinese_chunk(ctx, principal) -> None:
    _ingest(ctx, principal, "chinese", CHINESE, language="zh")
    for question, expected in [("How should green tea be stored?", "tea.md"),
                               ("What do giant pandas eat?", "panda.md")]:
        for fusion in ("normalized", "weighted"):
            assert _first(ctx, principal, "chinese", question, fusion) == expected, (fusion, question)
