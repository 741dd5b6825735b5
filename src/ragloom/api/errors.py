"""The one place where errors become HTTP responses."""

from __future__ import annotations

import logging
import math

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ragloom.api.ratelimit import refund_charge
from ragloom.api.responses import error_body
from ragloom.errors import RagloomError, RateLimitedError, http_status

log = logging.getLogger(__name__)


def install(app: FastAPI) -> None:
    @app.exception_handler(RagloomError)
    async def _ragloom(_: Request, exc: RagloomError) -> JSONResponse:
        status = http_status(exc)
        if status >= 500:
            log.error("%s: %s", type(exc).__name__, exc.message)
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
        if isinstance(exc, RateLimitedError):
            headers = {"Retry-After": str(max(1, math.ceil(exc.retry_after)))}
        return JSONResponse(error_body(type(exc).__name__, exc.message), status_code=status, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        refund_charge(request.scope)  # refused before any work: the rate-limit token goes back
        parts = []
        for err in exc.errors():
            loc = ".".join(str(x) for x in err.get("loc", ()) if x != "body")
            parts.append(f"{loc}: {err.get('msg')}" if loc else str(err.get("msg")))
        return JSONResponse(error_body("InvalidRequestError", "; ".join(parts) or "invalid request"), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse(error_body("HTTPError", str(exc.detail)), status_code=exc.status_code)
