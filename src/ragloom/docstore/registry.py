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
    """``tantivy``: the embedded engine (tantivy + exact KNN, an HNSW index per knowledge base past
    ``RAGLOOM_ANN_MIN_ROWS`` rows) under the data directory's ``index``."""
    from ragloom.docstore._ann import AnnConfig
    from ragloom.docstore.tantivy_store import TantivyDocStore

    ann = AnnConfig(min_rows=settings.ann_min_rows, connectivity=settings.ann_connectivity,
                    expansion_add=settings.ann_expansion_add, expansion_search=settings.ann_expansion_search,
                    expansion_rows=settings.ann_expansion_rows)
    return TantivyDocStore(settings.index_dir, ann=ann)


def open_pgvector(settings: Settings) -> DocStore:
    """``pgvector``: PostgreSQL + pgvector at ``RAGLOOM_DOCSTORE_URL``, or at ``RAGLOOM_DATABASE_URL``
    when that is unset and the metadata DB is PostgreSQL (``ConfigError`` naming the setting otherwise)."""
    from ragloom.docstore.pgvector_store import PgVectorDocStore

    if settings.docstore_url or not _is_postgresql(settings.database_url):
        return PgVectorDocStore(settings.docstore_url or "", url_setting="RAGLOOM_DOCSTORE_URL")
    return PgVectorDocStore(settings.database_url or "", url_setting="RAGLOOM_DATABASE_URL")


def _is_postgresql(url: str | None) -> bool:
    return bool(url) and str(url).split(":", 1)[0].split("+", 1)[0].lower() in ("postgresql", "postgres")
