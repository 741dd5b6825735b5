"""Text detection and recognition with rapidocr's PP-OCRv6 models, driven step by step.

rapidocr's own ``RapidOCR.__call__`` does more than a page reader needs and
some of it costs: it resizes any image over 2000 pixels before detection,
normalises the detector input in float64, and decodes recognition output by
reducing the (batch, steps, 18 710 classes) scores twice. :class:`TextEngine`
keeps rapidocr's models, detector post-processing (DB boxes) and line
cropping, and does the rest itself:

- :meth:`TextEngine.detect` scales the image to a given longer side (area
  interpolation, so thin strokes survive the reduction) and normalises in
  float32;
- :meth:`TextEngine.recognize` scales crops to height 48 like rapidocr but
  batches only crops of nearly the same width (rapidocr pads six crops in
  width order to the widest: ~9% of the columns of a page went to padding)
  and decodes the CTC output with one argmax.

An engine holds single-threaded ONNX sessions and per-call state: it is used
by one thread at a time (:class:`ragloom.ingest.ocr.models.EnginePool`).
"""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np

REC_HEIGHT = 48  # the recogniser's fixed input height
REC_MIN_WIDTH = 320  # rapidocr pads a batch to at least this width
REC_BATCH = 6  # at most this many crops in one call
MIN_DET_SIDE = 32


class TextEngine:
    """One detector and one recogniser (rapidocr's sessions, built by a ``RapidOCR`` instance)."""

    def __init__(self, rapid: Any) -> None:
        self._det = rapid._load_det_model()
        self._rec = rapid._load_rec_model()
        self._chars: list[str] = list(self._rec.postprocess_op.character)
        self.text_score = float(rapid.cfg.Global.text_score)

    def detect(self, bgr: np.ndarray, max_side: int) -> np.ndarray:
        """Text line boxes ``(n, 4, 2)`` (float32, pixels of ``bgr``, clockwise from top-left),
        found on the image scaled so that its longer side is at most ``max_side``; top to bottom."""
        h, w = bgr.shape[:2]
        pad = 0
        if h < MIN_DET_SIDE or w > 8 * h:  # a lone line: the detector needs some height around it
            pad = max(MIN_DET_SIDE, w // 8) - h
            pad = max(0, (pad + 1) // 2)
            bgr = cv2.copyMakeBorder(bgr, pad, pad, 0, 0, cv2.BORDER_REPLICATE)
            h += 2 * pad
        ratio = min(1.0, max_side / max(h, w))
        size = (max(MIN_DET_SIDE, round(w * ratio / 32) * 32), max(MIN_DET_SIDE, round(h * ratio / 32) * 32))
        small = cv2.resize(bgr, size, interpolation=cv2.INTER_AREA if ratio < 1 else cv2.INTER_LINEAR)
        tensor = (small.astype(np.float32) * np.float32(2 / 255) - np.float32(1)).transpose(2, 0, 1)[np.newaxis]
        preds = self._det.session(np.ascontiguousarray(tensor))
        boxes, _ = self._det.postprocess_op(preds, (h, w))
        if len(boxes) == 0:
            return np.zeros((0, 4, 2), dtype=np.float32)
        found: np.ndarray = np.asarray(self._det.sorted_boxes(np.asarray(boxes)), dtype=np.float32)
        if pad:
            found[:, :, 1] = np.clip(found[:, :, 1] - pad, 0, h - 2 * pad)
        return found

    def recognize(self, crops: list[np.ndarray]) -> list[tuple[str, float]]:
        """``(text, score)`` of each line crop (BGR, text running left to right), in order.

        Each crop is scaled to height 48 and padded on the right to the widest of
        its batch (at least 320 pixels); batches hold crops of nearly the same
        width (:func:`batches`), so little is spent on padding.
        """
        results: list[tuple[str, float]] = [("", 0.0)] * len(crops)
        ratios = [c.shape[1] / max(1, c.shape[0]) for c in crops]
        for batch in batches(ratios):
            width = int(REC_HEIGHT * max(REC_MIN_WIDTH / REC_HEIGHT, *(ratios[i] for i in batch)))
            tensor = np.zeros((len(batch), 3, REC_HEIGHT, width), dtype=np.float32)
            for row, i in enumerate(batch):
                fit = min(width, math.ceil(REC_HEIGHT * ratios[i]))
                line = cv2.resize(crops[i], (fit, REC_HEIGHT)).astype(np.float32)
                tensor[row, :, :, :fit] = line.transpose(2, 0, 1) * np.float32(2 / 255) - np.float32(1)
            for i, found in zip(batch, self._decode(self._rec.session(tensor)), strict=True):
                results[i] = found
        return results

    def _decode(self, preds: np.ndarray) -> list[tuple[str, float]]:
        """CTC: the best class per step, repeats collapsed, blanks (class 0) dropped;
        the score is the mean probability of the kept steps (rapidocr's rule)."""
        best = preds.argmax(axis=2)
        prob = np.take_along_axis(preds, best[:, :, np.newaxis], axis=2)[:, :, 0]
        out = []
        for idx, p in zip(best, prob, strict=True):
            keep = ctc_kept(idx)
            text = "".join(self._chars[k] for k in idx[keep])
            out.append((text, float(p[keep].mean()) if keep.any() else 0.0))
        return out


def ctc_kept(best: np.ndarray) -> np.ndarray:
    """CTC decoding of one line's best class per step: which steps are kept (a repeat of the
    step before is collapsed, the blank, class 0, dropped)."""
    keep: np.ndarray = best != 0
    keep[1:] &= best[1:] != best[:-1]
    return keep


def rec_columns(ratio: float) -> float:
    """Pixel columns the recogniser runs over for a crop of width/height ``ratio``
    (its cost: ~0.12 ms of CPU per column with the float model, ~25% less in int8)."""
    return REC_HEIGHT * max(ratio, REC_MIN_WIDTH / REC_HEIGHT)


def batches(ratios: list[float], max_columns: float = float("inf")) -> list[list[int]]:
    """Crops (indices) grouped for recognition, widest first: a batch holds at most
    ``REC_BATCH`` crops and ``max_columns`` padded columns, and none of its crops is
    padded by more than 10% of its own width.

    On a CPU a batch costs the same per column as single crops, so batches only
    save calls; padding a short line to a long one would cost its whole width.
    """
    out: list[list[int]] = []
    for i in sorted(range(len(ratios)), key=lambda k: -ratios[k]):
        if out:
            batch = out[-1]
            widest = rec_columns(ratios[batch[0]])
            if (len(batch) < REC_BATCH and widest <= 1.1 * rec_columns(ratios[i])
                    and widest * (len(batch) + 1) <= max_columns):
                batch.append(i)
                continue
        out.append([i])
    return out


def crop_line(bgr: np.ndarray, box: np.ndarray) -> np.ndarray:
    """The line inside a 4-point box, straightened (rapidocr's crop; a tall box is turned to run left to right)."""
    from rapidocr.utils.process_img import get_rotate_crop_image

    return np.asarray(get_rotate_crop_image(bgr, box.astype(np.float32).copy()))
