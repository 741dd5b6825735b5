"""An int8 copy of the text recogniser, made offline from the installed model at first use.

Recognition is most of the CPU time of a scanned page (:mod:`ragloom.ingest.ocr.reader`)
and three quarters of the recogniser's time is convolutions, mostly 1×1. Their
int8 form (ONNX Runtime's QLinearConv; AVX2 is enough) takes ~25% less CPU time
per line with no loss of accuracy on our pages (``benchmarks/parse.py``) and
within ±0.5 point of character error rate on harder ones (8-point codes, noise).

The int8 model is made by static quantization, never downloaded:

- the float model is converted to opset 13 (per-channel scales need it) and
  fused by ONNX Runtime first (Gelu, Conv+activation, layer norms), so the
  quantization nodes do not break those fusions;
- the convolutions get per-channel int8 weights and uint8 activations
  calibrated on text lines rendered here (Latin and CJK fonts of the system,
  words, codes like ``RX-4821``, numbers, Chinese; several sizes, clean and
  noisy); convolutions fused with their activation stay float, and so do the
  first and last three plain ones, the most sensitive (the "O"/"0", "l"/"|"
  confusions on 8-point codes dropped to the float model's level without them);
- the result must read the calibration lines as the float model does
  (:data:`MIN_AGREEMENT`), or it is discarded.

It is cached under ``$XDG_CACHE_HOME/ragloom/ocr`` (``~/.cache``), named after
the source model's SHA-256, the recipe version and ONNX Runtime's version (the
fused graph uses its operators). Any failure (``onnx`` missing, no font, a
read-only disk, a disagreeing model) falls back to the float model with a
warning; ``RAGLOOM_OCR_INT8=0`` turns the int8 model off.
"""

from __future__ import annotations

import hashlib
import logging
import os
import random
import string
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ragloom.ingest.ocr.accuracy import edit_distance

log = logging.getLogger(__name__)

RECIPE = 1  # bump when the way the int8 model is made changes: older cached files are then ignored
ENV_SWITCH = "RAGLOOM_OCR_INT8"
CALIBRATION_LINES = 96
MIN_AGREEMENT = 0.98  # 1 - CER of the int8 model's reading of the calibration lines against the float one's
LATIN_FONTS = ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf")
_ENGLISH = (
    "Invoice 2024-0187 total due: 1,284.50 EUR", "The valve of unit RX-4821 is tested weekly.",
    "Section 4.2 Maintenance (see Table 3)", "Quick brown foxes jump over the lazy dog; 0123456789",
    "Pressure must not exceed 3.5 bar at 20 °C.", "Ref. ABC/77-X, page 12 of 40",
)
_CHINESE = (
    "设备每运行五百小时须检查一次压力不得超过三点五巴温度传感器应定期校准阀门更换后必须进行密封测试"
    "操作人员应佩戴防护手套第三章安全规定与操作说明合同金额人民币壹拾贰万元整的一是在不了有和人这中大"
    "为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经"
)


def enabled() -> bool:
    """False when ``RAGLOOM_OCR_INT8`` is ``0``/``false``/``no``/``off``."""
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


def rec_model(source: str) -> str:
    """The path of the int8 recogniser made from ``source`` (made and cached on first use),
    or ``source`` itself when it is switched off or cannot be made."""
    if not enabled():
        return source
    try:
        target = cached_path(Path(source))
        if not target.is_file():
            log.info("making the int8 text recogniser from %s (once, ~30 s)", source)
            build(Path(source), target)
    except Exception as exc:  # any failure: the float model reads as well, only slower
        log.warning("int8 text recogniser unavailable, using the float model: %s", exc)
        return source
    try:
        _session(target)  # a damaged file must not stop OCR
    except Exception as exc:
        log.warning("int8 text recogniser %s does not load (%s): removed, using the float model", target, exc)
        target.unlink(missing_ok=True)
        return source
    return str(target)


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/ragloom/ocr`` (or ``~/.cache/ragloom/ocr``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ragloom" / "ocr"


def cached_path(source: Path) -> Path:
    """Where the int8 model of ``source`` is kept: named after its content, the recipe and ONNX Runtime."""
    import onnxruntime

    digest = hashlib.sha256()
    with source.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return cache_dir() / f"{source.stem}.{digest.hexdigest()[:16]}.r{RECIPE}.ort{onnxruntime.__version__}.int8.onnx"


def build(source: Path, target: Path) -> None:
    """Quantize ``source`` into ``target`` (written whole or not at all); raises on any failure."""
    target.parent.mkdir(parents=True, exist_ok=True)
    lines = calibration_lines()
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        work = Path(tmp)
        fused = _fused_opset13(source, work)
        out = work / "int8.onnx"
        _quantize(fused, out, lines)
        _copy_metadata(source, out)  # rapidocr reads the character list from it
        agreement = _agreement(source, out, lines)
        if agreement < MIN_AGREEMENT:
            raise ValueError(f"the int8 model reads {agreement:.1%} of the calibration text as the float one")
        log.info("int8 text recogniser ready (%.1f%% agreement): %s", 100 * agreement, target)
        os.replace(out, target)


def _fused_opset13(source: Path, work: Path) -> Path:
    """``source`` at opset 13, with ONNX Runtime's fusions applied and shapes inferred."""
    import onnx
    import onnxruntime as ort
    from onnx import version_converter
    from onnxruntime.quantization.shape_inference import quant_pre_process

    opset13 = work / "opset13.onnx"
    onnx.save(version_converter.convert_version(onnx.load(str(source)), 13), str(opset13))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(work / "fused.onnx")
    ort.InferenceSession(str(opset13), options, providers=["CPUExecutionProvider"])
    ready = work / "ready.onnx"
    quant_pre_process(str(work / "fused.onnx"), str(ready), skip_optimization=True, skip_symbolic_shape=True)
    return ready


def _quantize(fused: Path, out: Path, lines: list[np.ndarray]) -> None:
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    convs = [node.name for node in onnx.load(str(fused)).graph.node if node.op_type == "Conv"]
    if len(convs) < 8:
        raise ValueError(f"unexpected recogniser graph ({len(convs)} plain convolutions)")

    class Lines(CalibrationDataReader):  # type: ignore[misc]
        def __init__(self) -> None:
            self._next = iter(lines)

        def get_next(self) -> dict[str, np.ndarray] | None:
            line = next(self._next, None)
            return None if line is None else {"x": line}

    quantize_static(
        str(fused), str(out), Lines(), quant_format=QuantFormat.QDQ, per_channel=True,
        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, op_types_to_quantize=["Conv"],
        nodes_to_exclude=[convs[0], *convs[-3:]],
    )


def _copy_metadata(source: Path, out: Path) -> None:
    import onnx

    model = onnx.load(str(out))
    have = {p.key for p in model.metadata_props}
    for prop in onnx.load(str(source), load_external_data=False).metadata_props:
        if prop.key not in have:
            model.metadata_props.append(prop)
    onnx.save(model, str(out))


def _agreement(source: Path, out: Path, lines: list[np.ndarray]) -> float:
    """1 - the character error rate of the int8 model's reading of ``lines`` against the float model's."""
    float_run, int8_run = _session(source), _session(out)
    errors = total = 0
    for line in lines:
        want, got = _ctc(float_run(line)), _ctc(int8_run(line))
        errors += edit_distance(want, got)
        total += len(want)
    return 1 - errors / max(1, total)


def _ctc(scores: np.ndarray) -> list[int]:
    """The classes read from one line's scores ``(1, steps, classes)`` (:func:`.engine.ctc_kept`)."""
    from ragloom.ingest.ocr.engine import ctc_kept  # imports OpenCV: only when OCR runs

    best = scores[0].argmax(axis=1)
    return [int(k) for k in best[ctc_kept(best)]]


def _session(path: Path) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    return lambda x: session.run(None, {name: x})[0]


def calibration_lines(count: int = CALIBRATION_LINES, seed: int = 1) -> list[np.ndarray]:
    """Recogniser inputs ``(1, 3, 48, width)``: rendered lines of words, codes, numbers and
    Chinese in the system's fonts, 15 to 40 pixels high, half of them with scan noise."""
    fonts = [f for f in LATIN_FONTS if Path(f).is_file()]
    cjk = _cjk_font()
    if not fonts:
        raise ValueError("no Latin font to render calibration text with")
    rng = random.Random(seed)
    lines = []
    for i in range(count):
        chinese = cjk is not None and i % 3 == 2 and rng.random() < 0.6
        font = cjk if chinese and cjk else fonts[i % len(fonts)]
        text = "".join(rng.choice(_CHINESE) for _ in range(rng.randint(4, 30))) if chinese else _latin_text(rng)
        lines.append(rec_input(_render(text, font, rng.choice([15, 18, 22, 26, 30, 40]), rng)))
    return lines


def _latin_text(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return rng.choice(_ENGLISH)
    return " ".join(_word(rng) for _ in range(rng.randint(1, 8)))


def _word(rng: random.Random) -> str:
    """A code, a number, a random word or look-alike characters (what int8 rounding may confuse)."""
    upper = string.ascii_uppercase
    return rng.choice([
        f"RX-{rng.randint(1000, 9999)}",
        f"{rng.randint(0, 99999):,}.{rng.randint(0, 99):02d}",
        "".join(rng.choice(string.ascii_letters) for _ in range(rng.randint(2, 8))),
        f"{rng.choice(upper)}{rng.choice(upper)}{rng.randint(10, 99)}/{rng.randint(100, 999)}",
        "l|I1 O0o",
    ])


def _render(text: str, font_file: str, size: int, rng: random.Random) -> np.ndarray:
    """``text`` in black on white, BGR, with a margin like a detected line's; sometimes blurred and grainy."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(font_file, size)
    image = Image.new("RGB", (int(font.getlength(text)) + size, int(size * 1.5)), "white")
    ImageDraw.Draw(image).text((size // 2, size // 4), text, font=font, fill="black")
    bgr = np.asarray(image)[:, :, ::-1]
    if rng.random() < 0.5:
        import cv2

        noise = np.random.default_rng(rng.randrange(1 << 30)).normal(0, 12, bgr.shape)
        bgr = np.clip(cv2.GaussianBlur(bgr, (0, 0), 0.8) * 0.85 + 20 + noise, 0, 255).astype(np.uint8)
    return bgr


def rec_input(crop: np.ndarray) -> np.ndarray:
    """One crop as :meth:`ragloom.ingest.ocr.engine.TextEngine.recognize` feeds it (height 48, padded to 320)."""
    import cv2

    from ragloom.ingest.ocr.engine import REC_HEIGHT, REC_MIN_WIDTH

    fit = int(np.ceil(REC_HEIGHT * crop.shape[1] / crop.shape[0]))
    tensor = np.zeros((1, 3, REC_HEIGHT, max(REC_MIN_WIDTH, fit)), dtype=np.float32)
    line = cv2.resize(crop, (fit, REC_HEIGHT)).astype(np.float32)
    tensor[0, :, :, :fit] = line.transpose(2, 0, 1) * np.float32(2 / 255) - np.float32(1)
    return tensor


def _cjk_font() -> str | None:
    """A font with Chinese glyphs (fontconfig's first), or None."""
    try:
        out = subprocess.run(["fc-list", ":lang=zh", "file"], capture_output=True, text=True, check=False,
                             timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    files = sorted(line.split(":")[0].strip() for line in out.splitlines() if line.strip())
    return files[0] if files else None

