"""Object store: original files and derived images, immutable, under per-tenant content keys."""

from ragloom.storage.base import ObjectStore, StoredObject, SweepResult
from ragloom.storage.local import LocalStore

__all__ = ["LocalStore", "ObjectStore", "StoredObject", "SweepResult"]
