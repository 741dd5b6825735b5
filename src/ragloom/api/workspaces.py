"""/workspaces: the caller's workspaces — create, rename, leave, transfer ownership; /members: the
current workspace's people and their roles; /invitations: invite by a one-time token, accept it.

A web session acts in any of its user's workspaces on the ``/workspaces/{id}`` routes; an API key
belongs to the workspace it was made in and acts there only: it lists and changes no other workspace
of its user (another one is "not found"), and creates or joins none (403: sign in for that)."""

from __future__ import annotations

from fastapi import APIRouter
from sqlalchemy.orm import Session

from ragloom.api.deps import CallerDep, ContextDep, PrincipalDep
from ragloom.api.responses import CALLER_ERRORS
from ragloom.context import Caller, Principal
from ragloom.schemas.workspaces import (
    InvitationAccept,
    InvitationCreate,
    InvitationList,
    InvitationView,
    MemberList,
    MemberView,
    NewInvitation,
    OwnerChange,
    RoleChange,
    WorkspaceList,
    WorkspaceName,
    WorkspaceUpdate,
    WorkspaceView,
)
from ragloom.service.accounts import signin, workspaces
from ragloom.service.accounts.views import invitation_view
from ragloom.states import Role

router = APIRouter(tags=["workspaces"], responses=CALLER_ERRORS)


def _in(caller: Caller, session: Session, workspace_id: str) -> Principal:
    """The caller acting in ``workspace_id``: any of a session's workspaces, only its own for a key."""
    return workspaces.acting_in(session, caller=caller, tenant_id=workspace_id)


@router.get("/workspaces")
def list_workspaces(ctx: ContextDep, caller: CallerDep) -> WorkspaceList:
    """Every workspace you belong to, with your role; ``current`` is where this session or key acts. An
    API key sees only its own workspace."""
    with ctx.db.session() as s:
        rows = [WorkspaceView(id=t.id, name=t.name, role=r, current=t.id == caller.tenant_id,
                              members_share=t.members_share)
                for t, r in workspaces.visible_to(s, caller)]
        return WorkspaceList(workspaces=rows, total=len(rows))


@router.post("/workspaces", status_code=201)
def create_workspace(body: WorkspaceName, ctx: ContextDep, caller: CallerDep) -> WorkspaceView:
    """A new workspace you own (switch to it with POST /api/v1/auth/workspace, or create a key in it). Signed
    in only: an API key acts in its own workspace."""
    workspaces.require_session(caller, "create a workspace")
    with ctx.db.session() as s:
        t = workspaces.create(s, user_id=caller.user_id, name=body.name)
        return WorkspaceView(id=t.id, name=t.name, role=Role.OWNER, current=False)


@router.patch("/workspaces/{workspace_id}")
def rename_workspace(workspace_id: str, body: WorkspaceUpdate, ctx: ContextDep, caller: CallerDep) -> WorkspaceView:
    """Rename a workspace, or let its members share their assistants by link (its owner or an admin)."""
    with ctx.db.session() as s:
        principal = _in(caller, s, workspace_id)
        t = workspaces.change(s, principal=principal, name=body.name, members_share=body.members_share)
        return WorkspaceView(id=t.id, name=t.name, role=principal.role, current=t.id == caller.tenant_id,
                             members_share=t.members_share)


@router.post("/workspaces/{workspace_id}/leave", status_code=204)
def leave_workspace(workspace_id: str, ctx: ContextDep, caller: CallerDep) -> None:
    """Leave a workspace (its owner transfers ownership first); your keys there are revoked."""
    with ctx.db.session() as s:
        workspaces.leave(s, principal=_in(caller, s, workspace_id))


@router.post("/workspaces/{workspace_id}/transfer", status_code=204)
def transfer_workspace(workspace_id: str, body: OwnerChange, ctx: ContextDep, caller: CallerDep) -> None:
    """Make another member the owner (the owner only); you stay as an admin."""
    with ctx.db.session() as s:
        workspaces.transfer(s, principal=_in(caller, s, workspace_id), user_id=body.user_id)


@router.get("/members")
def list_members(ctx: ContextDep, principal: PrincipalDep) -> MemberList:
    """The current workspace's members and their roles."""
    with ctx.db.session() as s:
        rows = workspaces.members(s, principal=principal)
        return MemberList(members=[MemberView(user_id=u.id, email=u.email, name=u.name, role=r) for u, r in rows],
                          total=len(rows))


@router.patch("/members/{user_id}")
def change_role(user_id: str, body: RoleChange, ctx: ContextDep, principal: PrincipalDep) -> MemberView:
    """Make a member an admin or back (the owner, or an admin for members)."""
    with ctx.db.session() as s:
        row = workspaces.set_role(s, principal=principal, user_id=user_id, role=body.role)
        u = signin.user(s, row.user_id)
        return MemberView(user_id=u.id, email=u.email, name=u.name, role=row.role)


@router.delete("/members/{user_id}", status_code=204)
def remove_member(user_id: str, ctx: ContextDep, principal: PrincipalDep) -> None:
    """Remove a member (their keys in this workspace are revoked); your own id: leave."""
    with ctx.db.session() as s:
        workspaces.remove(s, principal=principal, user_id=user_id)


@router.get("/invitations")
def list_invitations(ctx: ContextDep, principal: PrincipalDep) -> InvitationList:
    with ctx.db.session() as s:
        rows = workspaces.invitations(s, principal=principal)
        return InvitationList(invitations=[invitation_view(r, workspaces.invitation_state(r)) for r in rows],
                              total=len(rows))


@router.post("/invitations", status_code=201)
def invite(body: InvitationCreate, ctx: ContextDep, principal: PrincipalDep) -> NewInvitation:
    """A one-time invitation into the current workspace; its token is in this response only."""
    with ctx.db.session() as s:
        new = workspaces.invite(s, principal=principal, role=body.role, email=body.email,
                                hours=body.expires_in_hours)
        view = invitation_view(new.invitation, "pending")
        return NewInvitation(**view.model_dump(), token=new.token)


@router.delete("/invitations/{invitation_id}")
def revoke_invitation(invitation_id: str, ctx: ContextDep, principal: PrincipalDep) -> InvitationView:
    with ctx.db.session() as s:
        row = workspaces.revoke_invitation(s, principal=principal, invitation_id=invitation_id)
        return invitation_view(row, workspaces.invitation_state(row))


@router.post("/invitations/accept")
def accept_invitation(body: InvitationAccept, ctx: ContextDep, caller: CallerDep) -> WorkspaceView:
    """Join the workspace of an invitation with its role (once; before it expires). Signed in only: an API
    key acts in its own workspace."""
    workspaces.require_session(caller, "accept an invitation")
    with ctx.db.session() as s:
        t = workspaces.accept(s, user_id=caller.user_id, token=body.token)
        role = workspaces.membership(s, user_id=caller.user_id, tenant_id=t.id).role
        return WorkspaceView(id=t.id, name=t.name, role=role, current=False)
