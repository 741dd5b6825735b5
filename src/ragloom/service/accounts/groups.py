"""A workspace's groups of people, by e-mail: what documents synced with source permissions name as
readers (``group:<name>``, :mod:`ragloom.service.accounts.access`).

Every member of the workspace sees its groups (they decide who reads what); only the owner and the
admins make, change and delete them. Members are e-mail addresses, lower-cased: a source may name
people who have no account yet, and they read as members once they sign up with that address.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ragloom.context import Principal
from ragloom.db.models import GroupMember, MemberGroup
from ragloom.errors import ConflictError, InvalidRequestError, NotFoundError
from ragloom.schemas.base import iso_utc
from ragloom.schemas.groups import Group, GroupCreate, GroupUpdate
from ragloom.service.accounts import audit
from ragloom.service.accounts.workspaces import require_manager


def _name(name: str) -> str:
    value = " ".join(name.split())
    if not value or len(value) > 200:
        raise InvalidRequestError("name: 1 to 200 visible characters")
    return value


def emails(given: Iterable[str]) -> list[str]:
    """Members as stored: lower-cased e-mails, each once, sorted; ``InvalidRequestError`` naming one that is
    not an address."""
    out = set()
    for raw in given:
        email = raw.strip().lower()
        if "@" not in email or " " in email or len(email) > 320 or email.startswith("@") or email.endswith("@"):
            raise InvalidRequestError(f"{raw!r} is not an e-mail address")
        out.add(email)
    return sorted(out)


def members_of(session: Session, group_id: str) -> list[str]:
    return list(session.scalars(select(GroupMember.email).where(GroupMember.group_id == group_id)
                                .order_by(GroupMember.email)))


def view(session: Session, group: MemberGroup) -> Group:
    return Group(id=group.id, name=group.name, description=group.description, members=members_of(session, group.id),
                 source_id=group.source_id, created_at=iso_utc(group.created_at) or "")


def list_groups(session: Session, *, principal: Principal) -> list[MemberGroup]:
    return list(session.scalars(select(MemberGroup).where(MemberGroup.tenant_id == principal.tenant_id)
                                .order_by(MemberGroup.name)))


def get(session: Session, *, principal: Principal, group_id: str) -> MemberGroup:
    """A group of the caller's workspace by id or name; another workspace's is 'not found'."""
    group = session.scalar(select(MemberGroup).where(MemberGroup.tenant_id == principal.tenant_id,
                                                     (MemberGroup.id == group_id) | (MemberGroup.name == group_id)))
    if group is None:
        raise NotFoundError(f"group {group_id!r} not found")
    return group


def _free(session: Session, principal: Principal, name: str, but: str | None = None) -> None:
    holder = session.scalar(select(MemberGroup.id).where(MemberGroup.tenant_id == principal.tenant_id,
                                                         MemberGroup.name == name))
    if holder is not None and holder != but:
        raise ConflictError(f"this workspace already has a group named {name!r}")


def create(session: Session, *, principal: Principal, spec: GroupCreate) -> MemberGroup:
    require_manager(principal, "make a group")
    name = _name(spec.name)
    _free(session, principal, name)
    group = MemberGroup(tenant_id=principal.tenant_id, name=name, description=spec.description)
    session.add(group)
    session.flush()
    set_members(session, group, emails(spec.members))
    audit.record_by(session, principal, "group.created", target=f"group:{group.id}",
                    detail=f"{name}, {len(spec.members)} member(s)")
    return group


def update(session: Session, *, principal: Principal, group_id: str, spec: GroupUpdate) -> MemberGroup:
    require_manager(principal, "change a group")
    group = get(session, principal=principal, group_id=group_id)
    if spec.name is not None:
        name = _name(spec.name)
        _free(session, principal, name, but=group.id)
        group.name = name
    if spec.description is not None:
        group.description = spec.description
    if spec.members is not None:
        set_members(session, group, emails(spec.members))
    audit.record_by(session, principal, "group.changed", target=f"group:{group.id}",
                    detail="changed: " + ", ".join(sorted(spec.model_fields_set)))
    session.flush()
    return group


def add_members(session: Session, *, principal: Principal, group_id: str, given: Iterable[str]) -> MemberGroup:
    require_manager(principal, "change a group")
    group = get(session, principal=principal, group_id=group_id)
    set_members(session, group, sorted({*members_of(session, group.id), *emails(given)}))
    audit.record_by(session, principal, "group.changed", target=f"group:{group.id}", detail="members added")
    return group


def remove_members(session: Session, *, principal: Principal, group_id: str, given: Iterable[str]) -> MemberGroup:
    require_manager(principal, "change a group")
    group = get(session, principal=principal, group_id=group_id)
    gone = set(emails(given))
    set_members(session, group, [m for m in members_of(session, group.id) if m not in gone])
    audit.record_by(session, principal, "group.changed", target=f"group:{group.id}", detail="members removed")
    return group


def delete_group(session: Session, *, principal: Principal, group_id: str) -> None:
    require_manager(principal, "delete a group")
    group = get(session, principal=principal, group_id=group_id)
    audit.record_by(session, principal, "group.deleted", target=f"group:{group.id}", detail=group.name)
    session.delete(group)


def set_members(session: Session, group: MemberGroup, members: list[str]) -> None:
    """Make ``members`` (lower-cased e-mails, as :func:`emails` gives them) the group's members."""
    session.execute(delete(GroupMember).where(GroupMember.group_id == group.id))
    session.add_all(GroupMember(group_id=group.id, email=m) for m in members)
    session.flush()
