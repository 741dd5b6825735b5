"""Workspaces, their members and invitations."""

from __future__ import annotations

from pydantic import Field

from ragloom.schemas.base import View


class WorkspaceView(View):
    id: str
    name: str
    role: str = Field(description="your role there: owner, admin or member")
    current: bool = Field(False, description="the workspace this session or key acts in")


class WorkspaceList(View):
    workspaces: list[WorkspaceView]
    total: int


class MemberView(View):
    user_id: str
    email: str
    name: str
    role: str


class MemberList(View):
    members: list[MemberView]
    total: int


class InvitationView(View):
    id: str
    role: str
    email: str = Field(description="only this address may accept it; empty: whoever holds the token")
    state: str = Field(description="pending, accepted, revoked or expired")
    created_by: str | None
    created_at: str | None
    expires_at: str | None
    accepted_by: str | None


class InvitationList(View):
    invitations: list[InvitationView]
    total: int


class NewInvitation(InvitationView):
    token: str = Field(description="the one-time token: shown this once; the invited person accepts it with "
                       "POST /api/v1/invitations/accept, `ragloom workspaces join`, or signs up with it")
