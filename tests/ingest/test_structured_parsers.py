"""DOCX, Markdown, HTML and plain-text parsers."""

from __future__ import annotations

from pathlib import Path

from ragloom.ingest.parsers import parse_document
from tests.ingest.docgen import make_docx, make_html, make_text


def _parse(path: Path):
    return parse_document(path.read_bytes(), path.name)


def test_docx_headings_paragraphs_and_tables_in_body_order(tmp_path: Path) -> None:
    make_docx(tmp_path / "d.docx", [
        ("title", "Staff Handbook"),
        ("h1", "Leave"),
        ("p", "Employees get twenty days of leave."),
        ("table", [["Grade", "Days"], ["Junior", "20"], ["Senior", "25"]]),
        ("h2", "Sick leave"),
        ("bullet", "Tell your manager before ten."),
        ("h1", "Travel"),
        ("p", "Book trains in advance."),
    ])
    doc = _parse(tmp_path / "d.docx")
    kinds = [(b.kind, b.level, b.text.split("\n")[0]) for b in doc.blocks]
    assert kinds == [
        ("title", 1, "Staff Handbook"),
        ("title", 2, "Leave"),
        ("text", 0, "Employees get twenty days of leave."),
        ("table", 0, "Grade: Junior — Days: 20"),
        ("title", 3, "Sick leave"),
        ("list", 0, "Tell your manager before ten."),
        ("title", 2, "Travel"),
        ("text", 0, "Book trains in advance."),
    ]
    table = doc.blocks[3]
    assert table.text == "Grade: Junior — Days: 20\nGrade: Senior — Days: 25"
    assert table.html.startswith("<table><thead><tr><th>Grade</th><th>Days</th></tr></thead>")
    assert table.html.count("<tr>") == 3
    assert doc.blocks[5].heading_path == ("Staff Handbook", "Leave", "Sick leave")
    assert doc.blocks[7].heading_path == ("Staff Handbook", "Travel")
    assert doc.title == "Staff Handbook"


def test_docx_without_title_uses_heading_numbers_as_levels(tmp_path: Path) -> None:
    make_docx(tmp_path / "d.docx", [("h1", "Intro"), ("p", "Hello."), ("h2", "Detail"), ("p", "More.")])
    doc = _parse(tmp_path / "d.docx")
    assert [(b.kind, b.level) for b in doc.blocks if b.kind == "title"] == [("title", 1), ("title", 2)]
    assert doc.blocks[-1].heading_path == ("Intro", "Detail")


MARKDOWN = """# Guide

Intro paragraph with **bold** and `code`.

## Install

- step one
- step two
  - nested step

```python
def hello():

    return "world"
```

| Name | Port |
|------|------|
| web  | 80   |
| db   | 5432 |

## Use

Run it.
"""


def test_markdown_heading_paths_lists_tables_and_whole_code(tmp_path: Path) -> None:
    make_text(tmp_path / "g.md", MARKDOWN)
    doc = _parse(tmp_path / "g.md")
    by_kind = {b.kind: b for b in doc.blocks if b.kind != "title"}
    assert doc.title == "Guide"
    assert doc.blocks[1].text == "Intro paragraph with bold and code." and doc.blocks[1].heading_path == ("Guide",)
    assert by_kind["list"].text == "- step one\n- step two\n  - nested step"
    code = by_kind["code"]
    assert code.text == '```python\ndef hello():\n\n    return "world"\n```'  # blank line kept: one block
    assert code.heading_path == ("Guide", "Install")
    table = by_kind["table"]
    assert table.text == "Name: web — Port: 80\nName: db — Port: 5432" and "<th>Port</th>" in table.html
    use = [b for b in doc.blocks if b.text == "Run it."][0]
    assert use.heading_path == ("Guide", "Use")


HTML_BODY = """
<header><a href="/">Home</a> | <a href="/about">About us</a></header>
<nav><ul><li>Menu item alpha</li><li>Menu item beta</li></ul></nav>
<main>
  <h1>Quarterly results</h1>
  <p>Revenue grew <b>twelve</b> percent.</p>
  <div>Loose text in a div.<script>var tracking = 1;</script></div>
  <h2>Regions</h2>
  <ul><li>North up</li><li>South flat</li></ul>
  <table><tr><th>Region</th><th>Growth</th></tr><tr><td>North</td><td>15%</td></tr></table>
  <pre>x = 1
y = 2</pre>
</main>
<aside>Related: other stories</aside>
<footer>Copyright 2026 Example Corp</footer>
"""


def test_html_main_text_without_navigation_or_footer(tmp_path: Path) -> None:
    make_html(tmp_path / "p.html", HTML_BODY, title="Results page")
    doc = _parse(tmp_path / "p.html")
    all_text = "\n".join(b.text for b in doc.blocks)
    for boilerplate in ("Home", "Menu item", "Copyright", "Related", "tracking"):
        assert boilerplate not in all_text
    assert doc.title == "Results page"
    assert [(b.kind, b.text) for b in doc.blocks[:3]] == [
        ("title", "Quarterly results"), ("text", "Revenue grew twelve percent."), ("text", "Loose text in a div."),
    ]
    assert doc.blocks[4].kind == "list" and doc.blocks[4].heading_path == ("Quarterly results", "Regions")
    assert doc.blocks[5].kind == "table" and doc.blocks[5].text == "Region: North; Growth: 15%"
    assert doc.blocks[6].kind == "code" and doc.blocks[6].text == "x = 1\ny = 2"


def test_html_without_main_prefers_article_and_detects_gb18030(tmp_path: Path) -> None:
    body = "<div>侧边栏广告</div><article><h1>公告</h1><p>本周五下午三点召开全体会议。</p></article>"
    make_html(tmp_path / "n.html", body, charset=None)
    (tmp_path / "n.html").write_bytes((tmp_path / "n.html").read_text().encode("gb18030"))
    doc = _parse(tmp_path / "n.html")
    assert [b.text for b in doc.blocks] == ["公告", "本周五下午三点召开全体会议。"]


def test_txt_in_gb18030_and_utf16(tmp_path: Path) -> None:
    text = "第一段：数据治理方案。\n第二行继续。\n\n第二段：检索增强生成。\r\n"
    make_text(tmp_path / "a.txt", text, encoding="gb18030")
    doc = _parse(tmp_path / "a.txt")
    assert [b.text for b in doc.blocks] == ["第一段：数据治理方案。\n第二行继续。", "第二段：检索增强生成。"]
    assert doc.metadata["encoding"] == "gb18030"
    make_text(tmp_path / "b.txt", text, encoding="utf-16")
    doc16 = _parse(tmp_path / "b.txt")
    assert [b.text for b in doc16.blocks] == [b.text for b in doc.blocks]
    assert doc16.metadata["encoding"].startswith("utf-16")
    make_text(tmp_path / "c.txt", "Fa\u00e7ade caf\u00e9 na\u00efve.", encoding="cp1252")
    assert _parse(tmp_path / "c.txt").blocks[0].text == "Façade café naïve."
