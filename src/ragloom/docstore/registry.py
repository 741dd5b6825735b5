"""Search store engines by configured name (``RAGLOOM_DOCSTORE``).

:data:`docstores` is a :class:`~ragloom.registry.Registry` of factories ``(Settings) -> DocStore``:
the built-ins are listed in :mod:`ragloom.plugins`, extensions come through the entry-point group
``ragloom.docstores``. An unknown engine is a ``ConfigError`` naming the known ones.
"""

from __future__ import annotations

from ragloom.config import Settings
from ragloom.docstore.base import DocStore
from ragloom.errors import ConfigError
from ragloom.registry import Registry

docstores: Registry[[Settings], DocStore] = Registry("docstore engine", "ragloom.docstores", error=ConfigError)


def open_docstore(settings: Settings) -> DocStore:
    """The search store engine ``settings.docstore`` names, opened on ``settings``."""
    return docstores.create(settings.docstore, settings)


def open_tantivy(settings: Settings) -> DocStore:
    """``tantivy``: the embedded engine (tantivy + exact KNN) under the data directory's ``index``."""
    from ragloom.docstore.tantivy_store import TantivyDocStore

    return TantivyDocStore(settings.index_dir)
