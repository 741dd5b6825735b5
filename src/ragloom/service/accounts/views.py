"""The builders of the account resources ragloom shows — API keys, the audit log, people and invitations —
from stored rows (the conventions of :mod:`ragloom.service.views`)."""

from __future__ import annotations

from collections.abc import Sequence

from ragloom.db import models as db
from ragloom.schemas.accounts import UserView
from ragloom.schemas.audit import AuditEventView, AuditLog
from ragloom.schemas.base import iso_utc
from ragloom.schemas.keys import ApiKeyInfo
from ragloom.schemas.workspaces import InvitationView


def key_view(row: db.ApiKey, state: str) -> ApiKeyInfo:
    return ApiKeyInfo(id=row.id, name=row.name, prefix=row.prefix, scope=row.scope, state=state, user_id=row.user_id,
                      created_at=iso_utc(row.created_at), last_used_at=iso_utc(row.last_used_at),
                      expires_at=iso_utc(row.expires_at), revoked_at=iso_utc(row.revoked_at))


def audit_view(rows: Sequence[db.AuditEvent], total: int) -> AuditLog:
    return AuditLog(events=[AuditEventView(id=r.id, action=r.action, user_id=r.user_id, target=r.target,
                                           detail=r.detail, origin=r.origin, created_at=iso_utc(r.created_at))
                            for r in rows], total=total)


def user_view(row: db.User) -> UserView:
    return UserView(id=row.id, email=row.email, name=row.name, is_admin=row.is_superuser)


def invitation_view(row: db.Invitation, state: str) -> InvitationView:
    return InvitationView(id=row.id, role=row.role, email=row.email, state=state, created_by=row.created_by,
                          created_at=iso_utc(row.created_at), expires_at=iso_utc(row.expires_at),
                          accepted_by=row.accepted_by)
