"""The sign-in cookies' names and flags, in one place for the API (which sets them) and the pages.

A web sign-in sets two cookies: the session (HttpOnly) and its CSRF token (readable by the page's
scripts). Over HTTPS they are ``Secure`` and carry the ``__Host-`` prefix, which a browser accepts
only from this very host, over HTTPS, for path ``/`` and without a ``Domain`` — so a sibling
subdomain or a plain-HTTP page cannot plant a session of its own. Whether a request is over HTTPS is
``RAGLOOM_COOKIE_SECURE`` when set, else the request's scheme: HTTPS itself, or a proxy's
``X-Forwarded-Proto: https`` when uvicorn trusts the proxy (``FORWARDED_ALLOW_IPS``, default
127.0.0.1). Over HTTPS only the prefixed session cookie is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["CSRF", "HOST_PREFIX", "SESSION", "is_secure", "name", "session_token"]

SESSION = "ragloom_session"
"""The web session's cookie (HttpOnly, without the prefix over plain HTTP): a random token, stored only hashed."""
CSRF = "ragloom_csrf"
"""A readable cookie holding the session's CSRF token, for the web page's scripts."""
HOST_PREFIX = "__Host-"


def is_secure(scope: Mapping[str, Any], setting: bool | None) -> bool:
    """Whether the cookies of this request (an ASGI scope) are ``Secure`` and ``__Host-`` prefixed."""
    return setting if setting is not None else scope.get("scheme") in ("https", "wss")


def name(base: str, secure: bool) -> str:
    """The cookie's name: ``__Host-<base>`` when secure."""
    return HOST_PREFIX + base if secure else base


def session_token(cookies: Mapping[str, str], *, secure: bool) -> str | None:
    """The session cookie's token: the prefixed cookie, or over plain HTTP the unprefixed one."""
    token = cookies.get(HOST_PREFIX + SESSION)
    if token is None and not secure:
        token = cookies.get(SESSION)
    return token or None
