"""/groups: the workspace's groups of people by e-mail, which documents synced with source permissions
name as readers (``group:<name>``). Every member lists them; the owner and admins change them."""

from __future__ import annotations

from fastapi import APIRouter, Response

from ragloom.api.deps import ContextDep, PrincipalDep
from ragloom.api.responses import CALLER_ERRORS, error_responses
from ragloom.schemas.groups import Group, GroupCreate, GroupList, GroupMembers, GroupUpdate
from ragloom.service.accounts import groups

router = APIRouter(prefix="/groups", tags=["groups"], responses=CALLER_ERRORS)


@router.get("")
def list_groups(ctx: ContextDep, principal: PrincipalDep) -> GroupList:
    """The workspace's groups, by name, with their members."""
    with ctx.db.session() as s:
        rows = [groups.view(s, g) for g in groups.list_groups(s, principal=principal)]
        return GroupList(groups=rows, total=len(rows))


@router.post("", status_code=201, responses=error_responses(409))
def create_group(body: GroupCreate, ctx: ContextDep, principal: PrincipalDep) -> Group:
    """A new group (the owner or an admin)."""
    with ctx.db.session() as s:
        return groups.view(s, groups.create(s, principal=principal, spec=body))


@router.get("/{group_id}")
def get_group(group_id: str, ctx: ContextDep, principal: PrincipalDep) -> Group:
    """A group by id or name."""
    with ctx.db.session() as s:
        return groups.view(s, groups.get(s, principal=principal, group_id=group_id))


@router.patch("/{group_id}", responses=error_responses(409))
def update_group(group_id: str, body: GroupUpdate, ctx: ContextDep, principal: PrincipalDep) -> Group:
    """Rename a group, describe it, or replace its members."""
    with ctx.db.session() as s:
        return groups.view(s, groups.update(s, principal=principal, group_id=group_id, spec=body))


@router.post("/{group_id}/members")
def add_members(group_id: str, body: GroupMembers, ctx: ContextDep, principal: PrincipalDep) -> Group:
    """Add people to a group by e-mail."""
    with ctx.db.session() as s:
        return groups.view(s, groups.add_members(s, principal=principal, group_id=group_id, given=body.emails))


@router.post("/{group_id}/members/remove")
def remove_members(group_id: str, body: GroupMembers, ctx: ContextDep, principal: PrincipalDep) -> Group:
    """Take people out of a group by e-mail."""
    with ctx.db.session() as s:
        return groups.view(s, groups.remove_members(s, principal=principal, group_id=group_id, given=body.emails))


@router.delete("/{group_id}", status_code=204, response_class=Response)
def delete_group(group_id: str, ctx: ContextDep, principal: PrincipalDep) -> Response:
    """Delete a group: documents that name it are read by their other readers only."""
    with ctx.db.session() as s:
        groups.delete_group(s, principal=principal, group_id=group_id)
    return Response(status_code=204)
