"""The sub-application that serves RAGFlow's HTTP API under ``/ragflow`` (:mod:`ragloom.api.ragflow` and its
companions for chats, metadata and builds), assembled here so that none of them imports another's router."""

from __future__ import annotations

from fastapi import FastAPI

from ragloom import __version__
from ragloom.api import dify, ragflow_builds, ragflow_chats, ragflow_metadata
from ragloom.api.ragflow import API, BASE, install_errors, router, upload_router
from ragloom.schemas.ragflow import RFError


def create_compat_app(parent: FastAPI) -> FastAPI:
    """The sub-application mounted at :data:`BASE`: it shares the parent's state (context, rate
    limiters, upload budget), so keys, limits and isolation are the same."""
    app = FastAPI(title="ragloom: RAGFlow-compatible API", version=__version__, docs_url=None, redoc_url=None,
                  openapi_url="/openapi.json",
                  description="RAGFlow's HTTP API (datasets, documents, chunks, retrieval, chat assistants, sessions "
                              "and completions) served by ragloom under "
                              f"{BASE}: point a RAGFlow client at http://HOST:PORT{BASE} with a ragloom API key.",
                  responses={401: {"model": RFError, "description": "no or unknown API key (code 401)"},
                             429: {"model": RFError, "description": "rate limit reached (code 429)"}})
    app.state = parent.state
    install_errors(app)
    app.include_router(upload_router)
    app.include_router(dify.router, prefix=API)  # Dify's external knowledge: endpoint .../ragflow/api/v1/dify
    app.include_router(ragflow_chats.router)
    app.include_router(ragflow_metadata.router)
    app.include_router(ragflow_builds.router)
    app.include_router(router)  # last: its catch-all answers what no route above does
    return app
