"""The audit log: who did what, from where."""

from __future__ import annotations

from pydantic import Field

from ragloom.schemas.base import View


class AuditEventView(View):
    id: str
    action: str = Field(description="auth.signed_in, auth.failed, account.created, password.changed, "
                        "password.reset, key.created, key.revoked, member.added, member.removed, member.left, "
                        "member.role_changed, invitation.created, invitation.revoked, workspace.created, "
                        "workspace.renamed, workspace.transferred, signup.opened, signup.closed, kb.deleted, "
                        "document.deleted, document.renamed")
    user_id: str | None = Field(description="who (None: an unknown caller)")
    target: str
    detail: str
    origin: str = Field(description="the client's address, or cli")
    created_at: str | None


class AuditLog(View):
    events: list[AuditEventView]
    total: int
