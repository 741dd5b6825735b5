"""One registry mechanism for ragloom's extension points.

A :class:`Registry` maps the name used in configuration and requests to a factory. Built-ins
register in the module that defines the extension point; third-party packages add theirs through
the entry-point group the registry names (``[project.entry-points."ragloom.fusions"]``, ...),
loaded the first time a name is looked up. An unknown name is an ``InvalidRequestError`` that
lists the known ones.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from ragloom.errors import InvalidRequestError

T = TypeVar("T")
log = logging.getLogger(__name__)


class Registry(Generic[T]):
    """Factories of ``what`` (e.g. "fusion") keyed by name; ``group`` is the entry-point group of plugins."""

    def __init__(self, what: str, group: str) -> None:
        self.what = what
        self.group = group
        self._factories: dict[str, Callable[[], T]] = {}
        self._plugins_loaded = False

    def register(self, name: str, factory: Callable[[], T], *, replace: bool = False) -> None:
        """Register ``factory`` under ``name``; refuses to overwrite unless ``replace``."""
        if name in self._factories and not replace:
            raise ValueError(f"a {self.what} named {name!r} is already registered")
        self._factories[name] = factory

    @property
    def names(self) -> list[str]:
        self._load_plugins()
        return sorted(self._factories)

    def __contains__(self, name: object) -> bool:
        self._load_plugins()
        return name in self._factories

    def get(self, name: str) -> T:
        """A new instance of the ``name`` factory; ``InvalidRequestError`` naming the known ones."""
        self._load_plugins()
        factory = self._factories.get(name)
        if factory is None:
            raise InvalidRequestError(f"unknown {self.what} {name!r}; one of {', '.join(self.names)}")
        return factory()

    def _load_plugins(self) -> None:
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        for ep in entry_points(group=self.group):
            if ep.name in self._factories:
                log.warning("%s plugin %r ignored: the name is taken", self.what, ep.name)
                continue
            self._factories[ep.name] = ep.load()
