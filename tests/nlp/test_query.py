from __future__ import annotations

import math
from dataclasses import asdict

import pytest

from ragloom.docstore.base import DEFAULT_FIELD_BOOSTS, Clause, FullTextQuery
from ragloom.nlp import (
    FINE_FIELDS,
    MAX_KEYWORDS,
    Analyzer,
    ChunkTerms,
    TermWeigher,
    analyze_chunk,
    build_fulltext_query,
    is_chinese_query,
)
from ragloom.nlp.query import PAIR_BOOST, split_compounds


def _singles(q: FullTextQuery) -> list[Clause]:
    return [c for c in q.clauses if len(c.terms) == 1]


def _phrases(q: FullTextQuery) -> list[Clause]:
    return [c for c in q.clauses if len(c.terms) > 1]


def _contains_run(seq: list[str], run: tuple[str, ...], slop: int) -> bool:
    """True when ``run`` occurs in order in ``seq`` with at most ``slop`` extra positions."""
    starts = [i for i, t in enumerate(seq) if t == run[0]]
    for start in starts:
        pos, extra = start, 0
        for term in run[1:]:
            nxt = next((j for j in range(pos + 1, len(seq)) if seq[j] == term), None)
            if nxt is None:
                break
            extra += nxt - pos - 1
            pos = nxt
        else:
            if extra <= slop:
                return True
    return False


def _passes_gate(q: FullTextQuery, chunk: ChunkTerms) -> bool:
    """The FullTextQuery contract: enough single-term clauses match in some field."""
    fields = asdict(chunk)
    singles = _singles(q)
    matched: int = sum(1 for c in singles if any(c.terms[0] in fields[f] for f in (c.fields or q.fields)))
    return matched >= max(1, math.ceil(q.minimum_should_match * len(singles)))


def _phrase_matches(q: FullTextQuery, clause: Clause, chunk: ChunkTerms) -> bool:
    fields = asdict(chunk)
    return any(_contains_run(fields[f], clause.terms, clause.slop) for f in (clause.fields or q.fields))


def test_chinese_question(analyzer: Analyzer, weigher: TermWeigher) -> None:
    qa = build_fulltext_query("请问公司的年假政策是什么？", analyzer, weigher)
    q = qa.fulltext
    assert qa.is_chinese and qa.normalized == "请问公司的年假政策是什么?"
    assert q.fields == DEFAULT_FIELD_BOOSTS and q.minimum_should_match == 0.3
    assert [c.terms[0] for c in _singles(q)] == ["公司", "年", "假", "政策"]
    assert [(t, w) for t, w in qa.keywords] == [(c.terms[0], c.boost) for c in _singles(q)]
    assert sum(w for _, w in qa.keywords) == pytest.approx(1.0)
    assert _phrases(q) == [Clause(("公司", "年", "假", "政策"), boost=1.5, slop=2)]


def test_chinese_fine_piece_phrases(analyzer: Analyzer, weigher: TermWeigher) -> None:
    q = build_fulltext_query("中华人民共和国 成立时间", analyzer, weigher).fulltext
    w = next(c.boost for c in _singles(q) if c.terms == ("中华人民共和国",))
    pieces = ("中华", "华人", "人民", "共和", "共和国")
    assert Clause(pieces, boost=w, slop=0, fields=FINE_FIELDS) in q.clauses
    assert Clause(pieces, boost=w / 2, slop=2, fields=FINE_FIELDS) in q.clauses
    # one proximity phrase per whitespace segment with more than one term
    assert Clause(("成立", "时间"), boost=1.5, slop=2) in q.clauses


def test_english_question(analyzer: Analyzer, weigher: TermWeigher) -> None:
    qa = build_fulltext_query("How do I reset the password of a Linux server?", analyzer, weigher)
    q = qa.fulltext
    assert not qa.is_chinese
    weights = dict(qa.keywords)
    assert list(weights) == ["reset", "password", "linux", "server"]
    bigrams = {c.terms: c for c in _phrases(q)}
    assert set(bigrams) == {("reset", "password"), ("password", "linux"), ("linux", "server")}
    for (a, b), clause in bigrams.items():
        assert clause.boost == pytest.approx(PAIR_BOOST * max(weights[a], weights[b]))
    # stop words stay in the index, so the pair phrases allow for the ones dropped between
    assert [bigrams[k].slop for k in sorted(bigrams)] == [0, 2, 1]


def test_english_question_has_no_gate(analyzer: Analyzer, weigher: TermWeigher) -> None:
    """A long question is a paraphrase: a row holding one of its terms may be the best one
    (the reference sends no minimum_should_match for this branch either)."""
    qa = build_fulltext_query("what similarity laws govern aeroelastic models of heated aircraft", analyzer, weigher)
    assert not qa.is_chinese and qa.min_match == 0.0 and qa.fulltext.minimum_should_match == 0.0
    chunk = analyze_chunk(analyzer, "Flutter tests of aeroelastic wings.")
    assert _passes_gate(qa.fulltext, chunk)
    explicit = build_fulltext_query("what similarity laws govern aeroelastic models", analyzer, weigher, min_match=0.5)
    assert explicit.fulltext.minimum_should_match == 0.5
    assert build_fulltext_query("公司的年假政策", analyzer, weigher).min_match == 0.3


def test_letter_compounds_are_split_codes_kept(analyzer: Analyzer, weigher: TermWeigher) -> None:
    terms = analyzer.tokenize("boundary-layer x-200 two-dimensional and/or v2.5 wing")
    assert split_compounds(analyzer, terms) == ["boundari", "layer", "x-200", "two", "dimension", "and", "or",
                                                "v2.5", "wing"]
    qa = build_fulltext_query("How does the boundary-layer thickness grow on a flat plate?", analyzer, weigher)
    assert qa.terms == ["boundari", "layer", "thick", "grow", "flat", "plate"]
    w = dict(qa.keywords)
    pair = next(c for c in qa.fulltext.clauses if c.terms == ("boundari", "layer"))
    assert pair.slop == 0 and pair.fields is None
    assert pair.boost == pytest.approx(PAIR_BOOST * max(w["boundari"], w["layer"]))
    apart = analyze_chunk(analyzer, "The boundary layer thickness on a flat plate.")
    hyphenated = analyze_chunk(analyzer, "The boundary-layer thickness on a flat plate.")
    for chunk in (apart, hyphenated):
        fields = asdict(chunk)
        assert all(any(t in fields[f] for f in qa.fulltext.fields) for t in ("boundari", "layer"))


def test_short_english_question_takes_the_chinese_branch() -> None:
    assert is_chinese_query("x-200 printer price")
    assert not is_chinese_query("what is the printer price")
    assert is_chinese_query("打印机 的 价格 是 多少 price")


def test_only_stop_words_still_yield_a_query(analyzer: Analyzer, weigher: TermWeigher) -> None:
    for question in ("What is it?", "请问是什么", "the of and to"):
        qa = build_fulltext_query(question, analyzer, weigher)
        assert qa.fulltext.clauses and qa.keywords, question
    empty = build_fulltext_query(" ？！… ", analyzer, weigher)
    assert empty.is_empty and empty.keywords == []


def test_with_min_match(analyzer: Analyzer, weigher: TermWeigher) -> None:
    qa = build_fulltext_query("打印机双面打印分辨率", analyzer, weigher, min_match=0.3)
    relaxed = qa.with_min_match(0.1)
    assert relaxed.fulltext.minimum_should_match == 0.1 and relaxed.min_match == 0.1
    assert relaxed.fulltext.clauses == qa.fulltext.clauses
    assert qa.fulltext.minimum_should_match == 0.3  # original untouched


def test_synonyms_do_not_tighten_the_gate(analyzer: Analyzer, weigher: TermWeigher) -> None:
    synonyms = {"公司": ["企业", "集团公司"], "政策": ["规定"]}
    qa = build_fulltext_query("公司的年假政策", analyzer, weigher, synonyms=synonyms)
    q = qa.fulltext
    w = dict(qa.keywords)
    boosts = {c.terms: c.boost for c in q.clauses}
    assert boosts[("企业",)] == pytest.approx(0.2 * w["公司"])
    assert boosts[("规定",)] == pytest.approx(0.2 * w["政策"])
    assert qa.gate_terms == 4 and qa.synonym_clauses == 3
    n = len(_singles(q))
    assert math.ceil(q.minimum_should_match * n) == math.ceil(0.3 * 4)
    relaxed = qa.with_min_match(0.9).fulltext
    assert math.ceil(relaxed.minimum_should_match * n) == math.ceil(0.9 * 4)
    callable_syn = build_fulltext_query("公司的年假政策", analyzer, weigher, synonyms=lambda t: synonyms.get(t, []))
    assert callable_syn.fulltext == q


def test_keywords_capped(analyzer: Analyzer, weigher: TermWeigher) -> None:
    question = " ".join(f"word{i}x" for i in range(50))
    qa = build_fulltext_query(question, analyzer, weigher)
    assert len(qa.keywords) == MAX_KEYWORDS
    assert len(_singles(qa.fulltext)) == 50  # every term still searched


@pytest.mark.parametrize(
    ("question", "content", "title"),
    [
        (
            "请问公司的年假政策是什么？",
            "员工入职满一年后可以享受五天带薪年假，公司的年假政策由人力资源部制定。",
            "员工手册",
        ),
        ("X-200打印机的双面打印分辨率是多少？", "X-200 型号的打印机支持双面打印，最大分辨率为1200dpi。", "产品说明"),
        (
            "How do I reset the password of a Linux server?",
            "To reset a forgotten password on a Linux server, boot into single-user mode and run passwd.",
            "Server administration",
        ),
        (
            "What were the results of the studies in 2023?",
            "The 2023 studies' results show a 15% improvement.",
            "Annual report",
        ),
        ("中华人民共和国成立于哪一年", "中华人民共和国成立于1949年10月1日。", ""),
    ],
)
def test_query_terms_match_the_analysed_chunk(
    analyzer: Analyzer, weigher: TermWeigher, question: str, content: str, title: str
) -> None:
    chunk = analyze_chunk(analyzer, content, title=title)
    qa = build_fulltext_query(question, analyzer, weigher)
    assert _passes_gate(qa.fulltext, chunk)
    content_terms = set(chunk.content_terms)
    assert sum(t in content_terms for t in qa.terms) >= 0.6 * len(qa.terms)
    # every phrase built from fine pieces matches the chunk's fine terms when its term occurs
    for clause in _phrases(qa.fulltext):
        if clause.fields == FINE_FIELDS and "".join(clause.terms) in content.lower():
            assert _phrase_matches(qa.fulltext, clause, chunk)
    unrelated = analyze_chunk(analyzer, "今天天气很好，我们去公园散步。The weather is nice today.")
    assert not _passes_gate(qa.fulltext, unrelated)


def test_fine_phrase_matches_fine_field(analyzer: Analyzer, weigher: TermWeigher) -> None:
    chunk = analyze_chunk(analyzer, "型号 X-200 的打印机。中华人民共和国于1949年成立。")
    q = build_fulltext_query("x-200 中华人民共和国", analyzer, weigher).fulltext
    fine = [c for c in q.clauses if c.fields == FINE_FIELDS]
    assert {c.terms for c in fine} == {("x", "200"), ("中华", "华人", "人民", "共和", "共和国")}
    assert all(_phrase_matches(q, c, chunk) for c in fine)
