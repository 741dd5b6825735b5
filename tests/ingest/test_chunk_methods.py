"""Section-following chunk methods (title, book, laws, manual, paper), config validation and the
budget properties of every method that has a budget."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ragloom.errors import InvalidRequestError
from ragloom.ingest.blocks import Block, Chunk
from ragloom.ingest.chunkers import ChunkerConfig, chunk_blocks, default_chunkers
from ragloom.ingest.chunkers.headings import detect_family, drop_toc, heading_level
from tests.ingest.chunk_docs import chinese_law, count, numbered_text, structured_blocks
from tests.ingest.docgen import paragraph, sentence

BUDGETED = ["naive", "title", "book", "laws", "manual", "paper", "email"]


def run(method: str, blocks: list[Block], budget: int = 512, **extra: object) -> list[Chunk]:
    return chunk_blocks(blocks, ChunkerConfig.parse({"method": method, "chunk_token_num": budget, **extra}), count)


def indivisible_row(chunk: Chunk) -> bool:
    return chunk.kind == "table" and "\n" not in chunk.text.split("\n", 1)[-1]


def test_every_method_is_registered() -> None:
    assert set(default_chunkers().names) == {
        "naive", "title", "book", "laws", "manual", "paper", "qa", "table", "presentation", "picture", "one",
        "email", "tag",
    }


# --- budget properties --------------------------------------------------------------------------------------


def documents(seed: int) -> list[list[Block]]:
    return [structured_blocks(seed), numbered_text(seed), chinese_law(seed)[0]]


@pytest.mark.parametrize("method", BUDGETED)
@pytest.mark.parametrize("seed", range(8))
def test_no_chunk_exceeds_the_budget(method: str, seed: int) -> None:
    for blocks in documents(seed):
        for budget in (16, 40, 128, 512):
            for chunk in run(method, blocks, budget):
                assert count(chunk.text) <= budget or indivisible_row(chunk), (method, budget, chunk.text)


@pytest.mark.parametrize("method", BUDGETED)
@pytest.mark.parametrize("seed", range(8))
def test_a_larger_budget_never_yields_more_chunks(method: str, seed: int) -> None:
    for blocks in documents(seed):
        counts = [len(run(method, blocks, n)) for n in range(16, 400, 23)]
        assert counts == sorted(counts, reverse=True), (method, counts)


@pytest.mark.parametrize("method", ["title", "book", "manual", "paper"])
@pytest.mark.parametrize("seed", range(6))
def test_structure_methods_lose_no_words(method: str, seed: int) -> None:
    blocks = [b for b in structured_blocks(seed) if b.kind != "table"]
    words = {w for b in blocks for w in b.text.split()}
    for budget in (24, 300):
        seen = {w for c in run(method, blocks, budget, heading_prefix=False) for w in c.text.split()}
        assert words <= seen, (method, budget, words - seen)


# --- title -----------------------------------------------------------------------------------------------------


def _guide() -> list[Block]:
    rng = random.Random(5)
    return [
        Block(text="Guide", kind="title", level=1),
        Block(text="Install", kind="title", level=2, heading_path=("Guide",)),
        Block(text="Linux", kind="title", level=3, heading_path=("Guide", "Install")),
        Block(text=paragraph(rng, 2), heading_path=("Guide", "Install", "Linux")),
        Block(text="Windows", kind="title", level=3, heading_path=("Guide", "Install")),
        Block(text=paragraph(rng, 2), heading_path=("Guide", "Install", "Windows")),
        Block(text="Usage", kind="title", level=2, heading_path=("Guide",)),
        Block(text=" ".join(f"Step {i} runs the tool." for i in range(40)), heading_path=("Guide", "Usage")),
    ]


def test_title_gives_one_chunk_per_section_with_its_heading_path() -> None:
    chunks = run("title", _guide(), 60)
    assert chunks[0].text.startswith("Guide\nInstall\nLinux\n")  # bare headings go with the first section
    assert chunks[1].text.startswith("Guide > Install\nWindows\n")
    usage = [c for c in chunks if "Step" in c.text]
    assert len(usage) > 1 and usage[0].text.startswith("Guide\nUsage\nStep 0")
    assert all(c.text.startswith("Guide > Usage\nStep") for c in usage[1:])  # oversize: re-split, prefix kept
    assert all(count(c.text) <= 60 for c in chunks) and all(c.method == "title" for c in chunks)
    assert not any("Linux" in c.text and "Windows" in c.text for c in chunks)  # sections never share a chunk


def test_title_depth_keeps_deeper_headings_inside() -> None:
    chunks = run("title", _guide(), 2000, title_depth=2)
    assert [c.text.split("\n")[:2] for c in chunks] == [["Guide", "Install"], ["Guide", "Usage"]]
    assert "Linux" in chunks[0].text and "Windows" in chunks[0].text


def test_title_on_plain_text_uses_numbered_headings() -> None:
    text = "1 Scope\nThis applies to all.\n1.1 Terms\nA term means a word.\n2 Rules\nFollow them."
    chunks = run("title", [Block(text=text)])
    assert [c.text for c in chunks] == ["1 Scope\nThis applies to all.", "1 Scope\n1.1 Terms\nA term means a word.",
                                        "2 Rules\nFollow them."]


def test_title_with_markdown_through_the_parser(tmp_path: Path) -> None:
    from ragloom.ingest.parsers import parse_document

    md = "# Manual\n\n## Setup\n\nPlug it in. Switch it on.\n\n## Care\n\nWipe it dry.\n"
    blocks = parse_document(md.encode(), "m.md").blocks
    assert [c.text for c in run("title", blocks)] == ["Manual\nSetup\nPlug it in. Switch it on.",
                                                      "Manual\nCare\nWipe it dry."]


# --- book ---------------------------------------------------------------------------------------------------------


def test_heading_families_and_levels() -> None:
    assert heading_level("1.2.3 Deep", "numeric") == 6 - 1  # 第N章, 第N节, 1, 1.1, 1.1.1 → level 5
    assert heading_level("1.2 Mid", "numeric") == 4 and heading_level("3 Top", "numeric") == 3
    assert heading_level("2024 was a year", "numeric") is None
    assert heading_level("第十二条 内容", "chinese") == 4 and heading_level("第三章 总则", "chinese") == 2
    assert heading_level("Article 7. Scope", "english") == 4 and heading_level("CHAPTER IV", "english") == 2
    assert detect_family(["第一章 总则", "第一条 x", "1 thing"]) == "chinese"
    assert detect_family(["just prose.", "more prose."]) is None


def test_book_drops_the_table_of_contents_and_packs_sections() -> None:
    rng = random.Random(3)
    body = [paragraph(rng, 1) for _ in range(4)]
    text = "\n".join(["Table of Contents", "1 Beginnings ........ 1", "2 Endings ........ 9",
                      "1 Beginnings", body[0], "1.1 Roots", body[1], "2 Endings", body[2], "2.1 Leaves", body[3]])
    chunks = run("book", [Block(text=text)], 2000)
    joined = "\n".join(c.text for c in chunks)
    assert "........" not in joined and "Table of Contents" not in joined
    assert len(chunks) == 1 and joined.startswith("1 Beginnings\n")  # all sections fit one chunk
    small = run("book", [Block(text=text)], max(count(b) for b in body) + 8)
    assert all(count(c.text) <= max(count(b) for b in body) + 8 for c in small)
    assert [c.text.split("\n")[:-1] for c in small] == [
        ["1 Beginnings"], ["1 Beginnings", "1.1 Roots"], ["2 Endings"], ["2 Endings", "2.1 Leaves"]]


def test_drop_toc_keeps_a_document_without_one() -> None:
    blocks = [Block(text="Intro"), Block(text="Contents of the box: a lamp.")]
    assert drop_toc(blocks) == blocks


def test_book_without_headings_is_naive() -> None:
    blocks = [Block(text=paragraph(random.Random(1), 6))]
    assert [c.text for c in run("book", blocks, 40)] == [c.text for c in run("naive", blocks, 40)]


# --- laws ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_laws_make_one_chunk_per_article_with_its_chapter(seed: int) -> None:
    blocks, truth = chinese_law(seed)
    chunks = run("laws", blocks, 512)
    assert [c.text for c in chunks] == [f"{chapter}\n{article}" for chapter, article in truth]
    assert all(c.heading_path == (chapter,) for c, (chapter, _) in zip(chunks, truth, strict=True))


def test_laws_in_english_with_parts_and_items_inside_articles() -> None:
    text = "\n".join([
        "CHAPTER I General provisions",
        "Article 1. This Regulation lays down rules on data.",
        "(a) first item stays inside;",
        "Article 2. It applies to processing.",
        "CHAPTER II Principles",
        "Article 3. Data shall be processed lawfully.",
    ])
    chunks = run("laws", [Block(text=text)])
    assert [c.text for c in chunks] == [
        "CHAPTER I General provisions\nArticle 1. This Regulation lays down rules on data.\n"
        "(a) first item stays inside;",
        "CHAPTER I General provisions\nArticle 2. It applies to processing.",
        "CHAPTER II Principles\nArticle 3. Data shall be processed lawfully.",
    ]


def test_a_long_article_is_split_and_every_part_keeps_its_ancestors() -> None:
    blocks, truth = chinese_law(2, articles_per_chapter=1)
    long_article = "第九十九条 " + "数据处理者应当履行义务。" * 30
    blocks = [Block(text=blocks[0].text + "\n" + long_article)]
    chunks = run("laws", blocks, 60)
    parts = [c for c in chunks if "履行义务" in c.text]
    assert len(parts) > 1 and all(c.text.startswith(truth[-1][0] + "\n") for c in parts)
    assert all(count(c.text) <= 60 for c in chunks)


# --- manual -----------------------------------------------------------------------------------------------------


def test_manual_packs_subsections_but_not_across_top_sections() -> None:
    blocks = [
        Block(text="Product", kind="title", level=1),
        Block(text="Setup", kind="title", level=2, heading_path=("Product",)),
        Block(text="Unpack.", heading_path=("Product", "Setup")),
        Block(text="Plug", kind="title", level=3, heading_path=("Product", "Setup")),
        Block(text="Plug it in.", heading_path=("Product", "Setup", "Plug")),
        Block(text="Care", kind="title", level=2, heading_path=("Product",)),
        Block(text="Wipe it.", heading_path=("Product", "Care")),
    ]
    chunks = run("manual", blocks, 200)
    assert [c.text for c in chunks] == ["Product\nSetup\nUnpack.\nPlug\nPlug it in.", "Product\nCare\nWipe it."]


# --- paper ------------------------------------------------------------------------------------------------------


def test_paper_front_matter_abstract_and_sections() -> None:
    rng = random.Random(8)
    blocks = [Block(text="Deep Rivers", kind="title", level=1), Block(text="Ann Lee, Bo Chen"),
              Block(text="Abstract", kind="title", level=2, heading_path=("Deep Rivers",)),
              Block(text=paragraph(rng, 2), heading_path=("Deep Rivers", "Abstract"))]
    for name in ("Introduction", "Method", "Results"):
        blocks.append(Block(text=name, kind="title", level=2, heading_path=("Deep Rivers",)))
        blocks.append(Block(text="Details", kind="title", level=3, heading_path=("Deep Rivers", name)))
        blocks.append(Block(text=paragraph(rng, 2), heading_path=("Deep Rivers", name, "Details")))
    chunks = run("paper", blocks, 400)
    assert chunks[0].text == "Deep Rivers\nAnn Lee, Bo Chen" and chunks[0].important_keywords == []
    assert chunks[1].text.startswith("Deep Rivers\nAbstract\n") and chunks[1].important_keywords == ["abstract"]
    assert [c.text.split("\n")[1] for c in chunks[2:]] == ["Introduction", "Method", "Results"]


def test_paper_abstract_as_a_labelled_paragraph() -> None:
    blocks = [Block(text="A Study"), Block(text="Abstract: we study " + sentence(random.Random(1))),
              Block(text="1 Introduction"), Block(text="Text one."), Block(text="2 Method"), Block(text="Text two.")]
    chunks = run("paper", blocks)
    assert chunks[0].text == "A Study"
    assert chunks[1].important_keywords == ["abstract"] and "we study" in chunks[1].text
    assert [c.text for c in chunks[2:]] == ["1 Introduction\nText one.", "2 Method\nText two."]


# --- config ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("data", "field"), [
    ({"title_depth": 0}, "title_depth"),
    ({"title_depth": "deep"}, "title_depth"),
    ({"picture_min_chars": -1}, "picture_min_chars"),
    ({"children_delimiter": "`x"}, "children_delimiter"),
    ({"method": "qa", "children_delimiter": "\n"}, "children_delimiter"),
    ({"method": "qa", "toc_extraction": True}, "toc_extraction"),
    ({"toc_extraction": "maybe"}, "toc_extraction"),
    ({"chunk_token_num": 20000}, "chunk_token_num"),
    ({"bogus_option": 1}, "bogus_option"),
])
def test_bad_parameters_name_the_field(data: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidRequestError, match=field):
        ChunkerConfig.parse(data)


def test_methods_stamp_their_name_and_order() -> None:
    blocks = structured_blocks(1)
    for method in BUDGETED:
        chunks = run(method, blocks, 64)
        assert [c.order for c in chunks] == list(range(len(chunks)))
        assert {c.method for c in chunks} == {method}
