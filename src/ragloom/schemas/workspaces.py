"""Workspaces, their members and invitations: the changes a request makes (switch, rename, a role, the
owner, an invitation and its acceptance) and how the API shows them."""

from __future__ import annotations

from pydantic import Field

from ragloom.schemas.base import Request, View
from ragloom.schemas.names import DisplayName


class WorkspaceView(View):
    id: str
    name: str
    role: str = Field(description="your role there: owner, admin or member")
    current: bool = Field(False, description="the workspace this session or key acts in")
    members_share: bool = Field(False, description="members may share the assistants they created by link")


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


class WorkspaceSwitch(Request):
    workspace_id: str = Field(min_length=1, max_length=64)


class WorkspaceName(Request):
    name: DisplayName = Field(min_length=1, max_length=128)


class WorkspaceUpdate(Request):
    """A workspace's changes (its owner or an admin); what is not given stays."""

    name: DisplayName | None = Field(None, min_length=1, max_length=128)
    members_share: bool | None = Field(None, description="whether members may share the assistants they "
                                                          "created by link (owners and admins always may)")


class RoleChange(Request):
    role: str = Field(description="admin or member")


class OwnerChange(Request):
    user_id: str = Field(min_length=1, max_length=64, description="the member who becomes the owner")


class InvitationCreate(Request):
    role: str = Field("member", description="admin or member (only the owner invites admins)")
    email: str = Field("", max_length=255, description="only this address may accept it; empty: whoever has the "
                       "token")
    expires_in_hours: float = Field(72.0, gt=0, le=720)


class InvitationAccept(Request):
    token: str = Field(min_length=1, max_length=200)
