"""Generators of real test documents (PDF, DOCX, HTML, Markdown, text).

Reused by end-to-end tests. Everything is written with fpdf2 / python-docx
inside the test; nothing is read from outside the test's temporary directory.
"""

from __future__ import annotations

import random
from pathlib import Path

import docx
from fpdf import FPDF

WORDS = [
    "river", "stone", "market", "ledger", "signal", "harbor", "copper", "lantern", "orchard", "meadow",
    "quarry", "beacon", "valley", "archive", "engine", "window", "garden", "silver", "thunder",
    "pepper", "canvas", "marble", "falcon", "timber", "compass", "glacier", "island", "violet",
    "saddle", "basket", "candle", "mirror", "ribbon", "summit"
]


def sentence(rng: random.Random, n_words: int | None = None) -> str:
    """A random English-looking sentence ending with a period."""
    n = n_words or rng.randint(5, 18)
    words = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def paragraph(rng: random.Random, n_sentences: int | None = None) -> str:
    return " ".join(sentence(rng) for _ in range(n_sentences or rng.randint(1, 6)))


def make_pdf(path: str | Path, pages: list[list[str]], *, encrypt_password: str | None = None) -> None:
    """Write a real text PDF (A4): one inner list of paragraphs per page.

    A paragraph starting with ``"# "`` is set as a level-1 heading (20 pt bold),
    ``"## "`` as level 2 (15 pt bold); others are 11 pt body text that wraps.
    With ``encrypt_password`` the file needs that password to open (RC4).
    """
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.set_margins(20, 20, 20)
    if encrypt_password:
        pdf.set_encryption(owner_password=encrypt_password + "-owner", user_password=encrypt_password)
    for paragraphs in pages:
        pdf.add_page()
        for text in paragraphs:
            if text.startswith("## "):
                pdf.set_font("Helvetica", "B", 15)
                pdf.multi_cell(0, 9, text[3:], new_x="LMARGIN", new_y="NEXT")
            elif text.startswith("# "):
                pdf.set_font("Helvetica", "B", 20)
                pdf.multi_cell(0, 11, text[2:], new_x="LMARGIN", new_y="NEXT")
            else:
                pdf.set_font("Helvetica", "", 11)
                pdf.multi_cell(0, 5.5, text, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(4)
    pdf.output(str(path))


def make_image_only_pdf(path: str | Path, n_pages: int = 1) -> None:
    """A PDF whose pages hold only vector drawings: no text layer at all."""
    pdf = FPDF(format="A4")
    for _ in range(n_pages):
        pdf.add_page()
        pdf.rect(30, 30, 100, 60, style="F")
    pdf.output(str(path))


def make_docx(
    path: str | Path,
    items: list[tuple[str, object]],
) -> None:
    """Write a DOCX from ``(kind, value)`` items in body order.

    Kinds: ``"title"`` (str), ``"h1"``..``"h6"`` (str), ``"p"`` (str),
    ``"bullet"`` (str, style List Bullet), ``"table"`` (list of rows, first row = header).
    """
    document = docx.Document()
    for kind, value in items:
        if kind == "title":
            document.add_heading(str(value), level=0)
        elif kind.startswith("h") and kind[1:].isdigit():
            document.add_heading(str(value), level=int(kind[1:]))
        elif kind == "p":
            document.add_paragraph(str(value))
        elif kind == "bullet":
            document.add_paragraph(str(value), style="List Bullet")
        elif kind == "table":
            rows = list(value)  # type: ignore[call-overload]
            table = document.add_table(rows=len(rows), cols=len(rows[0]))
            for r, row in enumerate(rows):
                for c, cell in enumerate(row):
                    table.cell(r, c).text = str(cell)
        else:
            raise ValueError(f"unknown docx item kind {kind!r}")
    document.save(str(path))


def make_html(path: str | Path, body: str, *, title: str = "Test page", charset: str | None = "utf-8") -> None:
    """Write an HTML page with ``body`` inside ``<body>`` (and a meta charset if given)."""
    meta = f'<meta charset="{charset}">' if charset else ""
    html = f"<!DOCTYPE html><html><head>{meta}<title>{title}</title></head><body>{body}</body></html>"
    Path(path).write_bytes(html.encode(charset or "utf-8"))


def make_text(path: str | Path, text: str, *, encoding: str = "utf-8") -> None:
    """Write ``text`` in ``encoding`` (e.g. ``gb18030``, ``utf-16`` adds a BOM)."""
    Path(path).write_bytes(text.encode(encoding))


# --- other formats (issue 3): rich DOCX, PPTX, XLSX/XLS, EPUB, EML, OLE2 containers --------------------


def _png_bytes(width: int = 40, height: int = 30) -> bytes:
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(buf, format="PNG")
    return buf.getvalue()


def make_docx_rich(path: str | Path, items: list[tuple[str, object]], *, header: str = "", footer: str = "") -> None:
    """Write a DOCX from ``(kind, value)`` items, with what :func:`make_docx` lacks.

    Kinds: everything :func:`make_docx` knows, plus ``"number"`` / ``"number2"`` (List Number /
    List Number 2), ``"bullet2"``, ``"sub"`` (``(text, level)``: a List Number item at list level
    ``level``, 0-based, continuing the List Number list), ``"outline"`` (``(text, level)``: a Normal paragraph with an
    outline level, 1-based), ``"caption"`` (str, style Caption), ``"image"`` (alt text; a small
    PNG), ``"merged_table"`` (``(rows, merges)`` with merges ``[(r0, c0, r1, c1), ...]`` inclusive;
    the merged cell gets the text of its top-left cell). ``header``/``footer`` fill the section's.
    """
    import io

    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn
    from docx.shared import Pt

    document = docx.Document()
    if header:
        document.sections[0].header.paragraphs[0].text = header
    if footer:
        document.sections[0].footer.paragraphs[0].text = footer
    styles = {"number": "List Number", "number2": "List Number 2", "bullet2": "List Bullet 2",
              "bullet": "List Bullet", "caption": "Caption", "p": None}
    for kind, value in items:
        if kind in styles:
            document.add_paragraph(str(value), style=styles[kind])
        elif kind == "title":
            document.add_heading(str(value), level=0)
        elif kind.startswith("h") and kind[1:].isdigit():
            document.add_heading(str(value), level=int(kind[1:]))
        elif kind == "sub":
            text, level = value  # type: ignore[misc]
            par = document.add_paragraph(str(text), style="List Number")
            style_num = document.styles["List Number"].element.pPr.find(qn("w:numPr")).find(qn("w:numId"))
            num_pr = OxmlElement("w:numPr")
            for tag, val in (("w:ilvl", str(level)), ("w:numId", style_num.get(qn("w:val")))):
                node = OxmlElement(tag)
                node.set(qn("w:val"), val)
                num_pr.append(node)
            par._p.get_or_add_pPr().append(num_pr)
        elif kind == "outline":
            text, level = value  # type: ignore[misc]
            par = document.add_paragraph(str(text))
            outline = OxmlElement("w:outlineLvl")
            outline.set(qn("w:val"), str(int(level) - 1))
            par._p.get_or_add_pPr().append(outline)
        elif kind == "image":
            document.add_picture(io.BytesIO(_png_bytes()), width=Pt(40))
            doc_pr = document.paragraphs[-1]._p.xpath(".//wp:docPr")[0]
            doc_pr.set("descr", str(value))
        elif kind in ("table", "merged_table"):
            rows, merges = (value, []) if kind == "table" else value  # type: ignore[misc]
            table = document.add_table(rows=len(rows), cols=len(rows[0]))
            for r, row in enumerate(rows):
                for c, cell in enumerate(row):
                    table.cell(r, c).text = str(cell)
            for r0, c0, r1, c1 in merges:
                text = table.cell(r0, c0).text
                table.cell(r0, c0).merge(table.cell(r1, c1)).text = text
        else:
            raise ValueError(f"unknown docx item kind {kind!r}")
    document.save(str(path))


def make_pptx(path: str | Path, slides: list[dict[str, object]]) -> None:
    """Write a PPTX; each slide dict may hold ``title`` (str), ``bullets`` (list of str or
    ``(text, level)``), ``boxes`` (list of ``(text, left_pt, top_pt)`` text boxes), ``table``
    (rows, first = header), ``merges`` (``[(r0, c0, r1, c1)]`` inclusive), ``notes`` (str),
    ``image`` (alt text of a small picture)."""
    import io

    from pptx import Presentation
    from pptx.util import Pt

    deck = Presentation()
    for spec in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[1 if spec.get("bullets") else 5])
        if spec.get("title"):
            slide.shapes.title.text = str(spec["title"])
        if spec.get("bullets"):
            frame = slide.placeholders[1].text_frame
            for i, item in enumerate(spec["bullets"]):  # type: ignore[attr-defined]
                text, level = (item, 0) if isinstance(item, str) else item
                par = frame.paragraphs[0] if i == 0 else frame.add_paragraph()
                par.text, par.level = text, level
        for text, left, top in spec.get("boxes", []):  # type: ignore[attr-defined]
            slide.shapes.add_textbox(Pt(left), Pt(top), Pt(200), Pt(30)).text_frame.text = text
        if spec.get("table"):
            rows = spec["table"]
            shape = slide.shapes.add_table(len(rows), len(rows[0]), Pt(40), Pt(300), Pt(600), Pt(150))  # type: ignore[arg-type]
            for r, row in enumerate(rows):  # type: ignore[arg-type]
                for c, cell in enumerate(row):
                    shape.table.cell(r, c).text = str(cell)
            for r0, c0, r1, c1 in spec.get("merges", []):  # type: ignore[attr-defined]
                shape.table.cell(r0, c0).merge(shape.table.cell(r1, c1))
                shape.table.cell(r0, c0).text = str(rows[r0][c0])  # type: ignore[index]
        if spec.get("image"):
            pic = slide.shapes.add_picture(io.BytesIO(_png_bytes()), Pt(500), Pt(150), Pt(60))
            pic._element.nvPicPr.cNvPr.set("descr", str(spec["image"]))
        if spec.get("notes"):
            slide.notes_slide.notes_text_frame.text = str(spec["notes"])
    deck.save(str(path))


def make_xlsx(
    path: str | Path,
    sheets: dict[str, list[list[object]]],
    *,
    merges: dict[str, list[str]] | None = None,
    cached: dict[str, dict[str, object]] | None = None,
) -> None:
    """Write an XLSX with openpyxl: ``sheets`` maps a name to rows (a str starting with ``=``
    is a formula). openpyxl saves formulas *without* their values, as a program that does not
    calculate would; ``cached[sheet][cell]`` writes a cached value, as Excel would."""
    import re
    import zipfile

    import openpyxl

    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for name, rows in sheets.items():
        ws = wb.create_sheet(name)
        for row in rows:
            ws.append(row)
        for ref in (merges or {}).get(name, []):
            ws.merge_cells(ref)
    wb.save(str(path))
    if not cached:
        return
    with zipfile.ZipFile(path) as zf:
        parts = {n: zf.read(n) for n in zf.namelist()}
    for index, name in enumerate(sheets, start=1):
        part = f"xl/worksheets/sheet{index}.xml"
        xml = parts[part].decode()
        for cell, value in (cached.get(name) or {}).items():
            xml, n = re.subn(rf'(<c r="{cell}"[^>]*>)(<f>[^<]*</f>)<v\s*/?>(</v>)?', rf"\g<1>\g<2><v>{value}</v>", xml)
            assert n == 1, f"no formula cell {cell} in {name}"
        parts[part] = xml.encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, data in parts.items():
            zf.writestr(n, data)


def make_xls(
    path: str | Path, sheets: dict[str, list[list[object]]], *, merges: dict[str, list[tuple]] | None = None
) -> None:
    """Write a legacy Excel 97 ``.xls`` with xlwt; merges are ``(r0, r1, c0, c1)`` inclusive,
    the value taken from the top-left cell."""
    import xlwt

    book = xlwt.Workbook()
    for name, rows in sheets.items():
        sheet = book.add_sheet(name)
        merged = {(m[0], m[2]): m for m in (merges or {}).get(name, [])}
        covered = {(r, c) for r0, r1, c0, c1 in merged.values() for r in range(r0, r1 + 1) for c in range(c0, c1 + 1)}
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                if (r, c) in merged:
                    r0, r1, c0, c1 = merged[(r, c)]
                    sheet.write_merge(r0, r1, c0, c1, value)
                elif (r, c) not in covered and value is not None:
                    sheet.write(r, c, value)
    book.save(str(path))


def make_epub(path: str | Path, title: str, chapters: list[tuple[str, str]], *, spine: list[int] | None = None) -> None:
    """Write an EPUB 3 book; ``chapters`` are ``(file name, XHTML body)``, ``spine`` the reading
    order as indexes into ``chapters`` (default: as given). The manifest lists files in given order."""
    import zipfile

    order = spine if spine is not None else list(range(len(chapters)))
    manifest = "".join(f'<item id="c{i}" href="text/{name}" media-type="application/xhtml+xml"/>'
                       for i, (name, _) in enumerate(chapters))
    itemrefs = "".join(f'<itemref idref="c{i}"/>' for i in order)
    opf = ('<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
           f'<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{title}</dc:title></metadata>'
           f"<manifest>{manifest}</manifest><spine>{itemrefs}</spine></package>")
    container = ('<?xml version="1.0"?>'
                 '<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
                 '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
                 "</rootfiles></container>")
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        zf.writestr("META-INF/container.xml", container)
        zf.writestr("OEBPS/content.opf", opf)
        for name, body in chapters:
            zf.writestr(f"OEBPS/text/{name}", '<?xml version="1.0" encoding="utf-8"?>'
                        f'<html xmlns="http://www.w3.org/1999/xhtml"><head><title>{name}</title></head>'
                        f"<body>{body}</body></html>")


def make_eml(
    path: str | Path,
    *,
    subject: str,
    sender: str,
    to: str,
    cc: str = "",
    body: str = "",
    html: str = "",
    attachments: list[tuple[str, bytes, str]] = (),  # type: ignore[assignment]
) -> bytes:
    """Write (and return) an RFC 822 message; ``attachments`` are ``(file name, bytes, MIME type)``;
    a ``message/rfc822`` attachment's bytes are a whole message attached inline."""
    import email
    import email.policy
    from email.message import EmailMessage

    msg = EmailMessage()
    msg["Subject"], msg["From"], msg["To"] = subject, sender, to
    if cc:
        msg["Cc"] = cc
    msg["Date"] = "Tue, 04 Mar 2025 10:15:00 +0100"
    if body:
        msg.set_content(body)
    if html:
        if body:
            msg.add_alternative(html, subtype="html")
        else:
            msg.set_content(html, subtype="html")
    for name, data, mime in attachments:
        if mime == "message/rfc822":
            msg.add_attachment(email.message_from_bytes(data, policy=email.policy.default), filename=name)
        else:
            maintype, subtype = mime.split("/", 1)
            msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    raw = msg.as_bytes()
    Path(path).write_bytes(raw)
    return raw
