"""One registry mechanism for every extension point of ragloom.

A :class:`Registry` maps the name used in configuration, in requests or detected in a file (a
MIME type) to a callable: a factory of the point's objects (parsers, models, stores, fusions), or,
for chunk methods, the method itself. ``create(name, *args)`` calls it. The points and their
built-ins are listed in one table, :mod:`ragloom.plugins`; a registry takes its built-ins from
there by its entry-point group. Third-party packages add names through the same group
(``[project.entry-points."ragloom.chunkers"]``, ...). Built-ins and plugins alike are
``"module:attribute"`` references imported the first time their name is used; the group's
plugins are looked up the first time a name is not among the built-ins (or the names are
listed). An unknown name raises the registry's error type — ``ConfigError`` for a point chosen by
a server setting, ``InvalidRequestError`` for one chosen by a request — listing the known names.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, ParamSpec, TypeVar, cast

from ragloom.errors import ConfigError, InvalidRequestError, RagloomError
from ragloom.plugins import BUILTINS

P = ParamSpec("P")
T = TypeVar("T")
log = logging.getLogger(__name__)


class Registry(Generic[P, T]):
    """Callables ``(*P) -> T`` of ``what`` (e.g. "chunk method") keyed by name.

    ``group`` is the entry-point group of plugins (and the key of the built-ins in
    :data:`ragloom.plugins.BUILTINS`); ``error`` is raised for an unknown name.
    """

    def __init__(self, what: str, group: str, *, error: type[RagloomError] = InvalidRequestError) -> None:
        self.what = what
        self.group = group
        self.error = error
        self._factories: dict[str, Callable[P, T]] = {}
        self._unloaded: dict[str, EntryPoint] = {
            name: EntryPoint(name=name, value=value, group=group) for name, value in BUILTINS.get(group, {}).items()
        }
        self._plugins_loaded = False
        self._lock = threading.Lock()

    def fresh(self) -> Registry[P, T]:
        """A new registry of the same point: the built-ins and the plugins, none of what was registered by hand."""
        return Registry(self.what, self.group, error=self.error)

    @property
    def builtins(self) -> list[str]:
        """The names :data:`ragloom.plugins.BUILTINS` lists for this registry's group."""
        return sorted(BUILTINS.get(self.group, {}))

    def register(self, name: str, factory: Callable[P, T], *, replace: bool = False) -> None:
        """Register ``factory`` under ``name``; refuses to overwrite unless ``replace``."""
        with self._lock:
            if not replace and (name in self._factories or name in self._unloaded):
                raise ValueError(f"a {self.what} named {name!r} is already registered")
            self._unloaded.pop(name, None)
            self._factories[name] = factory

    @property
    def names(self) -> list[str]:
        """Every known name, plugins included, sorted."""
        self._load_plugins()
        with self._lock:
            return sorted({*self._factories, *self._unloaded})

    def __contains__(self, name: object) -> bool:
        if self._known(name):
            return True
        self._load_plugins()
        return self._known(name)

    def factory(self, name: str) -> Callable[P, T]:
        """The callable registered under ``name``; the registry's error, naming the known ones, if none is."""
        if name not in self:
            raise self.error(f"unknown {self.what} {name!r}; one of {', '.join(self.names)}")
        with self._lock:
            found = self._factories.get(name)
            if found is not None:
                return found
            ep = self._unloaded[name]
        loaded = self._load(ep)
        with self._lock:
            if self._unloaded.get(name) is ep:  # not replaced meanwhile
                del self._unloaded[name]
                self._factories[name] = loaded
            return self._factories[name]

    def create(self, name: str, /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Call the callable registered under ``name`` with ``args`` and ``kwargs``."""
        return self.factory(name)(*args, **kwargs)

    def _known(self, name: object) -> bool:
        with self._lock:
            return name in self._factories or name in self._unloaded

    def _load(self, ep: EntryPoint) -> Callable[P, T]:
        obj: Any = ep.load()
        if not callable(obj):
            raise ConfigError(f"{self.what} {ep.name!r} ({ep.value}, group {self.group}) is not callable")
        return cast(Callable[P, T], obj)

    def _load_plugins(self) -> None:
        with self._lock:
            if self._plugins_loaded:
                return
            self._plugins_loaded = True
            for ep in entry_points(group=self.group):
                if ep.name in self._factories or ep.name in self._unloaded:
                    log.warning("%s plugin %r (%s) ignored: the name is taken", self.what, ep.name, ep.value)
                    continue
                self._unloaded[ep.name] = ep
