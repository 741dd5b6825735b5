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


def make_pdf(path: str | Path, pages: list[list[str]], *, encrypt_password: str | None = None,
             page_sizes: list[tuple[float, float]] | None = None) -> None:
    """Write a real text PDF (A4): one inner list of paragraphs per page.

    A paragraph starting with ``"# "`` is set as a level-1 heading (20 pt bold),
    ``"## "`` as level 2 (15 pt bold); others are 11 pt body text that wraps.
    With ``encrypt_password`` the file needs that password to open (RC4). ``page_sizes``
    gives each page its own (width, height) in mm.
    """
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.set_margins(20, 20, 20)
    if encrypt_password:
        pdf.set_encryption(owner_password=encrypt_password + "-owner", user_password=encrypt_password)
    for i, paragraphs in enumerate(pages):
        pdf.add_page(format=page_sizes[i] if page_sizes else "A4")
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


def make_ole(path: str | Path, entries: dict[str, bytes]) -> bytes:
    """Write (and return) an OLE2 compound file (version 3, 512-byte sectors).

    ``entries`` maps stream paths (``"WordDocument"``, ``"__attach_version1.0_#00000000/x"``)
    to their bytes; storages are made from the paths. Streams under 4096 bytes go to the
    mini stream, as the format requires. Enough for sniffing tests and tiny Outlook messages.
    """
    import struct

    free, end = 0xFFFFFFFF, 0xFFFFFFFE
    nodes = _ole_nodes(entries)  # [name, type, data, children]; node 0 is the root
    mini, mini_fat, mini_starts = bytearray(), [], {}
    for i, (_, kind, data, _) in enumerate(nodes):
        if kind == 2 and len(data) < 4096:
            n = -(-len(data) // 64)
            mini_starts[i] = len(mini) // 64 if n else end
            mini_fat += [len(mini_fat) + k + 1 for k in range(n - 1)] + ([end] if n else [])
            mini += data.ljust(n * 64, b"\0")
    chains: list[bytes] = []  # data chains in sector order: directory, mini FAT, mini stream, big streams
    directory_size = -(-len(nodes) // 4) * 512
    chains.append(b"\0" * directory_size)
    mini_fat_bytes = struct.pack(f"<{len(mini_fat)}I", *mini_fat)
    chains += [mini_fat_bytes.ljust(-(-len(mini_fat_bytes) // 512) * 512, b"\xff")] if mini_fat else []
    chains += [bytes(mini)] if mini else []
    big = [i for i, n in enumerate(nodes) if n[1] == 2 and len(n[2]) >= 4096]
    chains += [nodes[i][2] for i in big]
    lengths = [-(-len(c) // 512) for c in chains]
    n_fat = 1
    while n_fat * 128 < n_fat + sum(lengths):
        n_fat += 1
    starts, fat = [], [0xFFFFFFFD] * n_fat
    for length in lengths:
        starts.append(len(fat))
        fat += [len(fat) + k + 1 for k in range(length - 1)] + [end]
    fat += [free] * (n_fat * 128 - len(fat))
    mini_fat_start = starts[1] if mini_fat else end
    mini_start = starts[1 + bool(mini_fat)] if mini else end
    big_starts = dict(zip(big, starts[1 + bool(mini_fat) + bool(mini):], strict=True))

    def entry(i: int) -> bytes:
        name, kind, data, _ = nodes[i]
        encoded = name.encode("utf-16-le") + b"\0\0"
        if kind == 5:
            start, size = mini_start, len(mini)
        elif kind == 1:
            start, size = 0, 0
        else:
            start, size = big_starts.get(i, mini_starts.get(i, end)), len(data)
        return (encoded.ljust(64, b"\0") + struct.pack("<HBB3I", len(encoded), kind, 1, free,
                                                       _ole_right(nodes, i), _ole_child(nodes, i))
                + b"\0" * 36 + struct.pack("<IQ", start, size))

    unused = b"\0" * 0x44 + struct.pack("<3I", free, free, free) + b"\0" * (128 - 0x50)
    chains[0] = b"".join(entry(i) for i in range(len(nodes))) + unused * (directory_size // 128 - len(nodes))
    header = (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 16
              + struct.pack("<HHHHH6sIIIIIIIII", 0x3E, 3, 0xFFFE, 9, 6, b"\0" * 6, 0, n_fat, starts[0],
                            0, 4096, mini_fat_start, -(-len(mini_fat) // 128), end, 0)
              + struct.pack("<109I", *(list(range(n_fat)) + [free] * (109 - n_fat))))
    raw = header + struct.pack(f"<{len(fat)}I", *fat) + b"".join(c.ljust(n * 512, b"\0")
                                                                for c, n in zip(chains, lengths, strict=True))
    Path(path).write_bytes(raw)
    return raw


def _ole_nodes(entries: dict[str, bytes]) -> list[list]:
    tree: dict[str, object] = {}
    for key, data in entries.items():
        *storages, leaf = key.split("/")
        node = tree
        for part in storages:
            node = node.setdefault(part, {})  # type: ignore[assignment]
        node[leaf] = data
    nodes: list[list] = [["Root Entry", 5, b"", []]]

    def add(branch: dict[str, object], parent: int) -> None:
        for name, value in branch.items():
            nodes.append([name, 1 if isinstance(value, dict) else 2, b"" if isinstance(value, dict) else value, []])
            nodes[parent][3].append(len(nodes) - 1)
            if isinstance(value, dict):
                add(value, len(nodes) - 1)

    add(tree, 0)
    for node in nodes:  # siblings as a right-leaning chain in the OLE name order (length, then upper case)
        node[3].sort(key=lambda c: (len(nodes[c][0]), nodes[c][0].upper()))
    return nodes


def _ole_child(nodes: list[list], index: int) -> int:
    return nodes[index][3][0] if nodes[index][3] else 0xFFFFFFFF


def _ole_right(nodes: list[list], index: int) -> int:
    for node in nodes:
        if index in node[3]:
            pos = node[3].index(index)
            return node[3][pos + 1] if pos + 1 < len(node[3]) else 0xFFFFFFFF
    return 0xFFFFFFFF


def make_msg(
    path: str | Path,
    *,
    subject: str,
    sender: str,
    to: str,
    body: str,
    cc: str = "",
    attachments: list[tuple[str, bytes]] = (),  # type: ignore[assignment]
    message_class: str = "IPM.Note",
) -> bytes:
    """Write (and return) a minimal Outlook ``.msg`` ([MS-OXMSG] property streams in an OLE2 file):
    subject, body, transport headers (From/To/Cc/Date), one recipient, attachments by value."""
    import struct

    def prop(tag: int, value: int = 0) -> bytes:
        return struct.pack("<IIQ", tag, 6, value)

    def text(value: str) -> bytes:
        return value.encode("utf-16-le")

    headers = (f"From: {sender}\r\nTo: {to}\r\n" + (f"Cc: {cc}\r\n" if cc else "")
               + f"Date: Tue, 04 Mar 2025 10:15:00 +0100\r\nSubject: {subject}\r\n\r\n")
    strings = {0x001A: message_class, 0x0037: subject, 0x1000: body, 0x0C1A: sender, 0x0E04: to, 0x0E03: cc,
               0x007D: headers}
    entries: dict[str, bytes] = {}
    props = []
    for pid, value in strings.items():
        data = text(value)
        entries[f"__substg1.0_{pid:04X}001F"] = data
        props.append(prop(pid << 16 | 0x001F, len(data)))
    submit_time = (1741079700 + 11644473600) * 10_000_000  # 2025-03-04 09:15 UTC as a FILETIME
    props.append(prop(0x00390040, submit_time))
    entries["__properties_version1.0"] = (
        b"\0" * 8 + struct.pack("<IIII", 1, len(attachments), 1, len(attachments)) + b"\0" * 8 + b"".join(props))
    recipient = "__recip_version1.0_#00000000/"
    entries[recipient + "__substg1.0_3001001F"] = text(to)
    entries[recipient + "__substg1.0_39FE001F"] = text(to)
    entries[recipient + "__properties_version1.0"] = b"\0" * 8 + prop(0x0C150003, 1)
    for index, (name, data) in enumerate(attachments):
        att = f"__attach_version1.0_#{index:08X}/"
        entries[att + "__substg1.0_3707001F"] = text(name)
        entries[att + "__substg1.0_3704001F"] = text(name[:12])
        entries[att + "__substg1.0_37010102"] = data
        entries[att + "__properties_version1.0"] = (
            b"\0" * 8 + prop(0x37050003, 1) + prop(0x0E210003, index) + prop(0x37010102, len(data)))
    for stream in ("00020102", "00030102", "00040102"):
        entries[f"__nameid_version1.0/__substg1.0_{stream}"] = b""
    return make_ole(path, entries)


# --- PDF layouts with known ground truth (PDF parser tests) -------------------------------------

MM = 72 / 25.4  # points per millimetre


def make_two_column_pdf(path: str | Path, title: str, left: list[str], right: list[str]) -> None:
    """One A4 page: a full-width 18 pt title, then ``left`` paragraphs in a left column
    (x 20–100 mm) and ``right`` paragraphs in a right column (x 110–190 mm), 10 pt."""
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 18)
    pdf.set_xy(20, 20)
    pdf.multi_cell(170, 9, title, new_x="LMARGIN", new_y="NEXT")
    for x, paragraphs in ((20, left), (110, right)):
        pdf.set_font("Helvetica", "", 10)
        pdf.set_xy(x, 40)
        for text in paragraphs:
            pdf.set_x(x)
            pdf.multi_cell(80, 5, text, new_x="LEFT", new_y="NEXT")
            pdf.ln(3)
    pdf.output(str(path))


def make_table_pdf(path: str | Path, header: list[str], rows: list[list[str]], split_at: int, *,
                   before: str = "", after: str = "", repeat_header: bool = True) -> None:
    """A ruled table over a page break: ``rows[:split_at]`` at the bottom of page 1 (after the
    paragraph ``before``), the rest at the top of page 2 (under a repeated header row when
    ``repeat_header``), then the paragraph ``after``. Columns are 30, 60 and 60 mm wide."""
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    widths = (30, 60, 60)[: len(header)]
    pdf.set_font("Helvetica", "", 11)

    def table(part: list[list[str]], y: float, with_header: bool) -> float:
        pdf.set_xy(20, y)
        for r, row in enumerate(([header] if with_header else []) + part):
            pdf.set_font("Helvetica", "B" if with_header and r == 0 else "", 11)
            for w, cell in zip(widths, row, strict=True):
                pdf.cell(w, 8, cell, border=1)
            pdf.ln(8)
            pdf.set_x(20)
        return pdf.get_y()

    pdf.add_page()
    pdf.set_xy(20, 20)
    pdf.multi_cell(150, 6, before or "Inventory of the harbor warehouse.", new_x="LMARGIN", new_y="NEXT")
    table(rows[:split_at], 297 - 20 - 8 * (split_at + 1), True)
    pdf.add_page()
    end = table(rows[split_at:], 20, repeat_header)
    pdf.set_font("Helvetica", "", 11)
    pdf.set_xy(20, end + 8)
    pdf.multi_cell(150, 6, after or "End of the inventory.", new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))


def make_rotated_pdf(path: str | Path, lines: list[str], *, upright: bool = True) -> None:
    """One A4 page with ``/Rotate 90`` holding ``lines`` (12 pt, 36 pt apart: one paragraph each).

    With ``upright`` the text is drawn turned in the page's own space so that, once
    the page is displayed rotated, it reads normally across a landscape page (line i
    has its baseline at displayed y = 100 + 36 i and starts at x = 72). Otherwise the text
    is ordinary in the page's own space and the displayed page shows it running downwards.
    """
    import io

    import pypdfium2 as pdfium

    pdf = FPDF(unit="pt", format="A4")  # 595.28 x 841.89 pt
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", "", 12)
    for i, text in enumerate(lines):
        if upright:  # displayed (dx, dy) = (user y, user x) for /Rotate 90; fpdf2 measures y from the top
            ux, uy = 100 + 36 * i, 841.89 - 72
            with pdf.rotation(90, x=ux, y=uy):
                pdf.text(ux, uy, text)
        else:
            pdf.text(72, 100 + 36 * i, text)
    buffer = io.BytesIO(bytes(pdf.output()))
    doc = pdfium.PdfDocument(buffer)
    doc[0].set_rotation(90)
    doc.save(str(path))
    doc.close()


def make_running_pdf(path: str | Path, pages: list[list[str]], *, header: str, footer: str) -> None:
    """Body paragraphs per page (11 pt) with a 9 pt ``header`` at the top of every page and a
    9 pt footer "``footer`` — page N" plus a lone page number "N" at the bottom."""
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    for n, paragraphs in enumerate(pages, start=1):
        pdf.add_page()
        pdf.set_font("Helvetica", "", 9)
        pdf.text(20, 12, header)
        pdf.text(20, 285, f"{footer} - page {n}")
        pdf.text(185, 290, str(n))
        pdf.set_xy(20, 30)
        pdf.set_font("Helvetica", "", 11)
        for text in paragraphs:
            pdf.multi_cell(170, 5.5, text, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(4)
    pdf.output(str(path))


def make_styled_pdf(path: str | Path, items: list[tuple[str, str]], *, outline: bool = False,
                    outline_levels: dict[str, int] | None = None, font_file: str | None = None) -> None:
    """One or more A4 pages from ``(style, text)`` items: ``h1`` 18 pt bold, ``h2`` 14 pt bold,
    ``h3`` 11 pt bold, ``p`` 11 pt body, ``li`` 11 pt list item (indented continuation),
    ``page`` a page break, ``img`` a 60×40 mm picture, ``cap`` an italic 10 pt caption.
    With ``outline`` each heading is also a bookmark (h1 level 0, h2 level 1, h3 level 2, or
    the level ``outline_levels`` gives its text).
    ``font_file`` (a TTF/TTC) is used for every style, e.g. for Chinese text."""
    from PIL import Image

    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(True, margin=20)
    pdf.set_margins(20, 20, 20)
    family = "Helvetica"
    if font_file:
        pdf.add_font("Doc", "", font_file)
        pdf.add_font("Doc", "B", font_file)
        pdf.add_font("Doc", "I", font_file)
        family = "Doc"
    pdf.add_page()
    sizes = {"h1": ("B", 18), "h2": ("B", 14), "h3": ("B", 11), "p": ("", 11), "li": ("", 11), "cap": ("I", 10)}
    for style, text in items:
        if style == "page":
            pdf.add_page()
            continue
        if style == "img":
            picture = Image.new("RGB", (240, 160), (40, 90, 160))
            pdf.image(picture, x=40, w=60, h=40)
            pdf.ln(2)
            continue
        weight, size = sizes[style]
        pdf.set_font(family, weight, size)
        if outline and style.startswith("h"):
            pdf.start_section(text, level=(outline_levels or {}).get(text, int(style[1]) - 1))
        if style == "li":
            pdf.set_x(25)
            pdf.multi_cell(160, 5.5, text, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(1)
        else:
            pdf.multi_cell(0, size * 0.5, text, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(3)
    pdf.output(str(path))


def make_mixed_scan_pdf(path: str | Path, pages: list[tuple[str, str]]) -> None:
    """A4 pages from ``(kind, text)``: ``"text"`` a page with a text layer, ``"scan"`` a page
    that is only a full-page picture of ``text`` (no text layer, as a scanner makes)."""
    from PIL import Image, ImageDraw

    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    for kind, text in pages:
        pdf.add_page()
        if kind == "scan":
            picture = Image.new("L", (827, 1169), 255)  # A4 at 100 dpi
            ImageDraw.Draw(picture).text((80, 120), text, fill=0, font_size=28)
            pdf.image(picture, x=0, y=0, w=210, h=297)
        else:
            pdf.set_font("Helvetica", "", 11)
            pdf.set_xy(20, 20)
            pdf.multi_cell(170, 5.5, text)
    pdf.output(str(path))


def make_report_pdf(path: str | Path, n_pages: int, *, table_every: int = 5, seed: int = 7) -> None:
    """A text report of ``n_pages`` A4 pages: a running header, a page number, a 16 pt heading and
    body paragraphs on each page, and a ruled 4-column, 8-row table on every ``table_every``-th page."""
    rng = random.Random(seed)
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    for n in range(1, n_pages + 1):
        pdf.add_page()
        pdf.set_font("Helvetica", "", 9)
        pdf.text(20, 12, "Harbor Authority - Annual Report")
        pdf.text(105, 288, str(n))
        pdf.set_xy(20, 22)
        pdf.set_font("Helvetica", "B", 16)
        pdf.cell(0, 10, f"{n}. Section {n}", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", "", 11)
        for _ in range(3 if n % table_every == 0 else 5):
            pdf.multi_cell(170, 5.5, paragraph(rng, 5), new_x="LMARGIN", new_y="NEXT")
            pdf.ln(3)
        if n % table_every == 0:
            for r in range(8):
                for c in range(4):
                    pdf.cell(42, 7, f"h{c}" if r == 0 else f"{rng.choice(WORDS)} {r}", border=1)
                pdf.ln(7)
    pdf.output(str(path))
