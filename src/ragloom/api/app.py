"""The app factory: ``create_app(settings)`` — nothing happens at import."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from fastapi import APIRouter, FastAPI

from ragloom import __version__
from ragloom.api import datasets, documents, errors, retrieval, system
from ragloom.api.middleware import BodyLimitMiddleware, SecurityHeadersMiddleware, UploadAuthMiddleware
from ragloom.api.ratelimit import RateLimiter
from ragloom.config import Settings
from ragloom.service.context import Context
from ragloom.web import status

if TYPE_CHECKING:
    from ragloom.supervisor import WorkerPool


def create_app(settings: Settings | None = None, *, context: Context | None = None,
               pool: WorkerPool | None = None) -> FastAPI:
    """Build the API. The caller owns worker processes (``pool``, shown by /health); the app only
    serves requests."""
    ctx = context or Context(settings or Settings())

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        ctx.init_storage()
        yield
        if context is None:
            ctx.close()

    app = FastAPI(title="ragloom", version=__version__, lifespan=lifespan,
                  description="Document knowledge base and question answering with cited answers.")
    app.state.ctx = ctx
    app.state.pool = pool
    app.state.rate_limiter = RateLimiter(ctx.settings.rate_limit_per_minute)
    errors.install(app)
    app.add_middleware(UploadAuthMiddleware)  # inside the body limit: a too-large Content-Length is refused first
    app.add_middleware(BodyLimitMiddleware, settings=ctx.settings)
    app.add_middleware(SecurityHeadersMiddleware)  # outermost: the body limit's refusals get it too
    api = APIRouter(prefix="/api/v1")
    for module in (datasets, documents, retrieval, system):
        api.include_router(module.router)
    app.include_router(api)
    app.include_router(status.router)
    return app
