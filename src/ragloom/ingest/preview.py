"""Previews a citation opens: page images, and an HTML view of formats without pages.

Every version gets one of two previews (stored by :func:`ragloom.service.documents.ingestion.store_previews`):

* **page images** (PNG, one per page) for paginated formats: PDF pages rendered
  (:func:`ragloom.ingest.parsers.pdf.render_page_png`), image files (each frame), and slides
  (:func:`slide_png`: each slide drawn from the boxes and text of its blocks — the text, tables and
  titles where they stand, not pictures or styling). A position ``[page, left, right, top,
  bottom]`` is a region of that page in PDF points (origin top-left), the page's size being
  listed by ``.../pages``.
* **an HTML view** (:func:`render_html`) for formats that flow — DOCX, HTML, Markdown, e-mail,
  spreadsheets, CSV, JSON, EPUB, plain text: the parsed blocks in reading order, each an element
  with the anchor ``id="b{n}"`` (``n`` = the block's number, from 0). Their blocks get the position
  ``[0, 0, 0, n, n]`` (:func:`anchor_blocks`): page 0 means "the HTML view", top and bottom the
  block's number; a chunk lists the positions of the blocks it was cut from, so its citation
  scrolls to ``#b{first}`` and highlights every listed block
  (``.../preview?highlight=3,4,5#b3``).

The view is built from the parsed text, never from the file's own markup: it holds no script, no
link and no remote resource, whatever the file held.
"""

from __future__ import annotations

import html
import io
import textwrap
from collections.abc import Iterable, Iterator, Sequence

from ragloom.dataflow import BBox, Block, BlockKind, ParsedDocument

VIEW_PAGE = 0  # the page number of positions in the HTML view
_CSS = """
body { font: 15px/1.5 system-ui, sans-serif; max-width: 52rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
[id^=b] { scroll-margin-top: 4rem; border-radius: 3px; }
.hl { background: #fff3b0; outline: 2px solid #f0c000; }
table { border-collapse: collapse; margin: .5rem 0; } td, th { border: 1px solid #bbb; padding: 2px 6px; }
pre { background: #f5f5f5; padding: .5rem; overflow-x: auto; white-space: pre-wrap; }
.path { color: #777; font-size: 12px; }
"""


def is_flowing(parsed: ParsedDocument) -> bool:
    """Whether the document has no pages (its preview is the HTML view)."""
    return not parsed.page_sizes


def anchor_blocks(parsed: ParsedDocument) -> None:
    """Give each block of a flowing document its anchor position ``(0, 0, 0, n, n)``."""
    if not is_flowing(parsed):
        return
    for n, block in enumerate(parsed.blocks):
        if not block.boxes:
            block.boxes = [(VIEW_PAGE, BBox(0.0, float(n), 0.0, float(n)))]


def anchors(positions: Iterable[Sequence[float]]) -> list[int]:
    """The block numbers of the HTML-view positions among ``positions`` (in order, no repeats)."""
    return list(dict.fromkeys(int(p[3]) for p in positions if int(p[0]) == VIEW_PAGE))


def _table(block: Block) -> str:
    if block.table is None:
        return f"<pre>{html.escape(block.text)}</pre>"
    head = "".join(f"<th>{html.escape(c)}</th>" for c in block.table.header)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in block.table.rows)
    return f"<table>{f'<thead><tr>{head}</tr></thead>' if head else ''}<tbody>{rows}</tbody></table>"


def _element(n: int, block: Block, highlight: set[int]) -> str:
    attrs = f' id="b{n}"' + (' class="hl"' if n in highlight else "")
    text = html.escape(block.text)
    if block.kind == BlockKind.TITLE:
        level = min(max(block.level, 1), 6)
        return f"<h{level}{attrs}>{text}</h{level}>"
    if block.kind == BlockKind.TABLE:
        return f"<div{attrs}>{_table(block)}</div>"
    if block.kind == BlockKind.CODE:
        return f"<pre{attrs}><code>{text}</code></pre>"
    if block.kind == BlockKind.LIST:
        return f"<ul><li{attrs}>{text.replace(chr(10), '<br>')}</li></ul>"
    if block.kind == BlockKind.FIGURE:
        return f"<figure{attrs}><figcaption>{text.replace(chr(10), '<br>')}</figcaption></figure>"
    return f"<p{attrs}>{text.replace(chr(10), '<br>')}</p>"


def _sections(parsed: ParsedDocument, marked: set[int]) -> Iterator[str]:
    """The blocks' elements, with a heading for each section a block enters that no title block
    opened (a sheet's name, a title row: they live only in ``heading_path``)."""
    shown: tuple[str, ...] = ()
    for n, block in enumerate(parsed.blocks):
        if block.kind == BlockKind.TITLE:
            shown = (*block.heading_path, block.text)
        elif block.heading_path != shown:
            same = 0
            while same < min(len(shown), len(block.heading_path)) and shown[same] == block.heading_path[same]:
                same += 1
            for depth, name in enumerate(block.heading_path[same:], start=same + 1):
                yield f'<h{min(depth, 6)} class="path">{html.escape(name)}</h{min(depth, 6)}>'
            shown = block.heading_path
        yield _element(n, block, marked)


def render_html(parsed: ParsedDocument, title: str, highlight: Iterable[int] = ()) -> str:
    """The HTML view of a flowing document: one anchored element per block; ``highlight`` marks blocks."""
    body = "\n".join(_sections(parsed, set(highlight)))
    return (f'<!doctype html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"<style>{_CSS}</style></head>\n<body>\n{body}\n</body></html>\n")


def highlighted(view: str, highlight: Iterable[int]) -> str:
    """A stored view with the blocks ``highlight`` marked (their elements get ``class="hl"``)."""
    for n in sorted(set(highlight)):
        view = view.replace(f' id="b{n}">', f' id="b{n}" class="hl">', 1)
    return view


def scaled_png(png: bytes, width: int) -> bytes:
    """A stored page image scaled down to ``width`` pixels wide (its aspect kept): a thumbnail. The
    image as it is when it is no wider."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        if image.width <= width:
            return png
        height = max(1, round(image.height * width / image.width))
        small = image.convert("RGB")
        small.thumbnail((width, height), Image.Resampling.LANCZOS, reducing_gap=2.0)
        out = io.BytesIO()
        small.save(out, format="PNG", optimize=False)
        return out.getvalue()


def image_pngs(data: bytes, parsed: ParsedDocument, dpi: int) -> Iterator[tuple[int, bytes]]:
    """Each frame of an image file as a PNG at its page size (``parsed.page_sizes``, points) and ``dpi``."""
    from PIL import Image, ImageSequence

    with Image.open(io.BytesIO(data)) as image:
        for number, frame in enumerate(ImageSequence.Iterator(image), start=1):
            if number not in parsed.page_sizes:
                continue
            width, height = parsed.page_sizes[number]
            size = (max(1, round(width * dpi / 72)), max(1, round(height * dpi / 72)))
            out = io.BytesIO()
            frame.convert("RGB").resize(size).save(out, format="PNG")
            yield number, out.getvalue()


def slide_png(blocks: Sequence[Block], size: tuple[float, float], dpi: int) -> bytes:
    """A slide drawn from its blocks: each block's text wrapped inside its box (boxes in points)."""
    from PIL import Image, ImageDraw, ImageFont

    scale = dpi / 72
    image = Image.new("RGB", (max(1, round(size[0] * scale)), max(1, round(size[1] * scale))), "white")
    draw = ImageDraw.Draw(image)
    for block in blocks:
        for _, box in block.boxes:
            rect = (box.left * scale, box.top * scale, box.right * scale, box.bottom * scale)
            if rect[2] <= rect[0] or rect[3] <= rect[1]:
                continue
            draw.rectangle(rect, outline="#dddddd")
            px = 13 * scale if block.kind != BlockKind.TITLE else 22 * scale
            font = ImageFont.load_default(size=px)
            per_line = max(8, int((rect[2] - rect[0]) / (px * 0.55)))
            lines = [w for line in block.text.splitlines() for w in (textwrap.wrap(line, per_line) or [""])]
            y = rect[1] + 2
            for line in lines:
                if y + px > rect[3] + px:  # the box is full: the rest would spill over the next one
                    break
                draw.text((rect[0] + 3, y), line, fill="black", font=font)
                y += px * 1.25
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()
