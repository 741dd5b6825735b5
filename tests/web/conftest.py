"""The ``world`` fixture of the browser tests: one live server and one chromium per test module."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from tests.web.browser import open_world  # imported here: it skips when playwright is not installed

    with open_world(tmp_path_factory.mktemp("ui")) as w:
        yield w
