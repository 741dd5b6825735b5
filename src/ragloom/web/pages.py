"""The web UI's pages under ``/ui``: server-rendered shells (Jinja2) whose small scripts call the
public REST API with the session cookie and the CSRF header — the UI can do nothing an API client
cannot. No Node toolchain: the templates and static files are served from this package.

A page needs a web session (the ``ragloom_session`` cookie); without one it redirects to the
sign-in page, which returns to the page afterwards. Page routes stay out of ``/openapi.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape

from ragloom import __version__
from ragloom.context import Caller, Context
from ragloom.errors import AuthenticationError
from ragloom.service import knowledgebases
from ragloom.service.accounts import passwords, signin, workspaces
from ragloom.web import cookies
from ragloom.web.messages import HTML_LANG, LANGUAGE_COOKIE, LANGUAGE_NAMES, LANGUAGES, catalogue, language

HERE = Path(__file__).parent
UI = "/ui"
STATIC = f"{UI}/static"

# Pages load only this server's scripts, styles and images: no CDN, no web fonts, no inline script.
PAGE_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
               "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")

router = APIRouter(prefix=UI, include_in_schema=False)

_env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True),
                   trim_blocks=True, lstrip_blocks=True)


@dataclass(frozen=True)
class Viewer:
    """The signed-in user as the top bar shows them."""

    caller: Caller
    email: str
    name: str
    is_admin: bool
    workspaces: list[dict[str, Any]]


def install(app: FastAPI) -> None:
    """Mount the pages and their static files on ``app``."""
    app.include_router(router)
    app.mount(STATIC, StaticFiles(directory=HERE / "static"), name="ui-static")


def viewer(request: Request) -> Viewer | None:
    """Who the request's session cookie signs in; None without a valid one."""
    ctx: Context = request.app.state.ctx
    token = cookies.session_token(request.cookies, secure=cookies.is_secure(request.scope, ctx.settings.cookie_secure))
    if not token:
        return None
    try:
        with ctx.db.session() as s:
            caller = signin.session_caller(s, ctx.settings, token)
            user = signin.user(s, caller.user_id)
            spaces = [{"id": t.id, "name": t.name, "role": str(r), "current": t.id == caller.tenant_id}
                      for t, r in workspaces.of_user(s, caller.user_id)]
            return Viewer(caller, user.email, user.name, bool(user.is_superuser), spaces)
    except AuthenticationError:
        return None


def safe_next(target: str | None) -> str:
    """Where to go after signing in: a page of this UI only (never another site)."""
    if target and target.startswith(UI + "/") and not target.startswith("//") and "\\" not in target:
        return target
    return f"{UI}/kb"


def render(request: Request, template: str, *, who: Viewer | None, title: str, section: str = "",
           **values: Any) -> HTMLResponse:
    lang = language(request)
    messages = catalogue(lang)
    page = _env.get_template(template).render(
        request=request, t=lambda key: messages.get(key, key), lang=lang, who=who, title=messages.get(title, title),
        section=section, static=STATIC, ui=UI, version=__version__, lang_cookie=LANGUAGE_COOKIE,
        html_lang=HTML_LANG[lang], html_langs=HTML_LANG, ui_languages=[(c, LANGUAGE_NAMES[c]) for c in LANGUAGES],
        messages_json=json.dumps(messages, ensure_ascii=False).replace("</", "<\\/"), **values)
    return HTMLResponse(page, headers={"Content-Security-Policy": PAGE_POLICY, "Cache-Control": "no-store",
                                       "Referrer-Policy": "same-origin"})


def _to_sign_in(request: Request) -> RedirectResponse:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"{UI}/login?next={quote(target, safe='/')}", status_code=303)


def _page(request: Request, template: str, title: str, section: str, **values: Any) -> Response:
    who = viewer(request)
    if who is None:
        return _to_sign_in(request)
    return render(request, template, who=who, title=title, section=section, **values)


@router.get("")
@router.get("/")
def home(request: Request) -> Response:
    return RedirectResponse(f"{UI}/kb" if viewer(request) else f"{UI}/login", status_code=303)


@router.get("/login")
def login_page(request: Request, next: str | None = None) -> Response:
    if viewer(request) is not None:
        return RedirectResponse(safe_next(next), status_code=303)
    return render(request, "login.html", who=None, title="signin.title", mode="login", next=safe_next(next))


@router.get("/signup")
def signup_page(request: Request, next: str | None = None, invitation: str = "") -> Response:
    return render(request, "login.html", who=viewer(request), title="signup.title", mode="signup",
                  next=safe_next(next), invitation=invitation[:200])


@router.get("/kb")
def kb_list_page(request: Request) -> Response:
    return _page(request, "kb_list.html", "kb.title", "kb", chunk_methods=knowledgebases.chunk_methods(),
                 languages=knowledgebases.LANGUAGES)


@router.get("/kb/{kb_id}")
def documents_page(request: Request, kb_id: str) -> Response:
    return _page(request, "documents.html", "docs.title", "kb", kb_id=kb_id)


@router.get("/kb/{kb_id}/documents/{doc_id}")
def chunks_page(request: Request, kb_id: str, doc_id: str) -> Response:
    """A document's page images with its chunks' regions drawn, and its chunks to search and edit."""
    return _page(request, "chunks.html", "chunks.title", "kb", kb_id=kb_id, doc_id=doc_id)


@router.get("/kb/{kb_id}/settings")
def kb_settings_page(request: Request, kb_id: str) -> Response:
    return _page(request, "kb_settings.html", "settings.title", "kb", kb_id=kb_id,
                 chunk_methods=knowledgebases.chunk_methods())


@router.get("/kb/{kb_id}/sources")
def sources_page(request: Request, kb_id: str) -> Response:
    """A knowledge base's sources: add one, test it, sync it now, pause or resume it, remove it, and each
    one's syncs with their counts and errors, followed live."""
    from ragloom.service.sources.manage import types

    return _page(request, "sources.html", "sources.title", "kb", kb_id=kb_id, source_types=types())


@router.get("/kb/{kb_id}/knowledge")
def knowledge_page(request: Request, kb_id: str) -> Response:
    """Knowledge builds (RAPTOR summaries, the knowledge graph): the estimate before starting, then each
    build's stage and progress live, with cancel."""
    return _page(request, "knowledge.html", "build.title", "kb", kb_id=kb_id)


@router.get("/kb/{kb_id}/graph")
def graph_page(request: Request, kb_id: str) -> Response:
    """The knowledge graph drawn (entities by PageRank, coloured by community), an entity's details and
    sources, and the communities' reports."""
    return _page(request, "graph.html", "graph.title", "kb", kb_id=kb_id)


@router.get("/bench")
def bench_page(request: Request) -> Response:
    """The retrieval bench: one question against the knowledge bases, with every score and, on demand,
    the explain table; two settings side by side."""
    return _page(request, "bench.html", "bench.title", "bench")


@router.get("/chat")
@router.get("/chat/{chat_id}")
def chat_page(request: Request, chat_id: str = "") -> Response:
    """Chat assistants, their sessions, and a conversation whose citations open the cited page."""
    return _page(request, "chat.html", "chat.title", "chat", chat_id=chat_id)


@router.get("/search/{chat_id}")
def search_page(request: Request, chat_id: str) -> Response:
    """An assistant's search page: the answer with its citations above the results with their snippets."""
    return _page(request, "search.html", "search.title", "chat", chat_id=chat_id)


@router.get("/account")
def account_page(request: Request) -> Response:
    """The signed-in person's own account: name, password."""
    return _page(request, "account.html", "account.title", "account", min_password=passwords.MIN_LENGTH)


WORKSPACE_PAGES = {"members": "members.title", "groups": "groups.title", "invitations": "invitations.title",
                   "keys": "keys.title", "providers": "providers.title"}


@router.get("/workspace/{name}")
def workspace_page(request: Request, name: str) -> Response:
    title = WORKSPACE_PAGES.get(name)
    if title is None:
        return render(request, "not_found.html", who=viewer(request), title="notfound.title")
    return _page(request, f"{name}.html", title, name)
