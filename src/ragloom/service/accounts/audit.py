"""The audit log: sign-ins and failed sign-ins, API keys created and revoked, members added, removed
and their roles changed, invitations, knowledge bases and documents deleted — who, when, from where
(the request's :data:`ragloom.context.request_origin`, ``cli`` for the command line). Owners and
admins read their workspace's; server administrators also read the events of no workspace (failed
sign-ins, new accounts). Nothing secret is written (a key appears by its prefix only)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ragloom.context import Principal, request_origin
from ragloom.db.models import AuditEvent, User
from ragloom.errors import PermissionDeniedError
from ragloom.states import Role

MAX_PAGE = 500


def record(session: Session, action: str, *, tenant_id: str | None, user_id: str | None, target: str = "",
           detail: str = "") -> None:
    """Add an event in the caller's transaction (it is written with what it records, or not at all)."""
    session.add(AuditEvent(tenant_id=tenant_id, user_id=user_id, action=action, target=target[:200],
                           detail=detail[:2000], origin=(request_origin.get() or "cli")[:80]))


def record_by(session: Session, principal: Principal, action: str, target: str = "", detail: str = "") -> None:
    record(session, action, tenant_id=principal.tenant_id, user_id=principal.user_id, target=target, detail=detail)


@dataclass(frozen=True, slots=True)
class Page:
    events: list[AuditEvent]
    total: int


def events(session: Session, *, principal: Principal, action: str | None = None, limit: int = 100,
           offset: int = 0, server: bool = False) -> Page:
    """The workspace's events, newest first; owners and admins only. ``server``: instead the events
    of no workspace (sign-ins that failed, accounts created, passwords reset, sign-up opened or
    closed), for server administrators only."""
    if server:
        user = session.get(User, principal.user_id)
        if user is None or not user.is_superuser:
            raise PermissionDeniedError("only a server administrator may read the server's audit log")
        query = select(AuditEvent).where(AuditEvent.tenant_id.is_(None))
    elif principal.role not in (Role.OWNER, Role.ADMIN):
        raise PermissionDeniedError("only an owner or an admin may read the audit log")
    else:
        query = select(AuditEvent).where(AuditEvent.tenant_id == principal.tenant_id)
    if action:
        query = query.where(AuditEvent.action == action)
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.scalars(query.order_by(AuditEvent.created_at.desc(), AuditEvent.id)
                           .limit(max(1, min(limit, MAX_PAGE))).offset(max(0, offset))).all()
    return Page(list(rows), int(total))
