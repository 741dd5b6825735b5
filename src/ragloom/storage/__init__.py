"""Object store: original files and derived images, immutable, under per-tenant content keys."""

from ragloom.storage.base import ObjectStore, StoredObject, SweepResult
from ragloom.storage.local import LocalStore
from ragloom.storage.registry import object_stores, open_object_store

__all__ = ["LocalStore", "ObjectStore", "StoredObject", "SweepResult", "object_stores", "open_object_store"]
