"""A share link's pages for visitors without an account (issue 33): the chat page ``/share/{token}`` and
``/share/{token}/embed.js``, the script a web site of an allowed origin includes to get a chat bubble.

The chat page may be framed by the link's allowed origins only (its ``frame-ancestors``); like the
UI's pages it loads nothing from another host. ``embed.js`` first asks the visitor API for the link's
title from the embedding page: a site the link does not allow is refused there (no CORS headers for
it), and no bubble appears."""

from __future__ import annotations

import json
import re

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from ragloom import __version__
from ragloom.context import Context
from ragloom.errors import NotFoundError, RagloomError
from ragloom.schemas.shares import SHARE_TOKEN
from ragloom.service.accounts import workspace_models
from ragloom.service.chat import shares
from ragloom.web.messages import HTML_LANG, catalogue, language
from ragloom.web.pages import STATIC, _env

router = APIRouter(prefix="/share", include_in_schema=False)

_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
           "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors {ancestors}")


def _valid(token: str) -> bool:
    return re.fullmatch(SHARE_TOKEN, token) is not None


@router.get("/{token}")
def share_page(request: Request, token: str) -> Response:
    """The link's chat page, or a page saying why it is not available (404 / 403)."""
    ctx: Context = request.app.state.ctx
    lang = language(request)
    messages = catalogue(lang)
    values: dict[str, object] = {"available": False, "title": messages["share.unavailable"], "welcome": "",
                                 "kind": "chat", "show_pages": False, "extractive": False, "reason": "", "token": token}
    origins: list[str] = []
    status = 200
    try:
        if not _valid(token):
            raise NotFoundError("no such share link")
        with ctx.db.session() as s:
            link = shares.resolve(s, token)
            shares.visitor_principal(s, link)
            shown = shares.info(s, link)
            origins = list(link.allowed_origins)
            tenant = link.tenant_id
        values.update(available=True, kind=shown["kind"], title=shown["title"], welcome=shown["welcome"],
                      show_pages=shown["show_pages"],
                      extractive=workspace_models.chat_model(ctx, tenant) is None)
    except RagloomError as exc:
        status = 404 if isinstance(exc, NotFoundError) else 403
        values["reason"] = exc.message
    page = _env.get_template("share.html").render(
        t=lambda key: messages.get(key, key), lang=lang, html_lang=HTML_LANG[lang], static=STATIC, version=__version__,
        messages_json=json.dumps(messages, ensure_ascii=False).replace("</", "<\\/"), **values)
    ancestors = " ".join(["'self'", *origins])
    return HTMLResponse(page, status_code=status, headers={
        "Content-Security-Policy": _POLICY.format(ancestors=ancestors), "Cache-Control": "no-store",
        "Referrer-Policy": "no-referrer"})


_EMBED = """/* ragloom: a chat bubble for share link {token_json}. Include it with
   <script src="{server}/share/{token}/embed.js" defer></script> on a page of an origin the link allows. */
(() => {{
  "use strict";
  const server = {server_json}, token = {token_json};
  if (document.getElementById("ragloom-chat-" + token)) return;
  fetch(server + "/api/v1/share/" + token, {{ credentials: "omit" }})
    .then((res) => {{ if (!res.ok) throw new Error("HTTP " + res.status); return res.json(); }})
    .then((info) => {{
      const box = document.createElement("div");
      box.id = "ragloom-chat-" + token;
      Object.assign(box.style, {{ position: "fixed", right: "20px", bottom: "20px", zIndex: "2147483000",
        display: "flex", flexDirection: "column", alignItems: "flex-end", gap: "8px" }});
      const frame = document.createElement("iframe");
      frame.title = info.title;
      frame.setAttribute("data-ragloom", "chat");
      Object.assign(frame.style, {{ width: "380px", height: "560px", maxWidth: "calc(100vw - 40px)",
        maxHeight: "calc(100vh - 100px)", border: "1px solid #ccd", borderRadius: "10px", background: "#fff",
        boxShadow: "0 4px 24px rgba(0,0,0,.18)", display: "none" }});
      const bubble = document.createElement("button");
      bubble.type = "button";
      bubble.textContent = info.title;
      bubble.setAttribute("aria-expanded", "false");
      bubble.setAttribute("data-ragloom", "bubble");
      Object.assign(bubble.style, {{ padding: "12px 18px", borderRadius: "24px", border: "0", cursor: "pointer",
        background: "#1f5f8b", color: "#fff", font: "600 15px system-ui, sans-serif",
        boxShadow: "0 2px 12px rgba(0,0,0,.2)" }});
      bubble.addEventListener("click", () => {{
        const open = frame.style.display === "none";
        if (open && !frame.src) frame.src = server + "/share/" + token;
        frame.style.display = open ? "block" : "none";
        bubble.setAttribute("aria-expanded", String(open));
      }});
      box.append(frame, bubble);
      document.body.append(box);
    }})
    .catch((err) => console.warn("ragloom: this page may not show share link " + token + " (" + err.message +
      "): its owner allows other sites only"));
}})();
"""


@router.get("/{token}/embed.js")
def embed_script(request: Request, token: str) -> Response:
    """The script that adds the link's chat bubble to a page (whether the page's site may use the link is
    checked when the script asks for the link's title)."""
    if not _valid(token):
        return Response("/* no such share link */", status_code=404, media_type="text/javascript")
    server = str(request.base_url).rstrip("/")
    script = _EMBED.format(server=server, token=token, server_json=json.dumps(server), token_json=json.dumps(token))
    return Response(script, media_type="text/javascript; charset=utf-8",
                    headers={"Cache-Control": "no-cache", "Cross-Origin-Resource-Policy": "cross-origin"})
