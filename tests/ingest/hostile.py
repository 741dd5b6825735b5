"""Generators of hostile documents: tiny files that expand into huge work.

Each returns the bytes of a real file written here (raw PDF objects, zip
containers, CSV text, PIL images); nothing is read from disk. Used by
``test_limits.py`` and by ``benchmarks``-style measurements of the limits.
"""

from __future__ import annotations

import io
import random
import zipfile

_WORDS = ["river", "stone", "market", "ledger", "signal", "harbor", "copper", "lantern", "orchard", "meadow",
          "quarry", "beacon", "valley", "archive", "engine", "window", "garden", "silver", "thunder", "pepper"]


def raw_pdf(pages: list[tuple[float, float]], content: bytes | list[bytes]) -> bytes:
    """A minimal valid PDF: one page per ``(width, height)`` in points, all sharing one content stream
    (or each its own, when ``content`` is a list)."""
    n = len(pages)
    streams = content if isinstance(content, list) else [content]
    font, first_stream = 3 + n, 4 + n
    objects = [
        b"<</Type/Catalog/Pages 2 0 R>>",
        b"<</Type/Pages/Kids[" + b" ".join(b"%d 0 R" % (3 + i) for i in range(n)) + b"]/Count %d>>" % n,
        *(b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 %g %g]/Contents %d 0 R/Resources<</Font<</F1 %d 0 R>>>>>>"
          % (w, h, first_stream + (i if len(streams) > 1 else 0), font) for i, (w, h) in enumerate(pages)),
        b"<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>",
        *(b"<</Length %d>>stream\n" % len(c) + c + b"\nendstream" for c in streams),
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj" % number + body + b"endobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer<</Size %d/Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


TEXT = b"BT /F1 400 Tf 200 %g Td (A page of two hundred inches) Tj ET"
SHAPE = b"0 0 1 rg 100 100 5000 3000 re f"  # no text: a scan-like page that goes to OCR


def huge_page_pdf(inches: float = 200, *, text: bool = True) -> bytes:
    """One page of ``inches`` x ``inches`` (200 in = 14,400 pt, the largest PDF 1.4 allows); about 600 bytes."""
    side = inches * 72
    return raw_pdf([(side, side)], TEXT % (side - 600) if text else SHAPE)


def many_pages_pdf(n_pages: int, *, distinct: bool = False) -> bytes:
    """``n_pages`` A4 pages sharing one small text stream (24,000 pages are about 3.6 MB); with
    ``distinct`` each page has its own text (the same line on every page is a running header)."""
    if distinct:
        rng = random.Random(n_pages)
        lines = [" ".join(rng.choice(_WORDS) for _ in range(9)).capitalize() + "." for _ in range(n_pages)]
        return raw_pdf([(595, 842)] * n_pages, [
            b"BT /F1 12 Tf 72 %d Td (%s) Tj ET" % (400 + rng.randrange(300), line.encode()) for line in lines])
    return raw_pdf([(595, 842)] * n_pages, b"BT /F1 12 Tf 72 760 Td (The same line on every page.) Tj ET")


_DOCX_HEAD = (b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
              b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>')
_DOCX_TAIL = b"</w:body></w:document>"
_PARAGRAPH = b"<w:p><w:r><w:t>All work and no play makes a very long document indeed.</w:t></w:r></w:p>"


def expanding_docx(unzipped_mb: float) -> bytes:
    """A valid DOCX whose ``word/document.xml`` expands to about ``unzipped_mb`` MiB (deflate: ~1,000:1)."""
    from docx import Document

    base = io.BytesIO()
    Document().save(base)
    out = io.BytesIO()
    repeats = int(unzipped_mb * 1024 * 1024 / len(_PARAGRAPH)) + 1
    block = _PARAGRAPH * 1000
    with zipfile.ZipFile(base) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as dst:
        for info in src.infolist():
            if info.filename != "word/document.xml":
                dst.writestr(info, src.read(info.filename))
                continue
            with dst.open("word/document.xml", "w", force_zip64=True) as f:
                f.write(_DOCX_HEAD)
                for _ in range(repeats // 1000):
                    f.write(block)
                f.write(_PARAGRAPH * (repeats % 1000))
                f.write(_DOCX_TAIL)
    return out.getvalue()


def lying_zip(real_size: int, claimed_size: int, name: str = "word/document.xml") -> bytes:
    """A zip whose central directory claims ``claimed_size`` bytes for an entry that inflates to ``real_size``."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(name, b"<a>" + b" " * (real_size - 7) + b"</a>")
    data = bytearray(out.getvalue())
    central = data.rfind(b"PK\x01\x02")
    data[central + 24 : central + 28] = claimed_size.to_bytes(4, "little")  # uncompressed size
    local = data.find(b"PK\x03\x04")
    data[local + 22 : local + 26] = claimed_size.to_bytes(4, "little")
    return bytes(data)


def wide_csv(columns: int, rows: int = 3) -> bytes:
    """A CSV of ``columns`` columns (200,000 columns x 3 rows is about 2.7 MB)."""
    header = ",".join(f"c{i}" for i in range(columns))
    lines = [header] + [",".join(f"v{r}" for _ in range(columns)) for r in range(rows)]
    return ("\n".join(lines) + "\n").encode()


def big_xlsx(rows: int, columns: int) -> bytes:
    """An XLSX with ``rows`` x ``columns`` numeric cells, written by openpyxl in write-only mode."""
    import openpyxl

    wb = openpyxl.Workbook(write_only=True)
    ws = wb.create_sheet("data")
    ws.append([f"col{c}" for c in range(columns)])
    for r in range(rows):
        ws.append([r * columns + c for c in range(columns)])
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


def nested_html(depth: int) -> bytes:
    return (b"<html><body><p>Top text.</p>" + b"<div>" * depth + b"deep text" + b"</div>" * depth
            + b"</body></html>")


def nested_json(depth: int, *, objects: bool = False) -> bytes:
    if objects:
        return b'{"a":' * depth + b'"x"' + b"}" * depth
    return b"[" * depth + b'"x"' + b"]" * depth


def multi_page_tiff(n_pages: int, size: tuple[int, int] = (40, 30)) -> bytes:
    from PIL import Image

    frames = [Image.new("L", size, 255) for _ in range(n_pages)]
    out = io.BytesIO()
    frames[0].save(out, format="TIFF", save_all=True, append_images=frames[1:])
    return out.getvalue()


def huge_png(width: int, height: int) -> bytes:
    """A one-colour PNG of ``width`` x ``height`` pixels (it compresses to almost nothing)."""
    from PIL import Image

    out = io.BytesIO()
    Image.new("1", (width, height), 1).save(out, format="PNG")
    return out.getvalue()


_W_NS = b'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def docx_with_body(body: bytes) -> bytes:
    """A valid DOCX (python-docx's template) whose ``<w:body>`` holds ``body`` (WordprocessingML, prefix ``w:``):
    large or hostile documents are written as XML directly, in time linear in their size."""
    from docx import Document

    base = io.BytesIO()
    Document().save(base)
    out = io.BytesIO()
    with zipfile.ZipFile(base) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == "word/document.xml":
                data = (b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document ' + _W_NS
                        + b"><w:body>" + body + b"</w:body></w:document>")
            dst.writestr(info, data)
    return out.getvalue()


def docx_paragraph(text: str) -> bytes:
    return b"<w:p><w:r><w:t xml:space=\"preserve\">" + text.encode() + b"</w:t></w:r></w:p>"


def pptx_with_table(rows: list[list[str]]) -> bytes:
    """A one-slide PPTX holding a table of ``rows`` (the first is the header), its XML written directly
    (python-pptx finds a cell by scanning the rows: building a big table through it is quadratic)."""
    from pptx import Presentation
    from pptx.util import Pt

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Table"
    width = len(rows[0])
    slide.shapes.add_table(1, width, Pt(40), Pt(100), Pt(600), Pt(300))
    base = io.BytesIO()
    deck.save(base)
    row_xml = b"".join(
        b'<a:tr h="370840">' + b"".join(b"<a:tc><a:txBody><a:bodyPr/><a:p><a:r><a:t>" + cell.encode()
                                        + b"</a:t></a:r></a:p></a:txBody><a:tcPr/></a:tc>" for cell in row)
        + b"</a:tr>" for row in rows)
    out = io.BytesIO()
    with zipfile.ZipFile(base) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == "ppt/slides/slide1.xml":
                start, end = data.index(b"<a:tr "), data.rindex(b"</a:tr>") + len(b"</a:tr>")
                data = data[:start] + row_xml + data[end:]
            dst.writestr(info, data)
    return out.getvalue()


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))
