"""Dependencies declared once as ``Annotated`` aliases."""

from __future__ import annotations

import hmac
from typing import Annotated, Any, cast

from fastapi import Depends, Request, Security
from fastapi.security import APIKeyCookie, HTTPAuthorizationCredentials, HTTPBearer

from ragloom.api.ratelimit import RateLimiter, address_key, charge, charged
from ragloom.context import Caller, Context, Principal
from ragloom.errors import AuthenticationError, PermissionDeniedError
from ragloom.service.accounts import identity, signin
from ragloom.states import KeyScope
from ragloom.web import cookies


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


SESSION_COOKIE = cookies.SESSION
"""The web session's cookie (HttpOnly): a random token, stored only hashed (``service.signin``); named
``__Host-ragloom_session`` over HTTPS (:mod:`ragloom.web.cookies`)."""
CSRF_COOKIE = cookies.CSRF
"""A readable cookie holding the session's CSRF token, for the web page's scripts (``__Host-`` prefixed over HTTPS)."""
CSRF_HEADER = "X-CSRF-Token"
"""The header a signed-in browser's state-changing request must carry, equal to its CSRF token."""

session_scheme = APIKeyCookie(name=SESSION_COOKIE, scheme_name="Session", auto_error=False,
                              description="A web sign-in (POST /api/v1/auth/login); state-changing requests "
                              f"also send the '{CSRF_HEADER}' header.")
SessionDep = Annotated[str | None, Security(session_scheme)]


MISSING = "missing API key: send 'Authorization: Bearer <key>', or sign in"


def authenticate(ctx: Context, authorization: str, session_token: str | None) -> Caller:
    """Who a request comes from: its API key (``Authorization: Bearer``) or else its session cookie."""
    scheme, _, key = authorization.partition(" ")
    if authorization:
        if scheme.lower() != "bearer" or not key.strip():
            raise AuthenticationError(MISSING)
        with ctx.db.session() as s:
            p = identity.authenticate(s, key.strip())
        return Caller(p.user_id, p.tenant_id, p.role, p.scope)
    if session_token:
        with ctx.db.session() as s:
            return signin.session_caller(s, ctx.settings, session_token)
    raise AuthenticationError(MISSING)


def current_caller(request: Request, ctx: ContextDep, _bearer: BearerDep, _session: SessionDep) -> Caller:
    local = getattr(request.app.state, "local_principal", None)
    header = request.headers.get("authorization", "")
    if local is not None and not header:  # the CLI's in-process app (never served on a port)
        p = cast(Principal, local)
        return Caller(p.user_id, p.tenant_id, p.role, p.scope)
    secure = cookies.is_secure(request.scope, ctx.settings.cookie_secure)
    caller = authenticate(ctx, header, cookies.session_token(request.cookies, secure=secure))
    if caller.scope == KeyScope.READ and writes(request):
        raise PermissionDeniedError(f"this API key is read-only: {request.method} {request.url.path} changes "
                                    "data; use a read-write key")
    if caller.csrf_token is not None and request.method not in SAFE_METHODS:
        sent = request.headers.get(CSRF_HEADER, "")
        if not hmac.compare_digest(sent.encode(), caller.csrf_token.encode()):
            raise PermissionDeniedError(f"CSRF check failed: a signed-in request that changes data must send the "
                                        f"'{CSRF_HEADER}' header given at sign-in")
    return caller


CallerDep = Annotated[Caller, Depends(current_caller)]


def current_principal(caller: CallerDep) -> Principal:
    return caller.principal()


SAFE_METHODS = ("GET", "HEAD", "OPTIONS")

PUBLIC: dict[str, Any] = {"x-ragloom-public": True}
"""``openapi_extra`` of a route anyone may call without signing in (sign-up, sign-in); such a route is
also rate limited per client address (:func:`limited_per_address`, checked by a test for every one)."""

READS: dict[str, Any] = {"x-ragloom-reads": True}
"""``openapi_extra`` of a POST route that changes nothing (a search, a question): read-only keys may call it."""


def writes(request: Request) -> bool:
    """The request may change data: any method but GET/HEAD/OPTIONS, unless its route is marked :data:`READS`."""
    if request.method in SAFE_METHODS:
        return False
    extra = getattr(request.scope.get("route"), "openapi_extra", None) or {}
    return not extra.get("x-ragloom-reads")


PrincipalDep = Annotated[Principal, Depends(current_principal)]


def rate_bucket(caller: Caller, authorization: str) -> tuple[str, str]:
    """The rate-limit bucket of a caller and what it is per: its API key (by the key's hash), or for
    a web session the user in the workspace they act in (:mod:`ragloom.api.ratelimit`)."""
    if caller.session_id is None:
        return "key:" + identity.hash_key(authorization.partition(" ")[2].strip()), "API key"
    return f"user:{caller.user_id}:{caller.tenant_id}", "user in a workspace"


def rate_limited(group: str) -> Any:
    """A route dependency (``dependencies=[rate_limited("retrieval")]``): each caller (an API key, or a
    signed-in user in a workspace, :func:`rate_bucket`) may call the routes of ``group`` at most
    ``settings.rate_limit_per_minute`` times a minute, else 429 with ``Retry-After``
    (:class:`ragloom.api.ratelimit.RateLimiter`, in ``app.state``). The token is kept in the request
    (:func:`ragloom.api.ratelimit.charge`): a call then refused as malformed (422) gets it back, and a
    token the upload middleware took before the body was read is not taken twice."""

    def check(request: Request, caller: CallerDep, _principal: PrincipalDep) -> None:
        if charged(request.scope, group):
            return
        limiter: RateLimiter = request.app.state.rate_limiter
        key, per = rate_bucket(caller, request.headers.get("authorization", ""))
        charge(request.scope, limiter, key, group, per=per)

    return Depends(check)


def limited_per_address(group: str) -> Any:
    """A dependency of a :data:`PUBLIC` route (``dependencies=[limited_per_address("login")]``): each
    client address may call it at most ``settings.rate_limit_public_per_minute`` times a minute, else
    429 with ``Retry-After``; a call refused as malformed (422) gets its token back. Behind a reverse
    proxy the address is the one the proxy forwards (uvicorn trusts ``X-Forwarded-For`` from
    ``FORWARDED_ALLOW_IPS``, 127.0.0.1 by default)."""

    def check(request: Request) -> None:
        limiter: RateLimiter = request.app.state.public_rate_limiter
        charge(request.scope, limiter, address_key(request.client.host if request.client else ""), group,
               per="address")

    return Depends(check)
