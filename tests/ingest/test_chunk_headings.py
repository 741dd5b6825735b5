"""Headings in chunks (issue 11, structure): no chunk is headings alone that the next chunk repeats
(a heading before a table, in custom-delimiter mode, a paper's title before its abstract); the table
method names a sheet once; ``one`` keeps the headings that exist only as heading paths (sheet names)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ragloom.ingest.blocks import Block, Chunk, Table
from ragloom.ingest.chunkers import ChunkerConfig, chunk_blocks
from ragloom.ingest.coverage import measure, words
from ragloom.ingest.parsers import parse_document
from tests.ingest.chunk_docs import box, count, structured_blocks
from tests.ingest.docgen import make_docx_rich, make_html, make_text, make_xlsx

DOCUMENT_METHODS = ["naive", "title", "book", "laws", "manual", "paper", "one", "email"]
ROWS = [["part", "torque"], ["P-1", "10 Nm"], ["P-2", "11 Nm"]]


def run(method: str, blocks: list[Block], budget: int = 512, **extra: object) -> list[Chunk]:
    return chunk_blocks(blocks, ChunkerConfig.parse({"method": method, "chunk_token_num": budget, **extra}), count)


def repeated_heading_chunks(chunks: list[Chunk], blocks: list[Block]) -> list[str]:
    """Chunks whose every line is a heading (a title, or a heading path "A > B") and whose headings
    all head the next chunk too (in its heading path, their words in its text)."""
    heads: set[str] = set()
    for block in blocks:
        path = tuple(p.strip() for p in block.heading_path)
        if block.kind == "title":
            path += (block.text.strip(),)
        heads.update(" > ".join(path[i:j]) for i in range(len(path)) for j in range(i + 1, len(path) + 1))
    bad = []
    for chunk, nxt in zip(chunks, chunks[1:], strict=False):
        lines = [line.strip() for line in chunk.text.split("\n") if line.strip()]
        names = {name.strip() for line in lines for name in line.split(" > ")}
        if all(line in heads for line in lines) and names <= set(nxt.heading_path) \
                and not words(chunk.text) - words(nxt.text):
            bad.append(chunk.text)
    return bad


def _docx(path: Path) -> None:
    make_docx_rich(path, [("p", "Some text before the results."), ("h1", "Results"), ("table", ROWS)])


def _html(path: Path) -> None:
    make_html(path, "<p>Some text before the results.</p><h1>Results</h1><table>"
                    + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in ROWS) + "</table>")


def _markdown(path: Path) -> None:
    make_text(path, "Some text before the results.\n\n# Results\n\n| part | torque |\n|---|---|\n| P-1 | 10 Nm |\n"
                    "| P-2 | 11 Nm |\n")


HEADED_TABLES: dict[str, Callable[[Path], None]] = {"r.docx": _docx, "r.html": _html, "r.md": _markdown}


@pytest.mark.parametrize("name", sorted(HEADED_TABLES))
def test_a_heading_before_a_table_goes_with_the_table(name: str, tmp_path: Path) -> None:
    HEADED_TABLES[name](tmp_path / name)
    blocks = parse_document((tmp_path / name).read_bytes(), name).blocks
    assert [b.kind for b in blocks][-2:] == ["title", "table"] and blocks[-1].heading_path == ("Results",)
    for method in DOCUMENT_METHODS:
        for extra in ({}, {"heading_prefix": False}, {"delimiter": "`##`"}):
            chunks = run(method, blocks, 96, **extra)
            texts = [c.text for c in chunks]
            assert "Results" not in texts, (method, extra, texts)
            if method != "one":
                assert texts[-1].startswith("Results\n") and "P-2" in texts[-1], (method, extra, texts)
                assert chunks[-1].kind == "table" and chunks[-1].heading_path == ("Results",)
            assert measure(blocks, chunks, method=method).ratio == 1.0, (method, extra)


def test_the_folded_heading_joins_the_first_table_part_within_the_budget() -> None:
    long = "Alpha beta gamma delta epsilon zeta eta theta"
    rows = [f"k: {i}; v: {i * i}" for i in range(12)]
    blocks = [Block(text="Intro text here.", boxes=box(1)), Block(text=long, kind="title", level=1, boxes=box(2)),
              Block(text="Results", kind="title", level=2, heading_path=(long,), boxes=box(3)),
              Block(text="\n".join(rows), kind="table", heading_path=(long, "Results"), boxes=box(4))]
    for extra in ({}, {"heading_prefix": False}):
        for budget in (20, 40, 512):
            chunks = run("naive", blocks, budget, **extra)
            assert [c.kind for c in chunks] == ["text"] + ["table"] * (len(chunks) - 1), (extra, budget)
            first = chunks[1]
            assert first.text.startswith(f"{long} > Results\nk: 0;"), (extra, budget, first.text)
            assert first.positions == [p for b in blocks[1:] for p in b.positions()]
            assert all(c.positions == blocks[3].positions() for c in chunks[2:])
            assert all(count(c.text) <= budget for c in chunks), (extra, budget)
            assert measure(blocks, chunks).ratio == 1.0
        counts = [len(run("naive", blocks, n, **extra)) for n in range(16, 200, 7)]
        assert counts == sorted(counts, reverse=True), (extra, counts)


def test_custom_delimiters_keep_titles_with_the_next_segment() -> None:
    blocks = [Block(text="Guide", kind="title", level=1),
              Block(text="Setup", kind="title", level=2, heading_path=("Guide",)),
              Block(text="First step##Second step", heading_path=("Guide", "Setup")),
              Block(text="Parts", kind="title", level=2, heading_path=("Guide",)),
              Block(text="a: 1", kind="table", heading_path=("Guide", "Parts"),
                    table=Table(header=["a"], rows=[["1"]])),
              Block(text="Epilogue", kind="title", level=1)]
    chunks = run("naive", blocks, 100, delimiter="`##`")
    assert [c.text for c in chunks] == ["Guide\nSetup\nFirst step", "Guide > Setup\nSecond step",
                                        "Guide > Parts\na: 1", "Epilogue"]
    assert measure(blocks, chunks).ratio == 1.0


def test_a_papers_title_goes_with_its_abstract() -> None:
    blocks = [Block(text="Deep Pumps", kind="title", level=1),
              Block(text="Abstract", kind="title", level=2, heading_path=("Deep Pumps",)),
              Block(text="We study pumps. They pump.", heading_path=("Deep Pumps", "Abstract")),
              Block(text="Introduction", kind="title", level=2, heading_path=("Deep Pumps",)),
              Block(text="Pumps are old.", heading_path=("Deep Pumps", "Introduction"))]
    chunks = run("paper", blocks, 64)
    assert [c.text for c in chunks] == ["Deep Pumps\nAbstract\nWe study pumps. They pump.",
                                        "Deep Pumps\nIntroduction\nPumps are old."]
    assert chunks[0].important_keywords == ["abstract"] and not chunks[1].important_keywords
    authors = [blocks[0], Block(text="A. Author, B. Author", heading_path=("Deep Pumps",)), *blocks[1:]]
    assert run("paper", authors, 64)[0].text == "Deep Pumps\nA. Author, B. Author"  # front matter with text stays


@pytest.mark.parametrize("seed", range(10))
def test_no_method_emits_headings_the_next_chunk_repeats(seed: int) -> None:
    blocks = structured_blocks(seed)
    for method in DOCUMENT_METHODS:
        for extra in ({}, {"heading_prefix": False}, {"delimiter": "`##`"}):
            for budget in (24, 128):
                chunks = run(method, blocks, budget, **extra)
                assert not repeated_heading_chunks(chunks, blocks), (method, extra, budget)
                assert measure(blocks, chunks, method=method).ratio == 1.0, (method, extra, budget)


# --- sheets: table and one --------------------------------------------------------------------------------------


def _workbook(tmp_path: Path) -> list[Block]:
    make_xlsx(tmp_path / "w.xlsx", {"Sales": [["Sales report 2024"], ["region", "amount"], ["North", 10],
                                              ["South", 12]],
                                    "Costs": [["item", "cost"], ["rent", 5]]})
    return parse_document((tmp_path / "w.xlsx").read_bytes(), "w.xlsx").blocks


def test_the_table_method_names_a_sheet_once(tmp_path: Path) -> None:
    table = Table(header=["a"], rows=[["1"]])
    titled = Block(text="a: 1", kind="table", table=table, heading_path=("Sales", "Sales report 2024"),
                   meta={"sheet": "Sales"})
    [chunk] = run("table", [titled])
    assert chunk.heading_path == ("Sales", "Sales report 2024")
    bare = Block(text="a: 1", kind="table", table=table, meta={"sheet": "Sales"})
    assert run("table", [bare])[0].heading_path == ("Sales",)
    paths = {c.heading_path for c in run("table", _workbook(tmp_path))}
    assert all(len(set(p)) == len(p) for p in paths) and {p[0] for p in paths} == {"Sales", "Costs"}


def test_one_keeps_the_sheet_names_of_a_workbook(tmp_path: Path) -> None:
    blocks = _workbook(tmp_path)
    assert not any(b.kind == "title" for b in blocks)
    [chunk] = run("one", blocks)
    lines = chunk.text.split("\n")
    assert lines[:2] == ["Sales", "Sales report 2024"] and "Costs" in lines
    assert lines.index("Costs") > max(i for i, line in enumerate(lines) if "North" in line or "South" in line)
    assert measure(blocks, [chunk], method="one").ratio == 1.0


def test_one_repeats_no_heading_a_title_block_gave(tmp_path: Path) -> None:
    _docx(tmp_path / "r.docx")
    blocks = parse_document((tmp_path / "r.docx").read_bytes(), "r.docx").blocks
    [chunk] = run("one", blocks)
    assert chunk.text == "\n".join(b.text.strip() for b in blocks if b.text.strip())
    assert chunk.text.count("Results") == 1
