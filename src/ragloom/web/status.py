"""The server's root ``/``, a minimal status page at ``/status`` and ``/status.json``.

``/`` sends a browser on to the web UI — its knowledge bases when signed in, else the sign-in page;
a request with an ``Authorization`` header (an API client, monitoring) gets the status page there.

Without an API key the status page shows only the version and where to look (``/api/v1/health``,
``/docs``): nothing about any tenant. With ``Authorization: Bearer <key>`` it shows the counts of
the caller's own tenant (knowledge bases, documents and tasks by status); an unknown key is a 401.
A browser signed in to the web UI as an owner or admin of its current workspace sees that
workspace's counts (the workspace pages link here); ``/status.json`` reads only the key.
"""

from __future__ import annotations

import html
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ragloom import __version__
from ragloom.context import Context, Principal
from ragloom.service.accounts import identity
from ragloom.service.system import workspace_counts
from ragloom.states import Role
from ragloom.web.messages import HTML_LANG, catalogue, language
from ragloom.web.pages import UI, viewer

router = APIRouter(include_in_schema=False)

HEALTH = "/api/v1/health"
STATUS = "/status"
SIGN_IN = f"{UI}/login"
MANAGERS = (str(Role.OWNER), str(Role.ADMIN))


def _caller(request: Request) -> Principal | None:
    """The principal of the request's Bearer key; None without one (AuthenticationError when unknown)."""
    scheme, _, key = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        return None
    ctx: Context = request.app.state.ctx
    with ctx.db.session() as s:
        return identity.authenticate(s, key.strip())


def status(request: Request) -> dict[str, Any]:
    out: dict[str, Any] = {"version": __version__, "health": HEALTH}
    principal = _caller(request)
    if principal is not None:
        with request.app.state.ctx.db.session() as s:
            out.update(scope="tenant", **workspace_counts(s, principal.tenant_id))
    return out


def _managed_workspace(request: Request) -> str | None:
    """The id of the signed-in browser's current workspace when it is an owner or admin there."""
    if "authorization" in request.headers:
        return None
    who = viewer(request)
    if who is None:
        return None
    current = next((w for w in who.workspaces if w["current"]), None)
    return current["id"] if current and current["role"] in MANAGERS else None


@router.get("/", response_class=HTMLResponse)
def root(request: Request) -> Response:
    if "authorization" in request.headers:
        return HTMLResponse(_status_html(request))
    return RedirectResponse(f"{UI}/kb" if viewer(request) is not None else SIGN_IN, status_code=303)


@router.get(STATUS, response_class=HTMLResponse)
def status_page(request: Request) -> Response:
    return HTMLResponse(_status_html(request))


def _status_html(request: Request) -> str:
    st = status(request)
    if "scope" not in st and (tenant_id := _managed_workspace(request)) is not None:
        with request.app.state.ctx.db.session() as s:
            st.update(scope="tenant", **workspace_counts(s, tenant_id))
    lang = language(request)
    messages = catalogue(lang)

    def t(key: str) -> str:
        return html.escape(messages.get(key, key))

    def table(title: str, counts: dict[str, int]) -> str:
        rows = "".join(f"<tr><td>{t(f'status.{k}') if f'status.{k}' in messages else html.escape(k)}</td>"
                       f"<td>{v}</td></tr>" for k, v in sorted(counts.items()))
        return f"<h2>{title}</h2><table>{rows or '<tr><td>' + t('status.none') + '</td></tr>'}</table>"

    if "scope" in st:
        body = (f"<p>{t('status.workspace').replace('{n}', str(st['knowledge_bases']))}</p>"
                f"{table(t('status.documents'), st['documents'])}{table(t('status.tasks'), st['tasks'])}")
    else:
        body = f"<p>{t('status.key_hint')}</p>"
    return f"""<!doctype html><html lang="{HTML_LANG[lang]}"><head><meta charset="utf-8">
<title>ragloom</title>
<meta http-equiv="refresh" content="3">
<style>body{{font-family:system-ui,sans-serif;margin:2rem;max-width:40rem}}
td{{padding:.2rem 1rem;border-bottom:1px solid #ddd}}</style></head><body>
<h1>ragloom {html.escape(st['version'])}</h1>
<p><a href="{UI}/kb">{t('status.web_ui')}</a></p>
<p>API: <a href="/docs">/docs</a> · {t('status.health')}: <a href="{HEALTH}">{HEALTH}</a></p>
{body}
</body></html>"""


@router.get("/status.json")
def status_json(request: Request) -> dict[str, Any]:
    return status(request)
