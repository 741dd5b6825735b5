"""Sources' tests: a data directory whose server allows folder sources under ``<tmp>/shared``
(``RAGLOOM_SOURCE_ROOTS``) and web sources on loopback (``RAGLOOM_OUTBOUND_ALLOW``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragloom.config import Settings


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    """The folder the server lets folder sources read."""
    folder = tmp_path / "shared"
    folder.mkdir()
    return folder


@pytest.fixture
def settings(tmp_path: Path, shared: Path) -> Settings:
    return Settings(home=tmp_path / "home", workers=0, worker_poll_seconds=0.05, source_roots=[shared],
                    outbound_allow=["127.0.0.1/32"], _env_file=None)
