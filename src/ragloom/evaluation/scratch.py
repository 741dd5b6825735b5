"""The scratch data directory ``ragloom eval`` runs in: a fresh ``RAGLOOM_HOME`` made with
:mod:`tempfile`, with the caller's settings otherwise, deleted afterwards unless kept.

An evaluation uploads a corpus, runs its parsing tasks and deletes the knowledge base again. Done
in the user's own data directory, a running server's workers could take those tasks and
``ragloom gc`` would find what it left; in a directory of its own it touches nothing of theirs.
What lives outside the data directory is replaced by what lives inside it: the metadata database
(SQLite), the search store (tantivy) and the object store (local files); a note says so when the
settings named another. The embedding cache is the caller's (it holds vectors by text hash, nothing
that lists or finds a document), so a second run of the same corpus embeds nothing again.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ragloom.config import Settings
from ragloom.context import Context, Principal
from ragloom.service.accounts import identity

# The settings naming storage outside the data directory, and what the scratch directory uses instead.
LOCAL_STORAGE: dict[str, object] = {"database_url": None, "docstore": "tantivy", "docstore_url": None,
                                    "object_store": "local"}


@dataclass
class ScratchHome:
    home: Path
    ctx: Context
    principal: Principal
    notes: list[str] = field(default_factory=list)


def scratch_settings(settings: Settings, home: Path) -> tuple[Settings, list[str]]:
    """``settings`` with ``home`` as the data directory and local storage; notes on what was replaced."""
    replaced = [f"RAGLOOM_{name.upper()}" for name, local in LOCAL_STORAGE.items()
                if getattr(settings, name) != local]  # names only: a URL may hold a password
    notes = [f"scratch data directory: SQLite, tantivy and local files instead of the configured "
             f"{', '.join(replaced)}"] if replaced else []
    # the caller's embedding cache: text embedded by an earlier run (or by their own data) is not embedded again;
    # none is made for a caller without a data directory
    cache = settings.cache_dir.resolve() if settings.embedding_cache or settings.home.is_dir() else None
    return settings.model_copy(update={"home": home.resolve(), "embedding_cache": cache, **LOCAL_STORAGE}), notes


@contextmanager
def scratch_home(settings: Settings, *, keep: bool = False) -> Iterator[ScratchHome]:
    """A new data directory (its database migrated, its owner bootstrapped); removed on exit unless ``keep``."""
    home = Path(tempfile.mkdtemp(prefix="ragloom-eval-"))
    try:
        scratch, notes = scratch_settings(settings, home)
        ctx = Context(scratch)
        try:
            ctx.init_storage()
            with ctx.db.session() as s:
                principal = identity.bootstrap(s).principal
            yield ScratchHome(home, ctx, principal, notes)
        finally:
            ctx.close()
    finally:
        if not keep:
            shutil.rmtree(home, ignore_errors=True)
