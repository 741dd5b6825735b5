"""What the share links' routes show: a link as its owner sees it, and a visitor's replies, messages and
references (their pages and views through the link, nothing into the workspace)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.orm import Session

from ragloom.db.models import ChatMessage, ChatSession, Document, ShareLink
from ragloom.errors import NotFoundError
from ragloom.schemas.base import iso_utc
from ragloom.schemas.chats import ChatReference, ChatReply
from ragloom.schemas.shares import EmbedSnippets, ShareView, VisitorMessage, VisitorReply
from ragloom.service.chat import sessions, shares
from ragloom.service.chat.views import citation_view, reference_view
from ragloom.service.views import view_link
from ragloom.states import MessageRole


def embed_snippets(token: str, server: str) -> EmbedSnippets:
    """The script tag and the iframe a web page of an allowed origin includes (``server``: this server's
    origin, e.g. ``https://kb.example.com``; relative without one)."""
    return EmbedSnippets(
        script=f'<script src="{server}/share/{token}/embed.js" defer></script>',
        iframe=f'<iframe src="{server}/share/{token}" title="Chat" style="width:400px;height:600px;border:0"></iframe>')


def share_view(link: ShareLink, sessions_kept: int) -> ShareView:
    return ShareView(
        id=link.id, assistant_id=link.assistant_id, kind=link.kind, name=link.name, title=link.title,
        welcome=link.welcome, token=link.token, url=f"/share/{link.token}", embed=embed_snippets(link.token, ""),
        allowed_origins=list(link.allowed_origins), per_minute=link.per_minute, per_day=link.per_day,
        show_pages=link.show_pages, expires_at=iso_utc(link.expires_at), revoked_at=iso_utc(link.revoked_at),
        state=shares.state(link), questions=link.questions, refused=link.refused,
        sessions=sessions_kept, last_used_at=iso_utc(link.last_used_at), created_by=link.created_by,
        created_at=iso_utc(link.created_at))


def visitor_view(view: ChatReference, token: str, show_pages: bool) -> ChatReference:
    """A reference as a visitor sees it: its pages, view and figure picture through the link (when it shows
    pages), no file, no link into the workspace or to the source."""
    base = f"/api/v1/share/{token}/documents/{view.doc_id}"
    alive = view.status != "deleted"
    return view.model_copy(update={
        "file": None, "changes": None, "source_url": None,
        "pages": f"{base}/pages?version_id={view.version_id}" if alive and show_pages else None,
        "preview": view_link(base, view.version_id, view.positions) if alive and show_pages else None,
        "figure": f"{base}/figures/{view.chunk_id}.png" if view.figure and alive and show_pages else None,
    })


def _references(refs: Sequence[Mapping[str, Any]], active: Mapping[str, str | None], token: str,
                show_pages: bool) -> list[ChatReference]:
    return [visitor_view(reference_view(r, active), token, show_pages) for r in refs]


def visitor_reply(session: Session, link_id: str, reply: ChatReply, visitor_id: str, token: str,
                  show_pages: bool) -> VisitorReply:
    """The stored answer as the visitor sees it; counts the link's question."""
    shares.answered(session, link_id)
    return VisitorReply(session_id=reply.session_id, visitor_id=visitor_id, message_id=reply.message_id,
                        answer=reply.answer, insufficient=reply.insufficient,
                        references=[visitor_view(r, token, show_pages) for r in reply.references],
                        citations=reply.citations)


def _message(m: ChatMessage, active: Mapping[str, str | None], token: str, show_pages: bool) -> VisitorMessage:
    return VisitorMessage(id=m.id, role="user" if m.role == MessageRole.USER else "assistant", content=m.content,
                          references=_references(list(m.refs or []), active, token, show_pages),
                          citations=[citation_view(c) for c in m.citations or []],
                          feedback=m.feedback if m.feedback in ("up", "down") else None)


def visitor_messages(session: Session, chat_id: str, token: str, show_pages: bool) -> list[VisitorMessage]:
    chat = session.get(ChatSession, chat_id)
    rows = sessions.messages(session, chat) if chat is not None else []
    active = sessions.active_versions(session, [r for m in rows for r in m.refs or []])
    return [_message(m, active, token, show_pages) for m in rows]


def rate(session: Session, link: ShareLink, visitor_id: str, session_id: str, message_id: str,
         rating: str | None, comment: str, show_pages: bool) -> VisitorMessage:
    """Rate an answer of the visitor's session (None removes the rating)."""
    m = shares.visitor_message(session, link, visitor_id, session_id, message_id)
    m.feedback = rating
    m.feedback_comment = comment if rating else ""
    return _message(m, sessions.active_versions(session, m.refs or []), link.token, show_pages)


def document_kb(session: Session, document_id: str, kb_ids: set[str]) -> str:
    """The knowledge base of a document among ``kb_ids`` (the link's assistant's); 404 for any other."""
    doc = session.get(Document, document_id)
    if doc is None or doc.kb_id not in kb_ids:
        raise NotFoundError(f"document {document_id!r} not found")
    return str(doc.kb_id)


def link(session: Session, link_id: str) -> ShareLink:
    found = session.get(ShareLink, link_id)
    if found is None:
        raise NotFoundError("no such share link")
    return found
