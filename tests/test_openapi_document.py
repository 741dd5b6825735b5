"""The OpenAPI document does not change by accident: the live ``/openapi.json`` is byte for byte
tests/openapi.json. Moving a model, renaming a field or retyping a route shows up here."""

from __future__ import annotations

import difflib
from pathlib import Path

from tests.openapi_reference import REFERENCE, openapi_document, render


def test_the_openapi_document_is_the_reference(tmp_path: Path) -> None:
    live = render(openapi_document(tmp_path / "home"))
    reference = REFERENCE.read_text(encoding="utf-8")
    if live != reference:
        diff = "".join(difflib.unified_diff(reference.splitlines(keepends=True), live.splitlines(keepends=True),
                                            "tests/openapi.json", "live /openapi.json", n=2))
        lines = diff.splitlines()
        shown = "\n".join(lines[:80]) + (f"\n... ({len(lines) - 80} more lines)" if len(lines) > 80 else "")
        raise AssertionError(
            "the OpenAPI document changed. If the API changed on purpose, regenerate the reference with "
            "`make openapi` (python scripts/openapi.py) and review the diff; else undo the change.\n" + shown)
