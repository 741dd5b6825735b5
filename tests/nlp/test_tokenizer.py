from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ragloom.errors import ConfigError
from ragloom.nlp import Analyzer

HAS_RJIEBA = importlib.util.find_spec("rjieba") is not None
HAS_OPENCC = importlib.util.find_spec("opencc") is not None

MIXED = (
    "RAGFlow是一个基于深度文档理解的开源RAG引擎。The X-200 printer supports duplex printing "
    "at 1200 dpi（售价￥2,999元）. 请问v2.5版本的用户手册在哪里下载？Running shoes & C++ code."
)


def test_normalize_width_case_and_spacing(analyzer: Analyzer) -> None:
    assert analyzer.normalize("ＡＢＣ１２３，Ｈｅｌｌｏ") == "abc123,hello"
    assert analyzer.normalize("GPT4在2023年发布") == "gpt4 在 2023 年发布"
    assert analyzer.normalize("  many \n\t spaces ") == "many spaces"


@pytest.mark.skipif(not HAS_OPENCC, reason="opencc not installed")
def test_normalize_traditional_to_simplified() -> None:
    assert Analyzer(to_simplified=True).normalize("這個軟體") == "这个软体"
    assert Analyzer(to_simplified=False).normalize("這個") == "這個"


def test_chinese_segmentation(analyzer: Analyzer) -> None:
    assert analyzer.tokenize("我来到北京清华大学") == ["我", "来到", "北京", "清华大学"]
    assert analyzer.tokenize("小明硕士毕业于中国科学院计算所") == [
        "小明",
        "硕士",
        "毕业",
        "于",
        "中国科学院",
        "计算所",
    ]


def test_english_words_stemmed_and_punctuation_dropped(analyzer: Analyzer) -> None:
    assert analyzer.tokenize("Running, runs; ran!") == ["run", "run", "ran"]
    assert analyzer.tokenize("The studies' results...") == ["the", "studi", "result"]
    assert analyzer.tokenize("John's book isn't here") == ["john", "book", "isn't", "here"]


def test_numbers_and_model_numbers_kept_whole(analyzer: Analyzer) -> None:
    terms = analyzer.tokenize("The X-200 (v2.5) costs $1,299.99 in 2023; see and/or TCP/IP, C++ and C#.")
    for expected in ["x-200", "v2.5", "1299.99", "2023", "and/or", "tcp/ip", "c++", "c#"]:
        assert expected in terms
    assert "$" not in terms and "(" not in terms


def test_mixed_text(analyzer: Analyzer) -> None:
    terms = analyzer.tokenize(MIXED)
    assert terms[:3] == ["ragflow", "是", "一个"]
    for expected in [
        "深度",
        "文档",
        "开源",
        "rag",
        "引擎",
        "x-200",
        "printer",
        "duplex",
        "1200",
        "dpi",
        "售价",
        "2999",
        "元",
        "v2.5",
        "版本",
        "用户手册",
        "下载",
        "run",
        "shoe",
    ]:
        assert expected in terms
    assert all(t.strip() and t == t.lower() for t in terms)
    assert not any(ch in t for t in terms for ch in "，。？！（）￥&?")
    assert [t for t in terms if "." in t] == ["v2.5"]
    assert analyzer.tokenize("") == [] and analyzer.tokenize("？！…") == []


def test_stop_words(analyzer: Analyzer) -> None:
    for word in ["请问", "的", "是", "什么", "怎么", "哪", "what", "which", "how", "is", "the", "of", "3"]:
        assert analyzer.is_stop_word(word), word
    assert analyzer.is_stop_word(analyzer.stem("does"))  # stemmed form also recognised
    assert analyzer.remove_stop_words(analyzer.tokenize("请问公司的年假政策是什么")) == [
        "公司",
        "年",
        "假",
        "政策",
    ]
    assert analyzer.remove_stop_words(analyzer.tokenize("What is the price of the printer?")) == [
        "price",
        "printer",
    ]


def test_fine_grained_pieces(analyzer: Analyzer) -> None:
    assert analyzer.fine_pieces("中华人民共和国") == ["中华", "华人", "人民", "共和", "共和国"]
    assert analyzer.fine_pieces("清华大学") == ["清华", "华大", "大学"]
    assert analyzer.fine_pieces("北京") == []  # shorter than 3: no pieces
    assert analyzer.fine_pieces("x-200") == ["x", "200"]
    assert analyzer.fine_pieces("running-shoes") == ["run", "shoe"]
    assert analyzer.fine_pieces("snake_case/path") == ["snake", "case", "path"]
    assert analyzer.fine_pieces("v2.5") == []
    assert analyzer.fine_grained(["我", "中华人民共和国", "x-200", "printer"]) == [
        "我",
        "中华",
        "华人",
        "人民",
        "共和",
        "共和国",
        "x",
        "200",
        "printer",
    ]


def test_unknown_backend_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        Analyzer(backend="nltk")


@pytest.mark.skipif(not HAS_RJIEBA, reason="rjieba not installed")
def test_backends_segment_identically() -> None:
    jb, rj = Analyzer(backend="jieba"), Analyzer(backend="rjieba")
    texts = [
        MIXED,
        "中华人民共和国成立于1949年，首都是北京。吴彦祖在香港出生，后来在美国读大学。",
        "合同约定乙方应当在收到货款后十五个工作日内交付全部货物逾期交付的每日按合同总价的千分之三支付违约金",
    ]
    for text in texts:
        assert jb.tokenize(text) == rj.tokenize(text)
        assert jb.fine_grained(jb.tokenize(text)) == rj.fine_grained(rj.tokenize(text))


def test_thread_safe_and_deterministic() -> None:
    fresh = Analyzer()  # lazily initialised by the first of many concurrent calls
    texts = [MIXED * (i % 3 + 1) for i in range(16)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(fresh.tokenize, texts))
    assert results == [fresh.tokenize(t) for t in texts]


def test_jieba_cache_kept_out_of_cwd_quietly_in_parallel_processes(tmp_path: Path) -> None:
    cache, work = tmp_path / "cache", tmp_path / "work"
    cache.mkdir()
    work.mkdir()
    script = textwrap.dedent(f"""
        from pathlib import Path
        from ragloom.nlp import Analyzer
        a = Analyzer(backend="jieba", cache_dir=Path({str(cache)!r}))
        print(" ".join(a.tokenize("我来到北京清华大学")))
    """)
    env = {**os.environ, "PYTHONWARNINGS": "ignore::DeprecationWarning"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script], cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outputs
    assert all(out == ("我 来到 北京 清华大学\n", "") for out in outputs)  # no log noise
    assert list(work.iterdir()) == []
    assert (cache / "jieba.cache").is_file()
