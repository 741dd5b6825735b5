"""Bounded ingestion: every hostile file ends with its limit named, quickly and in bounded memory.

The hostile files are generated here (``tests/ingest/hostile.py``): a 600-byte
PDF whose page is 200 x 200 inches, a DOCX that unzips to 300 MB, a CSV of
200,000 columns, workbooks over the cell limit, PDFs and TIFFs over the page
limit, HTML and JSON nested 100,000 deep. Lowered limits (``guarded``) keep the
slow cases fast; where it is cheap the real default is shown to catch the
case too.
"""

from __future__ import annotations

import io
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image

from ragloom.errors import LimitExceededError, ParseError, TaskCancelledError, TaskInterruptedError
from ragloom.ingest.blocks import BBox, Block, Chunk, ParsedDocument
from ragloom.ingest.chunkers import ChunkerConfig, chunk_blocks
from ragloom.ingest.chunkers.oversize import bound_chunks, split_row, split_text
from ragloom.ingest.guard import IngestLimits, TaskGuard, guarded, rss_mb
from ragloom.ingest.parsers import PdfParser, new_registry, parse_document
from ragloom.ingest.parsers.bounds import check_zip
from ragloom.ingest.parsers.image import ImageParser
from ragloom.ingest.parsers.pdf import render_page_png, render_pages_png
from ragloom.ingest.parsers.spreadsheet import CsvParser, XlsxParser
from ragloom.service.documents.catalog import WHOLE, page_ranges
from tests.ingest import hostile
from tests.ingest.docgen import make_docx, make_epub, make_pdf, make_pptx, make_xls, make_xlsx


def limited(**changes: int) -> object:
    """A block under lowered limits (the rest at their defaults)."""
    return guarded(IngestLimits.defaults(**changes))


def count_words(text: str) -> int:
    return len(text.split())


class Clock:
    def __init__(self) -> None:
        self.start = time.monotonic()

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.start


class RecordingReader:
    """A PageReader that records what it is given and 'reads' one line at the image's far corner."""

    name = "recording"

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[int, int], float]] = []

    def read_page(self, image: Image.Image, *, page: int, scale: float) -> list[Block]:
        self.calls.append((image.size, scale))
        w, h = image.size
        box = BBox((w - 40) / scale, (h - 20) / scale, (w - 1) / scale, (h - 1) / scale)
        return [Block(text=f"text read on page {page}", page=page, boxes=[(page, box)])]


def png_pixels(png: bytes) -> int:
    with Image.open(io.BytesIO(png)) as im:
        return im.size[0] * im.size[1]


# --- pages per document -------------------------------------------------------------------------


def test_pdf_over_max_pages_fails_at_once_for_the_whole_document_and_for_any_range() -> None:
    data = hostile.many_pages_pdf(30, distinct=True)
    with limited(max_pages=10):
        for parser in (PdfParser(), PdfParser(first_page=13, last_page=24)):
            clock = Clock()
            with pytest.raises(LimitExceededError, match=r"big\.pdf: 30 pages: .*limit of 10 \(RAGLOOM_MAX_PAGES\)"):
                parser.parse(data, "big.pdf")
            assert clock.seconds < 2
        with pytest.raises(LimitExceededError, match="RAGLOOM_MAX_PAGES"):
            parse_document(data, "big.pdf")
    assert len(PdfParser(first_page=1, last_page=2).parse(data, "big.pdf").page_sizes) == 2  # default: 5,000


def test_page_ranges_makes_one_task_for_a_pdf_over_the_limit() -> None:
    data = hostile.many_pages_pdf(30)
    assert len(page_ranges(data, "big.pdf", "naive", {})) == 3  # 12-page tasks under the default limit
    with limited(max_pages=10):
        assert page_ranges(data, "big.pdf", "naive", {}) == [WHOLE]
    assert page_ranges(data, "big.pdf", "naive", {}, max_pages=29) == [WHOLE]
    assert len(page_ranges(data, "big.pdf", "naive", {}, max_pages=30)) == 3


def test_a_24000_page_pdf_makes_one_task_that_fails_with_the_default_limit() -> None:
    data = hostile.many_pages_pdf(24_000)
    clock = Clock()
    assert page_ranges(data, "huge.pdf", "naive", {}) == [WHOLE]  # not 2,000 tasks
    with pytest.raises(LimitExceededError, match=r"24,000 pages: more than the limit of 5,000 \(RAGLOOM_MAX_PAGES\)"):
        PdfParser().parse(data, "huge.pdf")
    assert clock.seconds < 5


def test_multi_page_tiff_over_max_pages_fails_before_reading_a_page() -> None:
    reader = RecordingReader()
    data = hostile.multi_page_tiff(5)
    with limited(max_pages=3), pytest.raises(LimitExceededError, match=r"5 pages: .*limit of 3 \(RAGLOOM_MAX_PAGES\)"):
        ImageParser(reader).parse(data, "scan.tiff")
    assert reader.calls == []
    with limited(max_pages=5):
        assert ImageParser(reader).parse(data, "scan.tiff").page_count == 5


# --- pixels per rendered page --------------------------------------------------------------------


def test_preview_of_a_200_inch_page_is_rendered_within_the_pixel_limit() -> None:
    data = hostile.huge_page_pdf()
    assert len(data) < 700  # the 616-byte class of the report: 14,400 x 14,400 points
    with limited(max_page_pixels=1_000_000):
        clock = Clock()
        png = render_page_png(data, 1, dpi=110)  # 22,000 x 22,000 px = 484 million unbounded
        assert 900_000 < png_pixels(png) <= 1_000_000
        assert clock.seconds < 3
        [(page, again)] = list(render_pages_png(data, [1]))
        assert page == 1 and png_pixels(again) <= 1_000_000
    clock = Clock()
    assert 39_000_000 < png_pixels(render_page_png(data, 1, dpi=110)) <= 40_000_000  # the default limit
    assert clock.seconds < 20  # was 119 s and 5.3 GB


def test_ocr_render_of_a_huge_page_is_bounded_and_boxes_use_the_scale_used() -> None:
    reader = RecordingReader()
    with limited(max_page_pixels=1_000_000):
        doc = PdfParser(ocr=reader).parse(hostile.huge_page_pdf(text=False), "scan.pdf")
    [((width, height), scale)] = reader.calls
    assert width * height <= 1_000_000 and scale == pytest.approx(width / 14_400, rel=1e-3)
    assert scale < 200 / 72  # OCR_DPI would be 40,000 x 40,000 px
    [block] = doc.blocks
    box = block.boxes[0][1]
    assert box.right == pytest.approx(14_400, rel=0.01) and box.bottom == pytest.approx(14_400, rel=0.01)
    assert doc.page_sizes == {1: (14_400.0, 14_400.0)}


def test_huge_image_is_read_at_a_lower_resolution_with_boxes_in_stored_pixels() -> None:
    reader = RecordingReader()
    data = hostile.huge_png(4_000, 3_000)  # 12 million pixels in a few kilobytes
    with limited(max_page_pixels=4_000_000):
        doc = ImageParser(reader).parse(data, "poster.png")
    [((width, height), scale)] = reader.calls
    assert width * height <= 4_000_000 and scale == pytest.approx(width / 4_000, rel=1e-3)
    assert doc.page_sizes == {1: (4_000.0, 3_000.0)}
    assert doc.blocks[0].boxes[0][1].right == pytest.approx(4_000, rel=0.01)


def test_huge_jpeg_is_decoded_at_a_reduced_size() -> None:
    out = io.BytesIO()
    Image.new("RGB", (4_000, 3_000), "white").save(out, format="JPEG")
    reader = RecordingReader()
    with limited(max_page_pixels=1_000_000):
        doc = ImageParser(reader).parse(out.getvalue(), "photo.jpg")
    [((width, height), _)] = reader.calls
    assert width * height <= 1_000_000
    assert doc.page_sizes == {1: (4_000.0, 3_000.0)}


def test_image_far_over_the_pixel_limit_is_not_decoded() -> None:
    reader = RecordingReader()
    with limited(max_page_pixels=1_000_000), pytest.raises(LimitExceededError, match="RAGLOOM_MAX_PAGE_PIXELS"):
        ImageParser(reader).parse(hostile.huge_png(5_000, 5_000), "bomb.png")
    assert reader.calls == []


# --- decompressed size ---------------------------------------------------------------------------


def test_docx_that_unzips_to_300_mb_is_refused_from_its_directory_with_the_default_limit() -> None:
    data = hostile.expanding_docx(300)
    assert len(data) < 2_000_000
    clock = Clock()
    with pytest.raises(LimitExceededError, match=r"30\d MiB unzipped \(DOCX\): .*256 \(RAGLOOM_MAX_UNZIPPED_MB\)"):
        parse_document(data, "bomb.docx")
    assert clock.seconds < 2  # was still parsing after 11 minutes at 5.4 GB


def test_docx_under_a_lowered_limit(tmp_path: Path) -> None:
    with limited(max_unzipped_mb=1), pytest.raises(LimitExceededError, match="RAGLOOM_MAX_UNZIPPED_MB"):
        parse_document(hostile.expanding_docx(2), "big.docx")
    with limited(max_unzipped_mb=3):
        assert parse_document(hostile.expanding_docx(2), "big.docx").blocks


def _padded(data: bytes, extra_bytes: int) -> bytes:
    """The same zip with one more entry of ``extra_bytes`` zeros (it compresses to almost nothing)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info.filename))
        dst.writestr("padding.bin", bytes(extra_bytes))
    return out.getvalue()


def _zip_files(tmp_path: Path) -> dict[str, bytes]:
    make_docx(tmp_path / "a.docx", [("p", "A paragraph of text.")])
    make_xlsx(tmp_path / "a.xlsx", {"s": [["name", "value"], ["a", 1]]})
    make_pptx(tmp_path / "a.pptx", [{"title": "Slide", "bullets": ["one point"]}])
    make_epub(tmp_path / "a.epub", "Book", [("c1.xhtml", "<h1>Chapter</h1><p>Some text.</p>")])
    return {name: (tmp_path / name).read_bytes() for name in ("a.docx", "a.xlsx", "a.pptx", "a.epub")}


def test_every_zip_based_format_is_checked_before_it_is_parsed(tmp_path: Path) -> None:
    for name, data in _zip_files(tmp_path).items():
        assert parse_document(data, name).blocks
        padded = _padded(data, 2 * 1024 * 1024)
        assert parse_document(padded, name).blocks  # 2 MiB more is fine by default
        with limited(max_unzipped_mb=1), pytest.raises(LimitExceededError, match=r"RAGLOOM_MAX_UNZIPPED_MB"):
            parse_document(padded, name)


def test_zip_entries_that_lie_about_their_size_are_bounded_by_what_they_declare() -> None:
    data = hostile.lying_zip(real_size=5_000_000, claimed_size=1_000)
    check_zip(data, "liar.docx", "DOCX")  # the directory declares 1,000 bytes: under the limit
    with zipfile.ZipFile(io.BytesIO(data)) as zf, pytest.raises(zipfile.BadZipFile, match="Bad CRC"):
        zf.read("word/document.xml")  # zipfile stops at the 1,000 declared bytes: the 5 MB never come out
    with pytest.raises(ParseError):
        parse_document(data, "liar.docx")


def test_zip_entries_compressed_with_bzip2_are_refused(tmp_path: Path) -> None:
    data = _zip_files(tmp_path)["a.docx"]
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename), compress_type=zipfile.ZIP_BZIP2)
    with pytest.raises(ParseError, match="only stored and deflated entries are read"):
        parse_document(out.getvalue(), "a.docx")


# --- cells and columns per sheet -----------------------------------------------------------------


def test_csv_with_200000_columns_fails_at_its_first_row() -> None:
    data = hostile.wide_csv(200_000)
    assert 2_500_000 < len(data) < 4_000_000
    clock = Clock()
    with pytest.raises(LimitExceededError, match=r"200,000 columns in sheet 'wide': .*4,096 \(RAGLOOM_MAX_SHEET_COL"):
        parse_document(data, "wide.csv")
    assert clock.seconds < 3  # was one 3.2-million-character chunk, still embedding after 13 minutes


def _count_rows(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    from ragloom.ingest.parsers import spreadsheet

    rows: list[int] = []
    original = spreadsheet._Budget.row

    def row(self: object, sheet: str, filled: int, width: int) -> None:
        rows.append(filled)
        original(self, sheet, filled, width)  # type: ignore[arg-type]

    monkeypatch.setattr(spreadsheet._Budget, "row", row)
    return rows


def test_xlsx_over_the_cell_limit_stops_at_the_row_that_crosses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    data = hostile.big_xlsx(rows=2_000, columns=10)  # 20,010 cells
    rows = _count_rows(monkeypatch)
    with limited(max_sheet_cells=1_000), pytest.raises(LimitExceededError, match=r"more cells than the limit of 1,000 "
                                                                                  r"\(RAGLOOM_MAX_SHEET_CELLS\)"):
        XlsxParser().parse(data, "big.xlsx")
    assert len(rows) == 101  # header + 99 rows = 1,000 cells; the 101st row crosses the limit: nothing more read
    with limited(max_sheet_cells=20_010):
        assert XlsxParser().parse(data, "big.xlsx").blocks


def test_xlsx_columns_merges_and_impossible_row_numbers(tmp_path: Path) -> None:
    with limited(max_sheet_columns=20), pytest.raises(LimitExceededError, match=r"50 columns in sheet 'data'.*"
                                                                                r"RAGLOOM_MAX_SHEET_COLUMNS"):
        XlsxParser().parse(hostile.big_xlsx(rows=2, columns=50), "wide.xlsx")
    rows: list[list[object]] = [[f"row {r}", f"value {r}"] for r in range(500)]  # 1,000 cells: at the limit
    make_xlsx(tmp_path / "m.xlsx", {"s": rows}, merges={"s": ["C1:T500"]})
    with limited(max_sheet_cells=1_000):
        assert XlsxParser().parse((tmp_path / "m.xlsx").read_bytes(), "m.xlsx")  # an empty merge adds nothing
    make_xlsx(tmp_path / "m.xlsx", {"s": rows}, merges={"s": ["B1:T500"]})
    with limited(max_sheet_cells=1_000), pytest.raises(LimitExceededError, match="RAGLOOM_MAX_SHEET_CELLS"):
        XlsxParser().parse((tmp_path / "m.xlsx").read_bytes(), "m.xlsx")  # "value 0" would fill 9,500 cells
    make_xlsx(tmp_path / "r.xlsx", {"s": [["name"], ["far away"]]})
    with zipfile.ZipFile(tmp_path / "r.xlsx") as zf:
        parts = {n: zf.read(n) for n in zf.namelist()}
    sheet = "xl/worksheets/sheet1.xml"
    parts[sheet] = parts[sheet].replace(b'<row r="2"', b'<row r="999999999"').replace(b'r="A2"', b'r="A999999999"')
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, part in parts.items():
            zf.writestr(n, part)
    clock = Clock()
    with pytest.raises(ParseError, match=r"row number 999999999 .* outside 1\.\.1,048,576"):
        XlsxParser().parse(out.getvalue(), "r.xlsx")
    assert clock.seconds < 2


def test_csv_and_xls_count_cells_across_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "\n".join(",".join(f"r{r}c{c}" for c in range(10)) for r in range(500))
    rows = _count_rows(monkeypatch)
    with limited(max_sheet_cells=1_000), pytest.raises(LimitExceededError, match="RAGLOOM_MAX_SHEET_CELLS"):
        CsvParser().parse(text.encode(), "t.csv")
    assert len(rows) == 101
    make_xls(tmp_path / "t.xls", {"a": [[f"a{r}", r] for r in range(300)], "b": [[f"b{r}", r] for r in range(300)]})
    data = (tmp_path / "t.xls").read_bytes()
    assert len(parse_document(data, "t.xls").blocks) == 2  # one table per sheet, its name the heading
    with limited(max_sheet_cells=1_000), pytest.raises(LimitExceededError, match="RAGLOOM_MAX_SHEET_CELLS"):
        parse_document(data, "t.xls")  # 600 cells per sheet: the second sheet crosses the limit


# --- characters per chunk and chunks per document ------------------------------------------------


def _long_row_table() -> list[Block]:
    values = [f"value {c} " + "x" * 30 for c in range(2_000)]
    header = ",".join(f"column {c}" for c in range(2_000))
    csv_text = header + "\n" + ",".join(values) + "\nshort,row\n"
    return CsvParser().parse(csv_text.encode(), "long.csv").blocks


def test_a_long_table_row_is_split_between_cells_into_bounded_chunks() -> None:
    blocks = _long_row_table()
    [table] = [b for b in blocks if b.kind == "table"]
    assert len(table.text.split("\n")[0]) > 80_000
    with limited(max_chunk_chars=10_000):
        chunks = chunk_blocks(blocks, ChunkerConfig.parse({"method": "naive"}), count_words)
    assert len(chunks) >= 8
    assert all(len(c.text) <= 10_000 for c in chunks)
    assert all(c.kind == "table" and c.heading_path == table.heading_path for c in chunks)
    joined = "\n".join(c.text for c in chunks)
    assert all(f"column {c}: value {c} " in joined for c in range(2_000))  # every cell kept, none cut
    assert any(c.html for c in chunks)  # the short row keeps its HTML


def test_the_table_method_splits_a_long_row_with_the_fields_of_each_part() -> None:
    blocks = _long_row_table()
    with limited(max_chunk_chars=10_000):
        chunks = chunk_blocks(blocks, ChunkerConfig.parse({"method": "table"}), count_words)
    long_row = [c for c in chunks if "value" in c.text]
    assert len(long_row) >= 8 and all(len(c.text) <= 10_000 for c in chunks)
    fields: dict[str, object] = {}
    for c in long_row:
        assert set(c.fields) & set(fields) == set()
        fields.update(c.fields)
    assert len(fields) == 2_000


def test_the_one_method_is_split_at_sentences_and_positions_are_kept() -> None:
    sentence = "The pump is serviced every week by the maintenance team. "
    text = sentence * 2_000  # 114,000 characters in one paragraph
    block = Block(text=text, page=3, boxes=[(3, BBox(10, 20, 300, 400))])
    [whole] = chunk_blocks([block], ChunkerConfig.parse({"method": "one"}), count_words)
    pieces = bound_chunks([whole])  # default limit: 20,000
    assert len(pieces) == 6 and [c.order for c in pieces] == list(range(6))
    assert all(len(c.text) <= 20_000 and c.text.endswith("team.") for c in pieces)
    assert all(c.positions == whole.positions and c.method == "one" for c in pieces)
    assert " ".join(c.text for c in pieces) == text.strip()


def test_split_text_prefers_lines_then_sentences_then_spaces_then_a_hard_cut() -> None:
    lines = "\n".join(["a" * 60] * 10)
    assert split_text(lines, 200) == ["\n".join(["a" * 60] * 3)] * 3 + ["a" * 60]
    assert split_text("One two three. Four five six seven eight.", 20) == [
        "One two three.", "Four five six", "seven eight."]  # a piece is at least half the limit
    assert split_text("x" * 45, 20) == ["x" * 20, "x" * 20, "x" * 5]
    assert split_row("a: 1; b: 22; c: 333", 9) == ["a: 1", "b: 22", "c: 333"]


def test_too_many_chunks_fail_with_the_limit_named() -> None:
    chunks = [Chunk(text=f"chunk {i}", order=i) for i in range(120)]
    with limited(max_chunks=100), pytest.raises(LimitExceededError, match=r"120 chunks: .*100 \(RAGLOOM_MAX_CHUNKS\)"):
        bound_chunks(chunks)
    with limited(max_chunks=100, max_chunk_chars=100):
        long = [Chunk(text="word " * 300, order=0)] * 30  # each splits in 15 pieces
        with pytest.raises(LimitExceededError, match="RAGLOOM_MAX_CHUNKS"):
            bound_chunks(long)


def test_pipeline_chunk_and_embedding_text_are_bounded() -> None:
    from ragloom.ingest.pipeline import chunk, embedding_text

    job = _job(chunk_method="one")
    parsed = ParsedDocument(blocks=[Block(text="Some words here. " * 5_000)])
    with limited(max_chunk_chars=1_000):
        chunks = chunk(job, parsed, FakeEmbedder())
        assert len(chunks) >= 85 and all(len(c.text) <= 1_000 and c.text.endswith("here.") for c in chunks)
        assert len(embedding_text("short", ["why? " * 1_000])) == 1_000
    job.chunk_method, job.parser_config = "naive", {"chunk_token_num": 16}
    with limited(max_chunks=10), pytest.raises(LimitExceededError, match=r"\d+ chunks: .*10 \(RAGLOOM_MAX_CHUNKS\)"):
        chunk(job, ParsedDocument(blocks=[Block(text="Some words here. " * 100)]), FakeEmbedder())


def _job(**values: object) -> object:
    """A pipeline Job for ``a.txt`` (fields without a default get a placeholder)."""
    from dataclasses import MISSING, fields

    from ragloom.ingest.pipeline import Job

    given = {"filename": "a.txt", "chunk_method": "naive", "parser_config": {}, **values}
    for f in fields(Job):
        if f.default is MISSING and f.default_factory is MISSING and f.name not in given:
            given[f.name] = "x"
    return Job(**given)


class FakeEmbedder:
    """Counts words as tokens and batches embedded."""

    def __init__(self) -> None:
        self.batches = 0

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def embed_passages(self, texts: list[str]):  # type: ignore[no-untyped-def]
        import numpy as np

        self.batches += 1
        return np.ones((len(texts), 4), dtype=np.float32)


# --- nesting ---------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [300, 5_000, 100_000])
def test_deeply_nested_json_fails_with_the_limit_named(depth: int) -> None:
    for data in (hostile.nested_json(depth), hostile.nested_json(depth, objects=True)):
        clock = Clock()
        with pytest.raises(LimitExceededError, match=rf"{depth:,} levels of nesting: .*256 \(RAGLOOM_MAX_NESTING\)"):
            parse_document(data, "deep.json")
        assert clock.seconds < 1
    lines = b'{"ok": 1}\n' + hostile.nested_json(depth) + b"\n"
    with pytest.raises(LimitExceededError, match=r"deep\.jsonl, line 2: .*RAGLOOM_MAX_NESTING"):
        parse_document(lines, "deep.jsonl")


def test_json_nesting_follows_the_setting_and_ignores_brackets_in_strings() -> None:
    assert parse_document(hostile.nested_json(200), "ok.json").blocks
    assert parse_document(b'{"a": "' + b"[" * 1_000 + b'"}', "ok.json").blocks
    with limited(max_nesting=16):
        assert parse_document(hostile.nested_json(16), "ok.json").blocks
        with pytest.raises(LimitExceededError, match="17 levels of nesting"):
            parse_document(hostile.nested_json(17), "deep.json")


@pytest.mark.parametrize("depth", [300, 5_000])
def test_deeply_nested_html_fails_with_the_limit_named(depth: int) -> None:
    with pytest.raises(LimitExceededError, match=r"deep\.html: .*nesting.*256 \(RAGLOOM_MAX_NESTING\)"):
        parse_document(hostile.nested_html(depth), "deep.html")
    assert parse_document(hostile.nested_html(200), "ok.html").blocks


def test_docx_xml_nested_past_the_xml_parser_limit_names_the_setting() -> None:
    data = hostile.expanding_docx(0.001)
    out = io.BytesIO()
    paragraph = b"<w:p><w:r><w:t>deep</w:t></w:r></w:p>"
    nested = b"<w:sdt><w:sdtContent>" * 200 + paragraph + b"</w:sdtContent></w:sdt>" * 200
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            if info.filename == "word/document.xml":
                body = body.replace(b"<w:body>", b"<w:body>" + nested)
            dst.writestr(info, body)
    with pytest.raises(LimitExceededError, match=r"nesting \(XML\).*RAGLOOM_MAX_NESTING"):
        parse_document(out.getvalue(), "deep.docx")


def test_parse_document_turns_a_recursion_error_into_a_clear_parse_error() -> None:
    class Recursive:
        def parse(self, data: bytes, filename: str) -> ParsedDocument:
            def down(n: int) -> int:
                return down(n + 1) + 1

            down(0)
            raise AssertionError("unreachable")

    registry = new_registry()
    registry.register("text/plain", Recursive, replace=True)
    with pytest.raises(LimitExceededError, match=r"notes\.txt: .*nesting.*RAGLOOM_MAX_NESTING"):
        parse_document(b"plain words", "notes.txt", registry)


# --- checkpoints -----------------------------------------------------------------------------


def after(n: int) -> Callable[[], bool]:
    """False for the first ``n`` calls, then True."""
    calls = [0]

    def answer() -> bool:
        calls[0] += 1
        return calls[0] > n

    return answer


def _pdf(tmp_path: Path, pages: int) -> bytes:
    make_pdf(tmp_path / "p.pdf", [[f"## Page {n}", f"Body text of page number {n} with words."] for n in range(pages)])
    return (tmp_path / "p.pdf").read_bytes()


def _count_page_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    from ragloom.ingest.parsers import pdf

    reads: list[int] = []
    original = pdf.read_page

    def read_page(doc, number, filename):  # type: ignore[no-untyped-def]
        reads.append(number)
        return original(doc, number, filename)

    monkeypatch.setattr(pdf, "read_page", read_page)
    return reads


def test_cancel_stops_a_pdf_parse_at_the_next_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _pdf(tmp_path, 8)
    reads = _count_page_reads(monkeypatch)
    guard = TaskGuard(IngestLimits.defaults(), is_cancelled=after(3), cancel_every=0.0)
    with guarded(guard), pytest.raises(TaskCancelledError):
        PdfParser().parse(data, "p.pdf")
    assert reads == [1, 2, 3]


def test_shutdown_interrupts_parsing_and_rendering_between_pages(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    data = _pdf(tmp_path, 4)
    reads = _count_page_reads(monkeypatch)
    guard = TaskGuard(IngestLimits.defaults(), stopping=after(2))
    with guarded(guard), pytest.raises(TaskInterruptedError):
        PdfParser().parse(data, "p.pdf")
    assert reads == [1, 2]
    rendered = []
    with guarded(TaskGuard(IngestLimits.defaults(), stopping=after(1))), pytest.raises(TaskInterruptedError):
        for page, _ in render_pages_png(data, dpi=20):
            rendered.append(page)
    assert rendered == [1]


def test_cancel_stops_embedding_at_the_next_batch() -> None:
    from ragloom.ingest.pipeline import EMBED_BATCH, embed

    job = _job()
    chunks = [Chunk(text=f"chunk {i}", order=i) for i in range(EMBED_BATCH * 10)]
    embedder = FakeEmbedder()
    guard = TaskGuard(IngestLimits.defaults(), is_cancelled=after(2), cancel_every=0.0)
    with guarded(guard), pytest.raises(TaskCancelledError):
        embed(job, chunks, embedder, lambda *a, **k: None)  # type: ignore[arg-type]
    assert embedder.batches == 2  # two batches (the file name rides in the first), then the cancel
    assert len(embed(job, chunks, FakeEmbedder(), lambda *a, **k: None)) == len(chunks)  # type: ignore[arg-type]


def test_sheets_are_checked_every_few_thousand_rows() -> None:
    text = "\n".join(f"{r},{r * 2}" for r in range(20_000)).encode()
    with guarded(TaskGuard(IngestLimits.defaults(), stopping=after(2))), pytest.raises(TaskInterruptedError):
        CsvParser().parse(text, "rows.csv")


def test_a_task_in_a_shared_process_is_held_to_what_it_adds_a_worker_to_the_whole_process() -> None:
    limits = IngestLimits.defaults()
    shared = TaskGuard(limits, memory_limit_mb=64, memory_baseline_mb=rss_mb())  # the process holds far more
    shared.checkpoint()  # the task itself added nothing yet
    held = bytearray(96 * 1024 * 1024)  # the task takes 96 MiB
    held[::4096] = b"x" * len(held[::4096])  # touched, so resident
    with pytest.raises(LimitExceededError, match="MiB of memory taken by the task"):
        shared.checkpoint()
    del held
    own = TaskGuard(limits, memory_limit_mb=64)  # a worker process of its own: all of it counts
    with pytest.raises(LimitExceededError, match="MiB of worker memory.*RAGLOOM_TASK_MEMORY_LIMIT_MB"):
        own.checkpoint()
