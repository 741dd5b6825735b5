"""The API of the CLI's local mode, built one module of :mod:`ragloom.api` at a time.

With no ``--url``, a command runs the very API ``ragloom serve`` runs, in-process
(:class:`ragloom.client.LocalClient`). Importing every API module and building its 180-odd routes
costs about a second, on every command, while a command calls one or two modules. :class:`LocalApp`
looks up which module serves a request in :data:`ragloom.api.routes.ROUTES` (each module's routes,
written by ``make openapi``; ``tests/test_local_app.py`` checks the table against the live app) and
builds that module's app the first time it is asked for. A request no single module claims goes to
the whole app, so its answer (a 404, a 405) is the server's.
"""

from __future__ import annotations

import importlib
import json
import re
import threading
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING

from fastapi.routing import APIRoute
from starlette.routing import compile_path
from starlette.types import Receive, Scope, Send

from ragloom.api.app import API_MODULES, API_PREFIX, create_app

if TYPE_CHECKING:
    from fastapi import FastAPI

    from ragloom.context import Context, Principal

WHOLE = "*"  # the app with every module, the status page and the web UI


@cache
def _patterns() -> tuple[tuple[str, frozenset[str], re.Pattern[str]], ...]:
    from ragloom.api.routes import ROUTES

    return tuple((module, frozenset(methods.split(",")), compile_path(API_PREFIX + path)[0])
                 for module, routes in ROUTES.items() for methods, path in routes)


def owner(method: str, path: str) -> str:
    """The module of API_MODULES that serves ``method path``, or WHOLE when none or several do."""
    found = {module for module, methods, pattern in _patterns() if method in methods and pattern.match(path)}
    return found.pop() if len(found) == 1 else WHOLE


def declared_routes() -> Iterator[tuple[str, str, str]]:
    """(module, methods, path under API_PREFIX) of every route, read from the modules themselves."""
    for module in API_MODULES:
        for route in importlib.import_module(f"ragloom.api.{module}").router.routes:
            if not isinstance(route, APIRoute):  # a router included in a module: read its routes here too
                raise TypeError(f"ragloom.api.{module}: {route!r} is not an APIRoute")
            yield module, ",".join(sorted(route.methods or ())), route.path


def route_table_source() -> str:
    """The text of ``ragloom/api/routes.py`` (``make openapi`` writes it)."""
    by_module: dict[str, list[tuple[str, str]]] = {}
    for module, methods, path in declared_routes():
        by_module.setdefault(module, []).append((methods, path))
    lines = ['"""Which module of ragloom.api serves each route under /api/v1 (read by ragloom.api.local).',
             "", "Written by ``make openapi`` (scripts/openapi.py) from the modules' routers; do not edit.",
             '"""', "", "ROUTES: dict[str, tuple[tuple[str, str], ...]] = {"]
    for module, routes in by_module.items():
        lines.append(f"    {json.dumps(module)}: (")
        lines += [f"        ({json.dumps(methods)}, {json.dumps(path)})," for methods, path in routes]
        lines.append("    ),")
    lines.append("}")
    return "\n".join(lines) + "\n"


class LocalApp:
    """An ASGI app that builds, per request, only the part of the API that serves it."""

    def __init__(self, ctx: Context, principal: Principal) -> None:
        self.ctx = ctx
        self.principal = principal
        self._apps: dict[str, FastAPI] = {}
        self._lock = threading.Lock()

    def app_for(self, key: str) -> FastAPI:
        with self._lock:
            if key not in self._apps:
                whole = key == WHOLE
                self._apps[key] = create_app(context=self.ctx, local_principal=self.principal,
                                             modules=API_MODULES if whole else (key,), web=whole)
            return self._apps[key]

    @property
    def built(self) -> list[str]:
        """The parts built so far (WHOLE or module names)."""
        return list(self._apps)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = owner(scope["method"], scope["path"]) if scope["type"] == "http" else WHOLE
        await self.app_for(key)(scope, receive, send)
