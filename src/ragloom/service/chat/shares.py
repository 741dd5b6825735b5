"""Share links: an assistant answering visitors who have no account (issue 33).

A link belongs to one assistant. Its owner (a workspace owner or admin, or the assistant's creator
when the workspace lets members share, ``Tenant.members_share``) creates it with a random token, and
may change or revoke it; each is recorded in the audit log. Whoever holds the token may, until the
link expires or is revoked (checked at every request):

* ask the assistant questions (:func:`prepare_question`), in sessions kept per visitor — a visitor
  is an id the client chooses or the visitor cookie holds — stored like other sessions, under the
  link's creator, marked with the link and the visitor (:attr:`ChatSession.share_id`), so the creator
  sees them among their own;
* read those sessions again, rate the answers;
* see the page images of the documents the assistant may read, when the link shows pages.

A visitor acts as the link's creator *over this assistant only* (:func:`visitor_principal`): the
assistant's knowledge bases even when private to the creator, but no document that a source
restricts to named readers (:attr:`ragloom.context.Principal.visitor`), and nothing else — the
visitor routes take no assistant, knowledge base or session id that is not the link's own. A link
whose creator has left the workspace stops working.

Limits: ``per_minute`` and ``per_day`` questions for all the link's visitors together (sliding
windows in the server process's memory, :class:`ragloom.api.ratelimit.LinkLimiter`), on top of the
server's limit per client address. Refusals count in ``refused``.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from ragloom.context import Principal
from ragloom.db.models import Assistant, ChatMessage, ChatSession, Membership, ShareLink, Tenant, utcnow
from ragloom.errors import ConflictError, InvalidRequestError, NotFoundError, PermissionDeniedError
from ragloom.schemas.shares import ShareCreate, ShareUpdate
from ragloom.service.accounts import audit
from ragloom.service.chat import assistants, sessions
from ragloom.states import KeyScope, MessageRole, Role

TOKEN_BYTES = 24  # 32 url-safe characters: never guessed
DEFAULT_PER_MINUTE = 10
DEFAULT_PER_DAY = 500
MAX_LINKS_PER_ASSISTANT = 100


def _aware(dt: datetime | None) -> datetime | None:
    return None if dt is None else dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt


def state(link: ShareLink, now: datetime | None = None) -> str:
    """``active``, ``expired`` or ``revoked``."""
    if link.revoked_at is not None:
        return "revoked"
    expires = _aware(link.expires_at)
    if expires is not None and expires <= (now or datetime.now(UTC)):
        return "expired"
    return "active"


def may_share(session: Session, principal: Principal, assistant: Assistant) -> None:
    """Owners and admins share any assistant they see; its creator shares it when the workspace lets members."""
    if principal.role in (Role.OWNER, Role.ADMIN):
        return
    tenant = session.get(Tenant, principal.tenant_id)
    if assistant.created_by == principal.user_id and tenant is not None and tenant.members_share:
        return
    raise PermissionDeniedError(
        f"only a workspace owner or admin may share assistant {assistant.name!r} by link"
        + ("" if assistant.created_by != principal.user_id else
           " (this workspace does not let members share their assistants: members_share)"))


def _apply(link: ShareLink, spec: ShareCreate | ShareUpdate) -> list[str]:
    """Set the fields ``spec`` gives; the names of those changed."""
    given = spec.model_fields_set
    changed: list[str] = []
    for name in ("name", "title", "welcome", "allowed_origins", "per_minute", "per_day", "show_pages", "expires_at"):
        if name not in given:
            continue
        value = getattr(spec, name)
        if value is None:
            continue  # null keeps the value (for expires_at too: never_expires removes the expiry)
        if name == "allowed_origins":
            value = list(dict.fromkeys(value))
        if name == "expires_at":
            value = _aware(value)
            if value is not None and value <= datetime.now(UTC):
                raise InvalidRequestError("expires_at: must be in the future")
        if getattr(link, name) != value:
            setattr(link, name, value)
            changed.append(name)
    if isinstance(spec, ShareCreate) and spec.expires_in_days is not None:
        link.expires_at = datetime.now(UTC) + timedelta(days=spec.expires_in_days)
        changed.append("expires_at")
    if isinstance(spec, ShareUpdate) and spec.never_expires and link.expires_at is not None:
        link.expires_at = None
        changed.append("expires_at")
    return changed


def create(session: Session, *, principal: Principal, assistant_id_or_name: str, spec: ShareCreate) -> ShareLink:
    assistant = assistants.get(session, principal=principal, assistant_id_or_name=assistant_id_or_name)
    may_share(session, principal, assistant)
    count = session.scalar(select(func.count()).select_from(ShareLink)
                           .where(ShareLink.assistant_id == assistant.id, ShareLink.revoked_at.is_(None))) or 0
    if count >= MAX_LINKS_PER_ASSISTANT:
        raise ConflictError(f"assistant {assistant.name!r} has {count} share links: revoke one first")
    link = ShareLink(tenant_id=principal.tenant_id, assistant_id=assistant.id, created_by=principal.user_id,
                     kind=spec.kind, token=secrets.token_urlsafe(TOKEN_BYTES), name="", title="", welcome="",
                     allowed_origins=[],
                     per_minute=DEFAULT_PER_MINUTE, per_day=DEFAULT_PER_DAY, show_pages=True, questions=0, refused=0)
    _apply(link, spec)
    session.add(link)
    session.flush()
    audit.record_by(session, principal, "share.created", target=f"share:{link.id}",
                    detail=f"{link.kind} of assistant {assistant.name!r} ({assistant.id}); origins "
                           f"{link.allowed_origins}; {link.per_minute}/min, {link.per_day}/day")
    return link


def list_links(session: Session, *, principal: Principal, assistant_id_or_name: str) -> list[ShareLink]:
    assistant = assistants.get(session, principal=principal, assistant_id_or_name=assistant_id_or_name)
    return list(session.scalars(select(ShareLink).where(ShareLink.assistant_id == assistant.id,
                                                        ShareLink.tenant_id == principal.tenant_id)
                                .order_by(ShareLink.created_at.desc(), ShareLink.id)))


def get(session: Session, *, principal: Principal, assistant_id_or_name: str, share_id: str) -> ShareLink:
    """A link of the assistant by id, or by name (the one not revoked, when names repeat)."""
    assistant = assistants.get(session, principal=principal, assistant_id_or_name=assistant_id_or_name)
    links = list(session.scalars(select(ShareLink).where(
        ShareLink.assistant_id == assistant.id, ShareLink.tenant_id == principal.tenant_id,
        or_(ShareLink.id == share_id, ShareLink.name == share_id)).limit(MAX_LINKS_PER_ASSISTANT + 1)))
    by_id = [link for link in links if link.id == share_id]
    if by_id:
        return by_id[0]
    live = [link for link in links if link.revoked_at is None] or links
    if not live:
        raise NotFoundError(f"share link {share_id!r} of assistant {assistant.name!r} not found")
    if len(live) > 1:
        raise ConflictError(f"{len(live)} share links of assistant {assistant.name!r} are named {share_id!r}: "
                            "give the link's id")
    return live[0]


def update(session: Session, *, principal: Principal, assistant_id_or_name: str, share_id: str,
           spec: ShareUpdate) -> ShareLink:
    link = get(session, principal=principal, assistant_id_or_name=assistant_id_or_name, share_id=share_id)
    assistant = session.get(Assistant, link.assistant_id)
    assert assistant is not None
    may_share(session, principal, assistant)
    if link.revoked_at is not None:
        raise ConflictError(f"share link {share_id!r} is revoked: create a new one")
    changed = _apply(link, spec)
    if changed:
        link.updated_at = utcnow()
        audit.record_by(session, principal, "share.updated", target=f"share:{link.id}",
                        detail="changed: " + ", ".join(changed))
    session.flush()
    return link


def revoke(session: Session, *, principal: Principal, assistant_id_or_name: str, share_id: str) -> ShareLink:
    """Revoke a link: its next request is refused (idempotent)."""
    link = get(session, principal=principal, assistant_id_or_name=assistant_id_or_name, share_id=share_id)
    assistant = session.get(Assistant, link.assistant_id)
    assert assistant is not None
    may_share(session, principal, assistant)
    if link.revoked_at is None:
        link.revoked_at = utcnow()
        audit.record_by(session, principal, "share.revoked", target=f"share:{link.id}",
                        detail=f"assistant {assistant.name!r}; {link.questions} questions answered")
        session.flush()
    return link


def session_counts(session: Session, share_ids: list[str]) -> dict[str, int]:
    if not share_ids:
        return {}
    rows = session.execute(select(ChatSession.share_id, func.count()).where(ChatSession.share_id.in_(share_ids))
                           .group_by(ChatSession.share_id))
    return {sid: n for sid, n in rows if sid is not None}


# -- visitors ----------------------------------------------------------------------------------------------

def resolve(session: Session, token: str) -> ShareLink:
    """The active link of ``token``: 404 for no such link, 403 naming why for a revoked or expired one."""
    link = session.scalar(select(ShareLink).where(ShareLink.token == token)) if 16 <= len(token) <= 64 else None
    if link is None:
        raise NotFoundError("no such share link")
    current = state(link)
    if current == "revoked":
        raise PermissionDeniedError("this share link was revoked by its owner")
    if current == "expired":
        raise PermissionDeniedError(f"this share link expired on {_aware(link.expires_at):%Y-%m-%d %H:%M} UTC")
    return link


def visitor_principal(session: Session, link: ShareLink) -> Principal:
    """Who a visitor acts as: the link's creator with their current role, reading no restricted document."""
    role = session.scalar(select(Membership.role).where(Membership.tenant_id == link.tenant_id,
                                                        Membership.user_id == link.created_by))
    if role is None:
        raise PermissionDeniedError("this share link no longer works: its creator left the workspace")
    return Principal(link.tenant_id, link.created_by, Role(role), KeyScope.READ, visitor=True)


def allowed_origin(link: ShareLink, origin: str | None, own: str) -> bool:
    """A request with no ``Origin`` (not a browser's cross-site call), from this server, or from an origin
    the link allows."""
    if not origin:
        return True
    origin = origin.rstrip("/").lower()
    return origin == own.rstrip("/").lower() or origin in (link.allowed_origins or [])


def refused(session: Session, link_id: str) -> None:
    """Count a request the link's limits or origins refused."""
    link = session.get(ShareLink, link_id)
    if link is not None:
        link.refused += 1


def visitor_session(session: Session, link: ShareLink, principal: Principal, visitor_id: str,
                    session_id: str | None, question: str) -> ChatSession:
    """The visitor's session ``session_id`` (404 for any other), or a new one for them."""
    assistant = session.get(Assistant, link.assistant_id)
    assert assistant is not None
    if session_id:
        chat = session.scalar(select(ChatSession).where(ChatSession.id == session_id, ChatSession.share_id == link.id,
                                                        ChatSession.visitor_id == visitor_id))
        if chat is None:
            raise NotFoundError(f"session {session_id!r} not found")
        return chat
    chat = sessions.create(session, principal=principal, assistant=assistant, name=sessions.name_from(question))
    chat.share_id, chat.visitor_id = link.id, visitor_id
    session.flush()
    return chat


def visitor_sessions(session: Session, link: ShareLink, visitor_id: str) -> list[ChatSession]:
    return list(session.scalars(select(ChatSession).where(ChatSession.share_id == link.id,
                                                          ChatSession.visitor_id == visitor_id)
                                .order_by(ChatSession.updated_at.desc()).limit(50)))


def answered(session: Session, link_id: str) -> None:
    link = session.get(ShareLink, link_id)
    if link is not None:
        link.questions += 1
        link.last_used_at = utcnow()


def visitor_message(session: Session, link: ShareLink, visitor_id: str, session_id: str,
                    message_id: str) -> ChatMessage:
    chat = session.scalar(select(ChatSession).where(ChatSession.id == session_id, ChatSession.share_id == link.id,
                                                    ChatSession.visitor_id == visitor_id))
    message = (session.scalar(select(ChatMessage).where(ChatMessage.session_id == chat.id,
                                                        ChatMessage.id == message_id)) if chat else None)
    if message is None:
        raise NotFoundError(f"message {message_id!r} not found")
    if message.role != MessageRole.ASSISTANT:
        raise InvalidRequestError(f"message_id: {message_id!r} is a question; feedback rates an answer")
    return message


def kb_ids(session: Session, link: ShareLink) -> set[str]:
    """The knowledge bases of the link's assistant (the only ones a visitor's page images come from)."""
    assistant = session.get(Assistant, link.assistant_id)
    return {kb["id"] for kb in (assistant.knowledge_bases if assistant else [])}


def info(session: Session, link: ShareLink) -> dict[str, Any]:
    assistant = session.get(Assistant, link.assistant_id)
    assert assistant is not None
    opening = assistants.prompt_settings(assistant).opening
    return {"kind": link.kind, "title": link.title or assistant.name, "welcome": link.welcome or opening,
            "show_pages": link.show_pages}
