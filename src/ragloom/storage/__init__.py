"""Object store: original files and derived images, content-addressed and immutable."""

from ragloom.storage.base import ObjectStore
from ragloom.storage.local import LocalStore

__all__ = ["LocalStore", "ObjectStore"]
