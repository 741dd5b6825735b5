"""The API's OpenAPI document as a reference file: tests/openapi.json holds the document
``/openapi.json`` serves, and tests/test_openapi_document.py checks the live one is still the same
(``make openapi`` rewrites the file when the API changes on purpose)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REFERENCE = Path(__file__).resolve().parent / "openapi.json"


def openapi_document(home: Path) -> dict[str, Any]:
    """The document ``/openapi.json`` serves, of an app over a fresh ``home`` (nothing is started)."""
    from ragloom.api.app import create_app
    from ragloom.config import Settings

    app = create_app(Settings(home=home, workers=0, _env_file=None))
    return app.openapi()


def render(doc: dict[str, Any]) -> str:
    """The reference's text: keys sorted, one-space indent, a final newline."""
    return json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
