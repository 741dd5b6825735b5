"""Share links (issue 33): ``/chats/{chat_id}/shares`` for the assistant's owners, and ``/share/{token}``
for visitors without an account (``ragloom.service.chat.shares`` says what a link opens).

The visitor routes are public: the token is the credential. A browser's request from another site
must come from one of the link's ``allowed_origins`` (its ``Origin`` checked, CORS headers only for
those); each client address is limited as on the other public routes, and the link's questions per
minute and per day for all its visitors together."""

from __future__ import annotations

import re
import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import StreamingResponse

from ragloom.api.chats import CHAT_STREAM
from ragloom.api.chats import _sse as sse
from ragloom.api.deps import PUBLIC, READS, ContextDep, PrincipalDep, limited_per_address, rate_limited
from ragloom.api.responses import CALLER_ERRORS, binary_response, error_responses
from ragloom.context import Context, Principal
from ragloom.errors import NotFoundError, PermissionDeniedError, RagloomError
from ragloom.schemas.chats import ChatReply, CompletionRequest
from ragloom.schemas.documents import PageList
from ragloom.schemas.shares import (
    SHARE_TOKEN,
    VISITOR_ID,
    SearchQuestion,
    SearchResults,
    ShareCreate,
    ShareInfo,
    ShareList,
    ShareUpdate,
    ShareView,
    VisitorFeedback,
    VisitorMessage,
    VisitorQuestion,
    VisitorReply,
    VisitorSession,
    VisitorSessionList,
)
from ragloom.service.accounts import workspace_models
from ragloom.service.chat import completion, search_app, share_views, shares
from ragloom.service.documents import catalog
from ragloom.service.documents.views import pages_view

router = APIRouter(tags=["shares"], responses=CALLER_ERRORS)

VISITOR_COOKIE = "ragloom_visitor"
VISITOR_COOKIE_DAYS = 180
MAX_PAGE_NUMBER = 100_000
TokenPath = Annotated[str, Path(min_length=16, max_length=64, pattern=SHARE_TOKEN)]
LIMITED = error_responses(429)
HighlightQuery = Annotated[str, Query(max_length=4000, pattern=r"^\d{1,7}(,\d{1,7})*$|^$")]
VisitorQuery = Annotated[str | None, Query(pattern=VISITOR_ID, description="the visitor (default: the cookie)")]


# --- the owner's side ----------------------------------------------------------------------------------

@router.post("/chats/{chat_id}/shares", status_code=201, responses=error_responses(409))
def create_share(chat_id: str, body: ShareCreate, ctx: ContextDep, principal: PrincipalDep) -> ShareView:
    """Share an assistant by link (a workspace owner or admin; the assistant's creator when the workspace
    lets members share)."""
    with ctx.db.session() as s:
        return share_views.share_view(shares.create(s, principal=principal, assistant_id_or_name=chat_id, spec=body), 0)


@router.get("/chats/{chat_id}/shares")
def list_shares(chat_id: str, ctx: ContextDep, principal: PrincipalDep) -> ShareList:
    """The assistant's share links, newest first, revoked ones included, with their use."""
    with ctx.db.session() as s:
        links = shares.list_links(s, principal=principal, assistant_id_or_name=chat_id)
        counts = shares.session_counts(s, [link.id for link in links])
        return ShareList(shares=[share_views.share_view(link, counts.get(link.id, 0)) for link in links],
                         total=len(links))


@router.get("/chats/{chat_id}/shares/{share_id}")
def get_share(chat_id: str, share_id: str, ctx: ContextDep, principal: PrincipalDep) -> ShareView:
    with ctx.db.session() as s:
        link = shares.get(s, principal=principal, assistant_id_or_name=chat_id, share_id=share_id)
        return share_views.share_view(link, shares.session_counts(s, [link.id]).get(link.id, 0))


@router.patch("/chats/{chat_id}/shares/{share_id}", responses=error_responses(409))
def update_share(chat_id: str, share_id: str, body: ShareUpdate, ctx: ContextDep,
                 principal: PrincipalDep) -> ShareView:
    """Change a link: its limits, origins, texts, expiry (effective at its next request)."""
    with ctx.db.session() as s:
        link = shares.update(s, principal=principal, assistant_id_or_name=chat_id, share_id=share_id, spec=body)
        return share_views.share_view(link, shares.session_counts(s, [link.id]).get(link.id, 0))


@router.delete("/chats/{chat_id}/shares/{share_id}")
def revoke_share(chat_id: str, share_id: str, ctx: ContextDep, principal: PrincipalDep) -> ShareView:
    """Revoke a link: every request with it is refused from now on; its visitors' sessions are kept."""
    with ctx.db.session() as s:
        link = shares.revoke(s, principal=principal, assistant_id_or_name=chat_id, share_id=share_id)
        return share_views.share_view(link, shares.session_counts(s, [link.id]).get(link.id, 0))


# --- the visitor's side --------------------------------------------------------------------------------

def own_origin(request: Request) -> str:
    return str(request.base_url).rstrip("/")


class _Visit:
    """A visitor's request: the link (checked active, its origin allowed), the principal it acts as."""

    def __init__(self, ctx: Context, request: Request, token: str) -> None:
        origin = request.headers.get("origin")
        with ctx.db.session() as s:
            link = shares.resolve(s, token)
            allowed = shares.allowed_origin(link, origin, own_origin(request))
            if not allowed:
                shares.refused(s, link.id)
            else:
                self.principal: Principal = shares.visitor_principal(s, link)
            self.link_id, self.token, self.show_pages = link.id, link.token, link.show_pages
            self.per_minute, self.per_day = link.per_minute, link.per_day
            self.assistant_id, self.kind = link.assistant_id, link.kind
            origins = list(link.allowed_origins)
        if not allowed:
            raise PermissionDeniedError(f"origin {origin!r} may not use this share link (its owner allows: "
                                        f"{', '.join(origins) or 'only this server'})")
        self.origin = origin

    def need(self, kind: str) -> None:
        if self.kind != kind:
            raise NotFoundError(f"this share link is a {self.kind} page, not a {kind}")

    def take(self, ctx: Context, request: Request) -> None:
        """Count a question against the link's limits (a refusal is counted too)."""
        try:
            request.app.state.share_limiter.take(self.link_id, self.per_minute, self.per_day)
        except RagloomError:
            with ctx.db.session() as s:
                shares.refused(s, self.link_id)
            raise

    def link(self, s: Any) -> Any:
        """The link's row, in the caller's database session."""
        return share_views.link(s, self.link_id)


def _cors(response: Response, origin: str | None, request: Request) -> Response:
    if origin and origin.rstrip("/").lower() != own_origin(request).lower():
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Vary"] = "Origin"
    return response


def _visitor_id(request: Request, given: str | None) -> tuple[str, bool]:
    """The visitor's id (the client's, else the cookie's, else a new one) and whether it is new."""
    if given:
        return given, False
    cookie = request.cookies.get(VISITOR_COOKIE, "")
    if re.fullmatch(VISITOR_ID, cookie):
        return cookie, False
    return secrets.token_urlsafe(18), True


def _set_visitor(response: Response, visitor_id: str, request: Request) -> None:
    response.set_cookie(VISITOR_COOKIE, visitor_id, max_age=VISITOR_COOKIE_DAYS * 86400, httponly=True,
                        samesite="lax", secure=request.url.scheme == "https", path="/")


def _visitor_reply(ctx: Context, visit: _Visit, reply: ChatReply, visitor_id: str) -> VisitorReply:
    with ctx.db.session() as s:
        return share_views.visitor_reply(s, visit.link_id, reply, visitor_id, visit.token, visit.show_pages)


@router.get("/share/{token}", openapi_extra=PUBLIC, dependencies=[limited_per_address("share")], responses=LIMITED)
def share_info(token: TokenPath, ctx: ContextDep, request: Request, response: Response) -> ShareInfo:
    """What the link's chat page shows first: its title and welcome text."""
    visit = _Visit(ctx, request, token)
    with ctx.db.session() as s:
        shown = shares.info(s, visit.link(s))
    _cors(response, visit.origin, request)
    extractive = workspace_models.chat_model(ctx, visit.principal.tenant_id) is None
    return ShareInfo(kind=shown["kind"], title=shown["title"], welcome=shown["welcome"],
                     show_pages=shown["show_pages"], extractive=extractive)


@router.options("/share/{token}/{rest:path}", include_in_schema=False)
def share_preflight(token: TokenPath, rest: str, ctx: ContextDep, request: Request) -> Response:
    """CORS preflight: allowed for the link's origins only."""
    visit = _Visit(ctx, request, token)
    response = Response(status_code=204)
    _cors(response, visit.origin, request)
    response.headers["Access-Control-Allow-Methods"] = "GET, POST, PUT"
    response.headers["Access-Control-Allow-Headers"] = "Content-Type"
    response.headers["Access-Control-Max-Age"] = "600"
    return response


@router.post("/share/{token}/completions", openapi_extra={**PUBLIC, **READS}, response_model=VisitorReply,
             dependencies=[limited_per_address("share")], responses={**CHAT_STREAM, **error_responses(429, 502)})
def share_completions(token: TokenPath, body: VisitorQuestion, ctx: ContextDep,
                      request: Request) -> Response:
    """A visitor's question (a new session without ``session_id``), answered as the assistant answers its
    workspace, and kept in the visitor's session."""
    visit = _Visit(ctx, request, token)
    visit.need("chat")
    visitor_id, new_visitor = _visitor_id(request, body.visitor_id)
    visit.take(ctx, request)
    with ctx.db.session() as s:
        chat = shares.visitor_session(s, visit.link(s), visit.principal, visitor_id, body.session_id, body.question)
        session_id = chat.id
    asked = CompletionRequest(question=body.question, session_id=session_id, stream=body.stream)
    prepared = completion.prepare(ctx, principal=visit.principal, assistant_id=visit.assistant_id, request=asked)
    response: Response
    if not body.stream:
        reply = completion.complete(ctx, principal=visit.principal, prepared=prepared)
        out = _visitor_reply(ctx, visit, reply, visitor_id)
        response = Response(out.model_dump_json(), media_type="application/json")
    else:
        events = completion.complete_stream(ctx, principal=visit.principal, prepared=prepared)
        first = next(events)
        response = StreamingResponse(sse(first, events, lambda reply: _visitor_reply(ctx, visit, reply, visitor_id)),
                                     media_type="text/event-stream")
    if new_visitor:
        _set_visitor(response, visitor_id, request)
    return _cors(response, visit.origin, request)


def _visitor_messages(ctx: Context, visit: _Visit, chat_id: str) -> list[VisitorMessage]:
    with ctx.db.session() as s:
        return share_views.visitor_messages(s, chat_id, visit.token, visit.show_pages)


@router.get("/share/{token}/sessions", openapi_extra=PUBLIC, dependencies=[limited_per_address("share")],
            responses=LIMITED)
def share_sessions(token: TokenPath, ctx: ContextDep, request: Request, response: Response,
                   visitor_id: VisitorQuery = None) -> VisitorSessionList:
    """The visitor's sessions with this link, newest first, with their messages."""
    visit = _Visit(ctx, request, token)
    vid, _ = _visitor_id(request, visitor_id)
    with ctx.db.session() as s:
        chats = [(c.id, c.name) for c in shares.visitor_sessions(s, visit.link(s), vid)]
    _cors(response, visit.origin, request)
    return VisitorSessionList(sessions=[VisitorSession(id=cid, name=name, messages=_visitor_messages(ctx, visit, cid))
                                        for cid, name in chats])


@router.get("/share/{token}/sessions/{session_id}", openapi_extra=PUBLIC,
            dependencies=[limited_per_address("share")], responses=LIMITED)
def share_session(token: TokenPath, session_id: str, ctx: ContextDep, request: Request, response: Response,
                  visitor_id: VisitorQuery = None) -> VisitorSession:
    """One of the visitor's sessions with its messages."""
    visit = _Visit(ctx, request, token)
    vid, _ = _visitor_id(request, visitor_id)
    with ctx.db.session() as s:
        chat = shares.visitor_session(s, visit.link(s), visit.principal, vid, session_id, "")
        name = chat.name
    _cors(response, visit.origin, request)
    return VisitorSession(id=session_id, name=name, messages=_visitor_messages(ctx, visit, session_id))


@router.put("/share/{token}/sessions/{session_id}/messages/{message_id}/feedback", openapi_extra=PUBLIC,
            dependencies=[limited_per_address("share")], responses=LIMITED)
def share_feedback(token: TokenPath, session_id: str, message_id: str, body: VisitorFeedback, ctx: ContextDep,
                   request: Request, response: Response) -> VisitorMessage:
    """Rate an answer of the visitor's session (``rating: null`` removes the rating)."""
    visit = _Visit(ctx, request, token)
    vid, _ = _visitor_id(request, body.visitor_id)
    with ctx.db.session() as s:
        rated = share_views.rate(s, visit.link(s), vid, session_id, message_id, body.rating, body.comment,
                                 visit.show_pages)
    _cors(response, visit.origin, request)
    return rated


def _visitor_document(ctx: Context, visit: _Visit, document_id: str) -> str:
    """The knowledge base of a document the link's visitors may see pages of (404 for any other)."""
    if not visit.show_pages:
        raise NotFoundError("this share link does not show document pages")
    with ctx.db.session() as s:
        return share_views.document_kb(s, document_id, shares.kb_ids(s, visit.link(s)))


@router.get("/share/{token}/documents/{document_id}/pages", openapi_extra=PUBLIC,
            dependencies=[limited_per_address("share")], responses=LIMITED)
def share_pages(token: TokenPath, document_id: str, ctx: ContextDep, request: Request, response: Response,
                version_id: str | None = None) -> PageList:
    """Page sizes and images of a document the assistant answers from (when the link shows pages)."""
    visit = _Visit(ctx, request, token)
    kb_id = _visitor_document(ctx, visit, document_id)
    with ctx.db.session() as s:
        rows = catalog.pages(s, principal=visit.principal, kb_id=kb_id, doc_id=document_id, version_id=version_id)
    _cors(response, visit.origin, request)
    return pages_view(rows, base=f"/api/v1/share/{token}/documents/{document_id}/pages", version_id=version_id)


@router.get("/share/{token}/documents/{document_id}/pages/{page}.png", response_class=Response, openapi_extra=PUBLIC,
            dependencies=[limited_per_address("share")],
            responses={**LIMITED, **binary_response("image/png", "the page's preview image")})
def share_page_image(token: TokenPath, document_id: str, page: Annotated[int, Path(ge=1, le=MAX_PAGE_NUMBER)],
                     ctx: ContextDep, request: Request, version_id: str | None = None,
                     width: Annotated[int | None, Query(ge=16, le=1024)] = None) -> Response:
    visit = _Visit(ctx, request, token)
    kb_id = _visitor_document(ctx, visit, document_id)
    with ctx.db.session() as s:
        image = catalog.page_png(ctx, s, principal=visit.principal, kb_id=kb_id, doc_id=document_id, page=page,
                                 version_id=version_id, width=width)
    response = Response(image, media_type="image/png", headers={"Cache-Control": "private, max-age=3600"})
    return _cors(response, visit.origin, request)


@router.get("/share/{token}/documents/{document_id}/figures/{chunk_id}.png", response_class=Response,
            openapi_extra=PUBLIC, dependencies=[limited_per_address("share")],
            responses={**LIMITED, **binary_response("image/png", "a cited figure's picture")})
def share_figure_image(token: TokenPath, document_id: str, chunk_id: Annotated[str, Path(max_length=64)],
                       ctx: ContextDep, request: Request) -> Response:
    """The picture of a figure chunk of a document the assistant answers from (when the link shows pages)."""
    visit = _Visit(ctx, request, token)
    kb_id = _visitor_document(ctx, visit, document_id)
    with ctx.db.session() as s:
        image = catalog.figure_png(ctx, s, principal=visit.principal, kb_id=kb_id, doc_id=document_id,
                                   chunk_id=chunk_id)
    response = Response(image, media_type="image/png", headers={"Cache-Control": "private, max-age=3600"})
    return _cors(response, visit.origin, request)


@router.get("/share/{token}/documents/{document_id}/preview", response_class=Response, openapi_extra=PUBLIC,
            dependencies=[limited_per_address("share")],
            responses={**LIMITED, **binary_response("text/html", "the version's HTML view, the highlighted blocks "
                                                                 "marked")})
def share_preview(token: TokenPath, document_id: str, ctx: ContextDep, request: Request,
                  version_id: str | None = None,
                  highlight: HighlightQuery = "") -> Response:
    """The HTML view of a flowing document the assistant answers from, the cited blocks marked."""
    from ragloom.api.documents import VIEW_POLICY

    visit = _Visit(ctx, request, token)
    kb_id = _visitor_document(ctx, visit, document_id)
    with ctx.db.session() as s:
        page = catalog.view(ctx, s, principal=visit.principal, kb_id=kb_id, doc_id=document_id,
                            version_id=version_id, highlight=[int(n) for n in highlight.split(",") if n])
    return Response(page, media_type="text/html; charset=utf-8",
                    headers={"Content-Security-Policy": VIEW_POLICY, "Cache-Control": "private, max-age=3600"})


@router.post("/share/{token}/search", openapi_extra={**PUBLIC, **READS}, dependencies=[limited_per_address("share")],
             responses={**LIMITED, **error_responses(502)})
def share_search(token: TokenPath, body: SearchQuestion, ctx: ContextDep, request: Request,
                 response: Response) -> SearchResults:
    """A search page's question (a share link of kind search): the answer, and the results below it."""
    visit = _Visit(ctx, request, token)
    visit.need("search")
    visit.take(ctx, request)

    def pages_of(kb_id: str, doc_id: str, version_id: str) -> str | None:
        return f"/api/v1/share/{token}/documents/{doc_id}/pages?version_id={version_id}" if visit.show_pages else None

    found = search_app.search(ctx, principal=visit.principal, assistant_id=visit.assistant_id,
                              question=body.question, pages_of=pages_of,
                              reference=lambda r: share_views.visitor_view(r, token, visit.show_pages))
    with ctx.db.session() as s:
        shares.answered(s, visit.link_id)
    _cors(response, visit.origin, request)
    return found


@router.post("/chats/{chat_id}/search", openapi_extra=READS, dependencies=[rate_limited("answer")],
             responses=error_responses(429, 502))
def assistant_search(chat_id: str, body: SearchQuestion, ctx: ContextDep, principal: PrincipalDep) -> SearchResults:
    """The assistant's search page: the answer with its citations, and the results below it (nothing is
    stored)."""

    def pages_of(kb_id: str, doc_id: str, version_id: str) -> str | None:
        return f"/api/v1/datasets/{kb_id}/documents/{doc_id}/pages?version_id={version_id}"

    return search_app.search(ctx, principal=principal, assistant_id=chat_id, question=body.question,
                             pages_of=pages_of)
