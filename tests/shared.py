"""Files a test run makes once and every pytest-xdist worker reads.

A module-scoped fixture runs once per worker that runs one of the module's tests: with
``--dist worksteal`` a module's tests are spread over the workers, and an expensive fixture (the int8
OCR model, the fuzzing corpus's outcomes) was made once per worker. :func:`made_once` makes it once per
run, under a file lock in the directory the workers share.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

import pytest
from filelock import FileLock

T = TypeVar("T")


def run_directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory of this run that every worker shares (a worker's base temp is one level down)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def made_once(tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """The file ``name``, made by ``make(path)`` by the first worker to ask and read by the others."""
    folder = run_directory(tmp_path_factory) / "made-once"
    folder.mkdir(exist_ok=True)
    target = folder / name
    with FileLock(str(folder / f"{name}.lock")):
        if not target.exists():
            part = folder / f"{name}.part"
            make(part)
            part.rename(target)
    return target


def computed_once(tmp_path_factory: pytest.TempPathFactory, name: str, compute: Callable[[], T]) -> T:
    """The value of ``compute()`` (picklable), computed by the first worker to ask and read by the others."""
    path = made_once(tmp_path_factory, f"{name}.pickle",
                     lambda part: part.write_bytes(pickle.dumps(compute())))
    value: T = pickle.loads(path.read_bytes())
    return value


# The embedding cache every data directory of the run shares (set by tests/conftest.py): the samples and
# generated documents that servers and commands ingest are embedded once per run, not once per directory.
EMBEDDING_CACHE = "RAGLOOM_EMBEDDING_CACHE"


def child_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``environ`` (this process's) as a ragloom command of a test starts with: no ``RAGLOOM_*`` setting but
    the run's shared embedding cache, no COLUMNS (its output is a pipe)."""
    environ = os.environ if environ is None else environ
    return {k: v for k, v in environ.items()
            if (not k.startswith("RAGLOOM_") or k == EMBEDDING_CACHE) and k != "COLUMNS"}
