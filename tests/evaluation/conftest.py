"""One embedding thread: the local model slows down badly when its threads compete for 2 busy cores."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragloom.config import Settings


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home", workers=0, worker_poll_seconds=0.05, embedding_threads=1,
                    _env_file=None)
