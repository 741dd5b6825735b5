"""A minimal status page at ``/`` (and ``/status.json``); a browser signed in to the web UI is sent
on to it (``/ui``), anyone else sees the status and a link to sign in.

Without an API key it shows only the version and where to look (``/api/v1/health``, ``/docs``):
nothing about any tenant. With ``Authorization: Bearer <key>`` it shows the counts of the
caller's own tenant (knowledge bases, documents and tasks by status); an unknown key is a 401.
"""

from __future__ import annotations

import html
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ragloom import __version__
from ragloom.context import Context, Principal
from ragloom.service import accounts
from ragloom.service.system import workspace_counts
from ragloom.web.pages import UI, viewer

router = APIRouter(include_in_schema=False)

HEALTH = "/api/v1/health"


def _caller(request: Request) -> Principal | None:
    """The principal of the request's Bearer key; None without one (AuthenticationError when unknown)."""
    scheme, _, key = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        return None
    ctx: Context = request.app.state.ctx
    with ctx.db.session() as s:
        return accounts.authenticate(s, key.strip())


def status(request: Request) -> dict[str, Any]:
    out: dict[str, Any] = {"version": __version__, "health": HEALTH}
    principal = _caller(request)
    if principal is not None:
        out.update(scope="tenant", **workspace_counts(request.app.state.ctx, principal.tenant_id))
    return out


@router.get("/", response_class=HTMLResponse)
def status_page(request: Request) -> Response:
    if "authorization" not in request.headers and viewer(request) is not None:
        return RedirectResponse(f"{UI}/kb", status_code=303)
    return HTMLResponse(_status_html(request))


def _status_html(request: Request) -> str:
    st = status(request)

    def table(title: str, counts: dict[str, int]) -> str:
        rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{v}</td></tr>" for k, v in sorted(counts.items()))
        return f"<h2>{title}</h2><table>{rows or '<tr><td>none</td></tr>'}</table>"

    if "scope" in st:
        body = (f"<p>Your workspace: {st['knowledge_bases']} knowledge bases</p>"
                f"{table('Documents by status', st['documents'])}{table('Tasks by status', st['tasks'])}")
    else:
        body = ("<p>Send <code>Authorization: Bearer &lt;key&gt;</code> to <code>/status.json</code> "
                "for your workspace's document and task counts.</p>")
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>ragloom</title>
<meta http-equiv="refresh" content="3">
<style>body{{font-family:system-ui,sans-serif;margin:2rem;max-width:40rem}}
td{{padding:.2rem 1rem;border-bottom:1px solid #ddd}}</style></head><body>
<h1>ragloom {html.escape(st['version'])}</h1>
<p><a href="{UI}/login">Sign in to the web UI</a></p>
<p>API: <a href="/docs">/docs</a> · health: <a href="{HEALTH}">{HEALTH}</a></p>
{body}
</body></html>"""


@router.get("/status.json")
def status_json(request: Request) -> dict[str, Any]:
    return status(request)
