"""HTML tables with spans, Markdown tables and code, EPUB chapters in spine order."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragloom.errors import ParseError
from ragloom.ingest.parsers import detect_type, parse_document
from ragloom.ingest.parsers.sniff import EPUB
from tests.ingest.docgen import make_epub, make_html

SPANNED = """
<nav><a href="/">Home</a></nav>
<main>
<h1>Price list</h1>
<table><caption>Prices per year</caption>
<thead><tr><th rowspan="2">Item</th><th colspan="2">Price</th></tr><tr><th>2023</th><th>2024</th></tr></thead>
<tbody><tr><td rowspan="2">Tea</td><td>1.10</td><td>1.20</td></tr>
<tr><td colspan="2">1.50</td></tr>
<tr><td>Coffee</td><td>2.00</td><td>2.40</td></tr></tbody></table>
</main>
<footer>Copyright</footer>
"""


def test_html_table_spans_are_expanded_under_their_headers(tmp_path: Path) -> None:
    make_html(tmp_path / "p.html", SPANNED)
    doc = parse_document((tmp_path / "p.html").read_bytes(), "p.html")
    assert [b.kind for b in doc.blocks] == ["title", "text", "table"]
    assert doc.blocks[1].text == "Prices per year" and doc.blocks[1].meta == {"caption_of": "table"}
    table = doc.blocks[2]
    assert table.table.header == ["Item", "Price › 2023", "Price › 2024"]
    assert table.table.header_paths == [("Item",), ("Price", "2023"), ("Price", "2024")]
    assert table.table.rows == [["Tea", "1.10", "1.20"], ["Tea", "1.50", "1.50"], ["Coffee", "2.00", "2.40"]]
    assert table.text.split("\n")[1] == "Item: Tea — Price › 2023: 1.50; Price › 2024: 1.50"
    assert table.meta["caption"] == table.table.caption == "Prices per year"
    assert table.heading_path == ("Price list",)
    assert "Home" not in " ".join(b.text for b in doc.blocks)


def test_markdown_tables_fill_the_table_and_code_keeps_its_language() -> None:
    text = "# Ports\n\n| Service | Port |\n|---|---|\n| web | 80 |\n| db | 5432 |\n\n```yaml\nport: 80\n```\n"
    doc = parse_document(text.encode(), "ports.md")
    title, table, code = doc.blocks
    assert table.table.header == ["Service", "Port"] and table.table.rows == [["web", "80"], ["db", "5432"]]
    assert table.text == "Service: web — Port: 80\nService: db — Port: 5432"
    assert code.kind == "code" and code.meta["language"] == "yaml" and "port: 80" in code.text
    assert code.heading_path == ("Ports",)


def test_epub_chapters_follow_the_spine_not_the_manifest(tmp_path: Path) -> None:
    make_epub(tmp_path / "b.epub", "The Pump Book", [
        ("intro.xhtml", "<h1>Introduction</h1><p>Why pumps matter.</p>"),
        ("cover.xhtml", '<img src="cover.png" alt=""/>'),
        ("ch1.xhtml", "<h1>Chapter 1</h1><h2>Priming</h2><p>Fill the casing first.</p>"),
    ], spine=[1, 0, 2])
    data = (tmp_path / "b.epub").read_bytes()
    assert detect_type("book.zip", data) == EPUB
    doc = parse_document(data, "book.zip")
    assert doc.title == "The Pump Book"
    assert [b.text for b in doc.blocks] == [
        "Introduction", "Why pumps matter.", "Chapter 1", "Priming", "Fill the casing first.",
    ]
    assert doc.blocks[-1].heading_path == ("Chapter 1", "Priming")
    assert doc.blocks[0].meta["chapter"] == "2" and doc.blocks[-1].meta["href"] == "OEBPS/text/ch1.xhtml"


def test_epub_without_package_document_is_a_parse_error(tmp_path: Path) -> None:
    import zipfile

    with zipfile.ZipFile(tmp_path / "bad.epub", "w") as zf:
        zf.writestr("mimetype", "application/epub+zip")
        zf.writestr("META-INF/container.xml", "<container/>")
    with pytest.raises(ParseError, match="not a valid EPUB: the container names no package document"):
        parse_document((tmp_path / "bad.epub").read_bytes(), "bad.epub")
