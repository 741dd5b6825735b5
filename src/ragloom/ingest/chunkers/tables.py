"""Table chunks: a table is its own chunk, split by rows when over the budget.

A table block's text holds one line per body row and its HTML one ``<tr>`` per
body row in ``<tbody>`` (see ``parsers.common.table_text_and_html``); a part
gets the header plus its own rows as HTML. A single row longer than the budget
is indivisible and forms a chunk alone.
"""

from __future__ import annotations

from lxml import etree
from lxml import html as lxml_html

from ragloom.ingest.blocks import Block, Chunk
from ragloom.ingest.chunkers._atoms import TokenCounter


def _html_parts(html: str | None, n_rows: int, groups: list[tuple[int, int]]) -> list[str | None]:
    if not html:
        return [None] * len(groups)
    table = lxml_html.fragment_fromstring(html)
    head = table.find("thead")
    body = table.find("tbody")
    rows = list(body) if body is not None else table.findall(".//tr")
    if len(rows) != n_rows:
        return [None] * len(groups)
    head_html = etree.tostring(head, encoding="unicode") if head is not None else ""
    out: list[str | None] = []
    for a, b in groups:
        trs = "".join(etree.tostring(r, encoding="unicode") for r in rows[a : b + 1])
        out.append(f"<table>{head_html}<tbody>{trs}</tbody></table>")
    return out


def table_chunks(block: Block, counter: TokenCounter, capacity: float, prefix: str) -> list[Chunk]:
    """Chunks of one table block (``order`` is set by the caller)."""
    from ragloom.ingest.chunkers.naive import min_cuts

    rows = block.text.split("\n")
    lead = f"{prefix}\n" if prefix else ""
    if counter.count(block.text) <= capacity:  # the prefix lives in the reserve, outside `capacity`
        groups = [(0, len(rows) - 1)]
    else:
        ends = min_cuts([counter.count(r) for r in rows], [1] * len(rows), capacity)
        groups = [(a, b) for a, b in zip([0] + [e + 1 for e in ends[:-1]], ends, strict=True)]
    htmls = [block.html] if len(groups) == 1 else _html_parts(block.html, len(rows), groups)
    return [
        Chunk(text=lead + "\n".join(rows[a : b + 1]), order=0, positions=block.positions(),
              heading_path=block.heading_path, kind="table", html=html)
        for (a, b), html in zip(groups, htmls, strict=True)
    ]
