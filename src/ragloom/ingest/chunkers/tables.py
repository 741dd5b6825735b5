"""Table chunks: a table is its own chunk, split by rows when over the budget.

A table block's text holds one line per body row and its HTML one ``<tr>`` per
body row in ``<tbody>`` (see ``parsers.common.table_text_and_html``); a part
gets the header plus its own rows as HTML. A single row longer than the budget
is indivisible and forms a chunk alone — unless it is longer than
``max_chunk_chars``: it is then cut between cells into pieces of at most that
many characters (with no HTML), never embedded whole.

Headings folded into a table (the section titles that open right before it, which
would otherwise form a chunk of their own) lead its first part: ``first_prefix``
replaces the heading prefix there, and their boxes join that part's positions. The
table's caption follows them, so the table's numbers are found with the words that
say what they measure.
"""

from __future__ import annotations

from collections.abc import Sequence

from lxml import etree
from lxml import html as lxml_html

from ragloom.ingest.blocks import Block, Chunk, ChunkKind, Position
from ragloom.ingest.chunkers._atoms import TokenCounter
from ragloom.ingest.chunkers.cuts import min_cuts
from ragloom.ingest.chunkers.oversize import split_row
from ragloom.ingest.guard import limits

MIN_PIECE_CHARS = 100  # a piece of a long row holds at least this many characters, whatever the prefix


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


def table_chunks(block: Block, counter: TokenCounter, capacity: float, prefix: str, *,
                 first_prefix: str | None = None, first_positions: Sequence[Position] = (),
                 caption: str = "") -> list[Chunk]:
    """Chunks of one table block (``order`` is set by the caller); ``capacity`` leaves out the prefix, and
    ``first_prefix`` (headings folded in) leads the first part in place of ``prefix``, followed by
    the table's ``caption`` ("Table 2: ...", its positions among ``first_positions``)."""
    rows = block.text.split("\n")
    lead = f"{prefix}\n" if prefix else ""
    first_lead = lead if first_prefix is None else (f"{first_prefix}\n" if first_prefix else "")
    if caption:
        first_lead += f"{caption}\n"
        capacity = max(1.0, capacity - counter.count(caption))
    max_chars = max(MIN_PIECE_CHARS, limits().max_chunk_chars - max(len(lead), len(first_lead)))
    # the prefix lives in the reserve, outside `capacity`
    if len(block.text) <= max_chars and counter.count(block.text) <= capacity:
        parts: list[tuple[int, int] | str] = [(0, len(rows) - 1)]
    else:
        parts = _parts(rows, counter, capacity, max_chars)
    groups = [p for p in parts if isinstance(p, tuple)]
    htmls = iter([block.html] if parts == groups and len(groups) == 1 else _html_parts(block.html, len(rows), groups))
    own = block.positions()
    return [
        Chunk(text=(first_lead if k == 0 else lead) + ("\n".join(rows[p[0] : p[1] + 1]) if isinstance(p, tuple) else p),
              order=0, positions=[*first_positions, *(q for q in own if q not in first_positions)] if k == 0 else own,
              heading_path=block.heading_path, kind=ChunkKind.TABLE,
              html=next(htmls) if isinstance(p, tuple) else None)
        for k, p in enumerate(parts)
    ]


def _parts(rows: list[str], counter: TokenCounter, capacity: float, max_chars: int) -> list[tuple[int, int] | str]:
    """Groups of whole rows (first, last) that fit ``capacity`` tokens and ``max_chars``, in order; a row
    longer than ``max_chars`` becomes pieces of itself (its text, cut between cells)."""
    parts: list[tuple[int, int] | str] = []
    run: list[int] = []

    def flush() -> None:
        if not run:
            return
        ends = min_cuts([counter.count(rows[i]) for i in run], [1] * len(run), capacity)
        for a, b in zip([0] + [e + 1 for e in ends[:-1]], ends, strict=True):
            parts.extend(_by_chars(rows, run[a], run[b], max_chars))
        run.clear()

    for index, row in enumerate(rows):
        if len(row) <= max_chars:
            run.append(index)
            continue
        flush()
        parts.extend(split_row(row, max_chars))
    flush()
    return parts


def _by_chars(rows: list[str], first: int, last: int, max_chars: int) -> list[tuple[int, int]]:
    """Rows ``first..last`` (each at most ``max_chars``) in groups whose joined text is at most ``max_chars``."""
    groups: list[tuple[int, int]] = []
    start, size = first, -1
    for index in range(first, last + 1):
        if index > start and size + 1 + len(rows[index]) > max_chars:
            groups.append((start, index - 1))
            start, size = index, -1
        size += 1 + len(rows[index])
    groups.append((start, last))
    return groups
