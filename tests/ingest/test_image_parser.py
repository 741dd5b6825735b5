"""Image files (PNG, JPEG, TIFF) through the registry: detection, OCR, pages, errors."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from ragloom.errors import ParseError
from ragloom.ingest.parsers import detect_type, parse_document
from ragloom.ingest.parsers.image import ImageParser
from tests.ingest.test_ocr import SANS, SANS_BOLD, draw_page, near


def encode(images: list[Image.Image], fmt: str) -> bytes:
    out = io.BytesIO()
    if len(images) > 1:
        images[0].save(out, format=fmt, save_all=True, append_images=images[1:])
    else:
        images[0].save(out, format=fmt)
    return out.getvalue()


def small_page(title: str, body: str) -> tuple[Image.Image, dict[str, tuple[float, float, float, float]]]:
    page = draw_page([(title, 60, 40, 48, SANS_BOLD), (body, 60, 140, 30, SANS)], size=(1000, 260))
    return page.image, page.boxes


@pytest.mark.parametrize(("fmt", "mime"), [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("TIFF", "image/tiff")])
def test_image_types_are_detected_by_content(fmt: str, mime: str) -> None:
    assert detect_type("scan.bin", encode([Image.new("RGB", (20, 20), "white")], fmt)) == mime


@pytest.mark.slow
def test_png_is_read_with_title_sections_and_pixel_boxes() -> None:
    image, boxes = small_page("Safety Notice", "Wear gloves when the valve is opened.")
    doc = parse_document(encode([image], "PNG"), "notice.png")
    assert doc.metadata["mime_type"] == "image/png"
    assert doc.page_count == 1 and doc.page_sizes == {1: (1000.0, 260.0)}
    title, body = doc.blocks
    assert (title.kind, title.text) == ("title", "Safety Notice")
    assert body.text == "Wear gloves when the valve is opened." and body.heading_path == ("Safety Notice",)
    assert near(body.boxes[0][1], boxes[body.text], 1.0, slack=10)


@pytest.mark.slow
def test_multi_page_tiff_gives_one_page_per_frame() -> None:
    first, _ = small_page("Part One", "The pump is checked every week.")
    second, boxes = small_page("Part Two", "The filter is replaced each month.")
    doc = parse_document(encode([first, second.convert("L")], "TIFF"), "manual.tiff")
    assert doc.page_count == 2
    assert [(b.page, b.text) for b in doc.blocks] == [
        (1, "Part One"), (1, "The pump is checked every week."),
        (2, "Part Two"), (2, "The filter is replaced each month."),
    ]
    assert doc.blocks[3].heading_path == ("Part Two",)
    assert near(doc.blocks[3].boxes[0][1], boxes["The filter is replaced each month."], 1.0, slack=10)


@pytest.mark.slow
def test_greyscale_jpeg_is_read() -> None:
    image, _ = small_page("Grey Scan", "Pressure must stay under 3.5 bar.")
    doc = ImageParser().parse(encode([image.convert("L")], "JPEG"), "scan.jpg")
    assert [b.text for b in doc.blocks] == ["Grey Scan", "Pressure must stay under 3.5 bar."]


@pytest.mark.slow
def test_image_without_text_is_refused_clearly() -> None:
    with pytest.raises(ParseError, match="no text was found in the image"):
        parse_document(encode([Image.new("RGB", (600, 400), "white")], "PNG"), "blank.png")


def test_corrupt_image_is_refused_clearly() -> None:
    data = encode([Image.new("RGB", (300, 300), "white")], "PNG")
    with pytest.raises(ParseError, match="corrupt image"):
        parse_document(data[:60], "broken.png")
    with pytest.raises(ParseError, match="corrupt image"):
        ImageParser().parse(b"II*\x00" + b"\x00" * 40, "broken.tiff")
