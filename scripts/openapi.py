"""Rewrite tests/openapi.json, the reference OpenAPI document tests/test_openapi_document.py
compares the live one with, and src/ragloom/api/routes.py, the table of which module serves each
route (read by the CLI's local mode, checked by tests/test_local_app.py) — ``make openapi``. Run it
when the API changes on purpose, and review the diff before committing it."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.openapi_reference import REFERENCE, openapi_document, render  # noqa: E402


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        REFERENCE.write_text(render(openapi_document(Path(tmp) / "home")), encoding="utf-8")
    print(f"wrote {REFERENCE}")
    from ragloom.api import local

    routes = Path(local.__file__).with_name("routes.py")
    routes.write_text(local.route_table_source(), encoding="utf-8")
    print(f"wrote {routes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
