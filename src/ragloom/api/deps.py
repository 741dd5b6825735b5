"""Dependencies declared once as ``Annotated`` aliases."""

from __future__ import annotations

from typing import Annotated, Any, cast

from fastapi import Depends, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from ragloom.context import Context, Principal
from ragloom.errors import AuthenticationError, PermissionDeniedError
from ragloom.service import accounts
from ragloom.states import KeyScope


def get_context(request: Request) -> Context:
    return cast(Context, request.app.state.ctx)


ContextDep = Annotated[Context, Depends(get_context)]


# Declares the API key in /openapi.json (``components.securitySchemes.APIKey``, an HTTP Bearer
# scheme) on every route that depends on :func:`current_principal`, so Swagger's "Authorize" works.
# It never answers a request itself (``auto_error=False``): :func:`current_principal` reads the
# header and keeps the API's own 401 messages.
api_key_scheme = HTTPBearer(scheme_name="APIKey", auto_error=False,
                            description="An API key: send 'Authorization: Bearer <key>'.")
BearerDep = Annotated[HTTPAuthorizationCredentials | None, Security(api_key_scheme)]


def current_principal(request: Request, ctx: ContextDep, _bearer: BearerDep) -> Principal:
    header = request.headers.get("authorization", "")
    scheme, _, key = header.partition(" ")
    local = getattr(request.app.state, "local_principal", None)
    if local is not None and not header:  # the CLI's in-process app (never served on a port)
        return cast(Principal, local)
    if scheme.lower() != "bearer" or not key.strip():
        raise AuthenticationError("missing API key: send 'Authorization: Bearer <key>'")
    with ctx.db.session() as s:
        principal = accounts.authenticate(s, key.strip())
    if principal.scope == KeyScope.READ and writes(request):
        raise PermissionDeniedError(f"this API key is read-only: {request.method} {request.url.path} changes "
                                    "data; use a read-write key")
    return principal


READS: dict[str, Any] = {"x-ragloom-reads": True}
"""``openapi_extra`` of a POST route that changes nothing (a search, a question): read-only keys may call it."""


def writes(request: Request) -> bool:
    """The request may change data: any method but GET/HEAD/OPTIONS, unless its route is marked :data:`READS`."""
    if request.method in ("GET", "HEAD", "OPTIONS"):
        return False
    extra = getattr(request.scope.get("route"), "openapi_extra", None) or {}
    return not extra.get("x-ragloom-reads")


PrincipalDep = Annotated[Principal, Depends(current_principal)]


def rate_limited(group: str) -> Any:
    """A route dependency (``dependencies=[rate_limited("retrieval")]``): the caller's API key may
    call the routes of ``group`` at most ``settings.rate_limit_per_minute`` times a minute, else
    429 with ``Retry-After`` (:class:`ragloom.api.ratelimit.RateLimiter`, in ``app.state``)."""

    def check(request: Request, principal: PrincipalDep) -> None:  # principal: authenticated first
        key = request.headers.get("authorization", "").partition(" ")[2].strip()
        request.app.state.rate_limiter.check(accounts.hash_key(key), group)

    return Depends(check)
