"""The app factory: ``create_app(settings)`` — nothing happens at import."""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache
from typing import TYPE_CHECKING

from fastapi import APIRouter, FastAPI
from fastapi_offline import FastAPIOffline

from ragloom import __version__
from ragloom.api import errors
from ragloom.api.middleware import BodyLimitMiddleware, SecurityHeadersMiddleware, UploadAuthMiddleware
from ragloom.api.ratelimit import InflightBudget, LinkLimiter, RateLimiter
from ragloom.api.responses import COMMON_ERRORS
from ragloom.config import Settings
from ragloom.context import Context, Principal
from ragloom.service.documents import uploads

if TYPE_CHECKING:
    from ragloom.supervisor import WorkerPool

DOCS_ASSETS_URL = "/docs-assets"  # Swagger UI's and ReDoc's files, from the fastapi-offline package
API_PREFIX = "/api/v1"
# The modules of ragloom.api whose ``router`` serves under API_PREFIX, in the order they are included.
API_MODULES = ("datasets", "chunking", "documents", "sources", "builds", "graph", "retrieval", "chats", "shares",
               "keys", "accounts", "workspaces", "groups", "providers", "dify", "openai_compat", "system")


@cache
def api_router(modules: tuple[str, ...] = API_MODULES) -> APIRouter:
    """The routes under API_PREFIX of ``modules`` (each imported here, not before). Built once per
    process and shared by its apps, as the modules' own routers are: an app keeps its state in
    ``app.state``, never in a route; the tests build hundreds of apps, at 0.3 s each otherwise."""
    api = APIRouter(prefix=API_PREFIX, responses=COMMON_ERRORS)  # every route: the error body (api/responses.py)
    for name in modules:
        api.include_router(importlib.import_module(f"ragloom.api.{name}").router)
    return api


def create_app(settings: Settings | None = None, *, context: Context | None = None,
               pool: WorkerPool | None = None, local_principal: Principal | None = None,
               modules: tuple[str, ...] = API_MODULES, web: bool = True) -> FastAPI:
    """Build the API. The caller owns worker processes (``pool``, shown by /health); the app only
    serves requests. ``local_principal`` makes an in-process app for the CLI's local mode
    (:class:`ragloom.client.LocalClient`, never served on a port): requests without a key act as
    that principal and no rate limit applies. ``modules`` (of API_MODULES) and ``web`` (the status page
    and the web UI) narrow it to part of the API: :mod:`ragloom.api.local` builds the CLI's app a
    module at a time."""
    ctx = context or Context(settings or Settings())

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        ctx.init_storage()
        uploads.sweep_spool(uploads.spool_dir(ctx.settings))  # what a killed server was receiving
        yield
        if context is None:
            ctx.close()

    # /docs and /redoc load Swagger UI's and ReDoc's scripts and styles from the installed
    # fastapi-offline package (served under DOCS_ASSETS_URL), not from a CDN: they work offline.
    app = FastAPIOffline(title="ragloom", version=__version__, lifespan=lifespan, static_url=DOCS_ASSETS_URL,
                         description="Document knowledge base and question answering with cited answers.")
    app.state.ctx = ctx
    app.state.pool = pool
    app.state.local_principal = local_principal
    limits = ctx.settings
    app.state.rate_limiter = RateLimiter(0 if local_principal else limits.rate_limit_per_minute)
    app.state.share_limiter = LinkLimiter()  # each share link's questions per minute and per day
    app.state.public_rate_limiter = RateLimiter(0 if local_principal else limits.rate_limit_public_per_minute,
                                                setting="RAGLOOM_RATE_LIMIT_PUBLIC_PER_MINUTE", per="address")
    app.state.upload_budget = InflightBudget(total_mb=limits.max_upload_inflight_mb,
                                             share_mb=limits.max_upload_inflight_per_principal_mb)
    errors.install(app)
    app.add_middleware(UploadAuthMiddleware)  # inside the body limit: a too-large Content-Length is refused first
    app.add_middleware(BodyLimitMiddleware, settings=ctx.settings)
    app.add_middleware(SecurityHeadersMiddleware)  # outermost: the body limit's refusals get it too
    app.include_router(api_router(modules))
    if ctx.settings.ragflow_compat and modules == API_MODULES and local_principal is None:
        from ragloom.api import ragflow, ragflow_app

        # RAGFlow's HTTP API under /ragflow (its own /ragflow/openapi.json), on the same services and keys
        app.mount(ragflow.BASE, ragflow_app.create_compat_app(app))
    if web:
        from ragloom.web import pages, share, status

        app.include_router(status.router)
        app.include_router(share.router)  # a share link's chat page and embed script, for visitors
        pages.install(app)  # the web UI under /ui (not in /openapi.json)
    return app
