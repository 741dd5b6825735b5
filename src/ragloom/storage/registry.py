"""Object store engines by configured name (``RAGLOOM_OBJECT_STORE``).

:data:`object_stores` is a :class:`~ragloom.registry.Registry` of factories
``(Settings) -> ObjectStore``: the built-ins are listed in :mod:`ragloom.plugins`, extensions come
through the entry-point group ``ragloom.object_stores``. An unknown engine is a ``ConfigError``
naming the known ones.
"""

from __future__ import annotations

from ragloom.config import Settings
from ragloom.errors import ConfigError
from ragloom.registry import Registry
from ragloom.storage.base import ObjectStore
from ragloom.storage.local import LocalStore

object_stores: Registry[[Settings], ObjectStore] = Registry("object store", "ragloom.object_stores", error=ConfigError)


def open_object_store(settings: Settings) -> ObjectStore:
    """The object store ``settings.object_store`` names, opened on ``settings``."""
    return object_stores.create(settings.object_store, settings)


def open_local(settings: Settings) -> ObjectStore:
    """``local``: files under the data directory's ``files`` folder (:class:`LocalStore`). The other
    built-in, ``s3`` (:func:`ragloom.storage.s3.open_s3`), is imported only when it is chosen."""
    return LocalStore(settings.files_dir)
