"""Dependencies declared once as ``Annotated`` aliases."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request

from ragloom.errors import AuthenticationError
from ragloom.service import accounts
from ragloom.service.context import Context, Principal


def get_context(request: Request) -> Context:
    return request.app.state.ctx


ContextDep = Annotated[Context, Depends(get_context)]


def current_principal(request: Request, ctx: ContextDep) -> Principal:
    header = request.headers.get("authorization", "")
    scheme, _, key = header.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise AuthenticationError("missing API key: send 'Authorization: Bearer <key>'")
    with ctx.db.session() as s:
        return accounts.authenticate(s, key.strip())


PrincipalDep = Annotated[Principal, Depends(current_principal)]


def rate_limited(group: str) -> Any:
    """A route dependency (``dependencies=[rate_limited("retrieval")]``): the caller's API key may
    call the routes of ``group`` at most ``settings.rate_limit_per_minute`` times a minute, else
    429 with ``Retry-After`` (:class:`ragloom.api.ratelimit.RateLimiter`, in ``app.state``)."""

    def check(request: Request, principal: PrincipalDep) -> None:  # principal: authenticated first
        key = request.headers.get("authorization", "").partition(" ")[2].strip()
        request.app.state.rate_limiter.check(accounts.hash_key(key), group)

    return Depends(check)
