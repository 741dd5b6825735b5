"""Search store engines by configured name."""

from __future__ import annotations

from collections.abc import Callable

from ragloom.config import Settings
from ragloom.docstore.base import DocStore
from ragloom.errors import ConfigError


def _tantivy(settings: Settings) -> DocStore:
    from ragloom.docstore.tantivy_store import TantivyDocStore

    return TantivyDocStore(settings.index_dir)


ENGINES: dict[str, Callable[[Settings], DocStore]] = {"tantivy": _tantivy}


def open_docstore(settings: Settings) -> DocStore:
    try:
        factory = ENGINES[settings.docstore]
    except KeyError:
        raise ConfigError(f"unknown docstore engine {settings.docstore!r}; known: {sorted(ENGINES)}") from None
    return factory(settings)
