"""The int8 text recogniser (ragloom.ingest.ocr.quantize): made offline from the installed model,
cached by content, reading as the float model does, and never in the way when it cannot be made."""

from __future__ import annotations

import importlib
import logging
from pathlib import Path

import pytest

from ragloom.ingest.ocr import quantize
from ragloom.ingest.ocr.models import installed
from tests.shared import made_once

pytestmark = pytest.mark.skipif(not (installed("rapidocr") and installed("onnx")), reason="rapidocr/onnx missing")


def source_model() -> Path:
    return Path(importlib.import_module("rapidocr").__file__ or "").parent / "models" / "PP-OCRv6_rec_small.onnx"


def test_switched_off_by_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv(quantize.ENV_SWITCH, "0")
    assert quantize.rec_model(str(source_model())) == str(source_model())
    assert not (tmp_path / "ragloom").exists()


def test_a_failure_falls_back_to_the_float_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(quantize.ENV_SWITCH, raising=False)

    def broken(source: Path, target: Path) -> None:
        raise ValueError("no font")

    monkeypatch.setattr(quantize, "build", broken)
    with caplog.at_level(logging.WARNING, logger="ragloom.ingest.ocr.quantize"):
        assert quantize.rec_model(str(source_model())) == str(source_model())
    assert "using the float model: no font" in caplog.text


def test_cache_name_follows_the_content(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    a, b, c = tmp_path / "a" / "m.onnx", tmp_path / "b" / "m.onnx", tmp_path / "m.onnx"
    for path, data in ((a, b"one"), (b, b"one"), (c, b"two")):
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
    assert quantize.cached_path(a) == quantize.cached_path(b) != quantize.cached_path(c)
    assert quantize.cached_path(a).parent == tmp_path / "cache" / "ragloom" / "ocr"
    assert f".r{quantize.RECIPE}." in quantize.cached_path(a).name


@pytest.fixture(scope="module")
def int8_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # ~20 s: made once for the run, whichever workers run this module's tests
    return made_once(tmp_path_factory, "rec.int8.onnx", lambda target: quantize.build(source_model(), target))


def test_a_damaged_cached_model_is_removed_and_the_float_one_used(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(quantize.ENV_SWITCH, raising=False)
    target = quantize.cached_path(source_model())
    target.parent.mkdir(parents=True)
    target.write_bytes(b"not a model")
    monkeypatch.setattr(quantize, "build", lambda *_: pytest.fail("made again"))
    assert quantize.rec_model(str(source_model())) == str(source_model())
    assert not target.exists()  # made again at the next start


@pytest.mark.slow
def test_a_cached_model_is_used_without_being_made_again(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                         int8_model: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(quantize.ENV_SWITCH, raising=False)
    target = quantize.cached_path(source_model())
    target.parent.mkdir(parents=True)
    target.write_bytes(int8_model.read_bytes())
    monkeypatch.setattr(quantize, "build", lambda *_: pytest.fail("made again"))
    assert quantize.rec_model(str(source_model())) == str(target)


@pytest.mark.slow
def test_int8_model_keeps_the_character_list_and_reads_as_the_float_one(int8_model: Path) -> None:
    import onnxruntime as ort

    meta = ort.InferenceSession(str(int8_model), providers=["CPUExecutionProvider"]).get_modelmeta()
    assert len(meta.custom_metadata_map["character"].splitlines()) > 6000  # rapidocr reads its classes there
    lines = quantize.calibration_lines(count=40, seed=7)  # other lines than the calibration's
    assert quantize._agreement(source_model(), int8_model, lines) >= 0.99


@pytest.mark.slow
@pytest.mark.parametrize("text", ["Unit RX-4821 lot 17,361.05", "AB37/519 serial QX-0042",
                                  "温度传感器编号TS-0042应定期校准"])
def test_int8_engine_reads_small_text_and_codes(int8_model: Path, text: str) -> None:
    import random

    from ragloom.ingest.ocr.models import OcrModels

    font = quantize._cjk_font() if any("\u4e00" <= ch <= "\u9fff" for ch in text) else quantize.LATIN_FONTS[0]
    if font is None or not Path(font).is_file():
        pytest.skip("font missing")
    engine, float_engine = OcrModels(1)._build_ocr(str(int8_model)), OcrModels(1)._build_ocr(str(source_model()))
    for size in (22, 30):  # 8 and 11 points at 200 dpi
        crop = quantize._render(text, font, size, random.Random(0))
        read = engine.recognize([crop])[0][0]
        assert read.replace(" ", "") == text.replace(" ", "")
        assert read == float_engine.recognize([crop])[0][0]
