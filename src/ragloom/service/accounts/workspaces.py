"""Workspaces (tenants) and the people in them: create, rename, members and their roles,
invitations, leaving, transferring ownership.

Who may do what (the README's roles table says the same):

- any member: list the workspace's members, leave it (an owner must hand ownership over first);
- an admin: also invite, remove members, change a member's role between member and admin, rename
  the workspace; never act on the owner, never make an owner;
- the owner: all of that on admins too, and transfer ownership to another member (staying admin).

A workspace someone is not in is "not found" to them, never "forbidden". An API key belongs to the
workspace it was made in: every other workspace of its user is "not found" to it too
(:func:`acting_in`, :func:`visible_to`), and it neither creates a workspace nor joins one
(:func:`require_session`). A web session acts in any of its user's workspaces where a route names one.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from ragloom.context import Caller, Principal
from ragloom.db.models import ApiKey, Invitation, Membership, Tenant, User, utcnow
from ragloom.errors import ConflictError, InvalidRequestError, NotFoundError, PermissionDeniedError
from ragloom.schemas.names import clean_name
from ragloom.service.accounts import audit
from ragloom.service.accounts.identity import aware, hash_key
from ragloom.service.accounts.signin import normalize_email
from ragloom.states import Role

INVITE_PREFIX = "ragloom-invite-"
MAX_INVITE_HOURS = 24 * 30


def _name(name: str) -> str:
    value = clean_name(name)
    if not value or len(value) > 128:
        raise InvalidRequestError("name: 1 to 128 visible characters")
    return value


def require_manager(principal: Principal, action: str) -> None:
    if principal.role not in (Role.OWNER, Role.ADMIN):
        raise PermissionDeniedError(f"only the workspace's owner or an admin may {action}")


# -- workspaces --------------------------------------------------------------------------------------

def of_user(session: Session, user_id: str) -> list[tuple[Tenant, Role]]:
    rows = session.execute(select(Tenant, Membership.role).join(Membership, Membership.tenant_id == Tenant.id)
                           .where(Membership.user_id == user_id).order_by(Tenant.created_at, Tenant.id)).all()
    return [(t, Role(r)) for t, r in rows]


def bound_to_workspace(caller: Caller) -> bool:
    """Whether the caller acts in one workspace only: an API key (or the local CLI's principal), not a
    web session."""
    return caller.session_id is None


def visible_to(session: Session, caller: Caller) -> list[tuple[Tenant, Role]]:
    """The workspaces a caller may see: all of a session's user's, only its own for an API key."""
    rows = of_user(session, caller.user_id)
    return [(t, r) for t, r in rows if t.id == caller.tenant_id] if bound_to_workspace(caller) else rows


def acting_in(session: Session, *, caller: Caller, tenant_id: str) -> Principal:
    """The caller acting in workspace ``tenant_id`` with their role there; ``NotFoundError`` when they are
    not a member, or when the caller is an API key of another workspace."""
    if bound_to_workspace(caller) and tenant_id != caller.tenant_id:
        raise NotFoundError(f"workspace {tenant_id!r} not found (an API key acts only in its own workspace)")
    row = membership(session, user_id=caller.user_id, tenant_id=tenant_id)
    return Principal(tenant_id, caller.user_id, Role(row.role), caller.scope)


def require_session(caller: Caller, action: str) -> None:
    """``PermissionDeniedError`` unless the caller is a web session: an API key does not ``action``."""
    if bound_to_workspace(caller):
        raise PermissionDeniedError(f"an API key acts only in its own workspace: sign in to {action}")


def membership(session: Session, *, user_id: str, tenant_id: str) -> Membership:
    """The user's membership of a workspace; ``NotFoundError`` when they are not in it."""
    row = session.scalar(select(Membership).where(Membership.tenant_id == tenant_id, Membership.user_id == user_id))
    if row is None:
        raise NotFoundError(f"workspace {tenant_id!r} not found")
    return row


def create(session: Session, *, user_id: str, name: str) -> Tenant:
    tenant = Tenant(name=_name(name))
    session.add(tenant)
    session.flush()
    session.add(Membership(tenant_id=tenant.id, user_id=user_id, role=Role.OWNER))
    audit.record(session, "workspace.created", tenant_id=tenant.id, user_id=user_id, target=f"workspace:{tenant.id}",
                 detail=tenant.name)
    session.flush()
    return tenant


def change(session: Session, *, principal: Principal, name: str | None = None,
           members_share: bool | None = None) -> Tenant:
    """Rename the principal's workspace, or say whether its members may share their assistants by link
    (its owner or an admin)."""
    require_manager(principal, "change it")
    tenant = session.get(Tenant, principal.tenant_id)
    assert tenant is not None
    if name is not None:
        old, tenant.name = tenant.name, _name(name)
        audit.record_by(session, principal, "workspace.renamed", target=f"workspace:{principal.tenant_id}",
                        detail=f"{old!r} -> {tenant.name!r}")
    if members_share is not None and members_share != tenant.members_share:
        tenant.members_share = members_share
        audit.record_by(session, principal, "workspace.members_share", target=f"workspace:{principal.tenant_id}",
                        detail=f"members may share assistants by link: {members_share}")
    return tenant


# -- members -------------------------------------------------------------------------------------------

def members(session: Session, *, principal: Principal) -> list[tuple[User, Role]]:
    rows = session.execute(select(User, Membership.role).join(Membership, Membership.user_id == User.id)
                           .where(Membership.tenant_id == principal.tenant_id).order_by(User.email)).all()
    return [(u, Role(r)) for u, r in rows]


def _member(session: Session, principal: Principal, user_id: str) -> Membership:
    row = session.scalar(select(Membership).where(Membership.tenant_id == principal.tenant_id,
                                                  Membership.user_id == user_id))
    if row is None:
        raise NotFoundError(f"member {user_id!r} not found")
    return row


def _may_manage(principal: Principal, target: Membership, action: str) -> None:
    require_manager(principal, action)
    if target.role == Role.OWNER:
        raise PermissionDeniedError(f"nobody may {action} the owner: the owner transfers ownership first")
    if target.role == Role.ADMIN and principal.role != Role.OWNER:
        raise PermissionDeniedError(f"only the owner may {action} an admin")


def set_role(session: Session, *, principal: Principal, user_id: str, role: str) -> Membership:
    if role not in (Role.ADMIN, Role.MEMBER):
        raise InvalidRequestError("role: 'admin' or 'member' (ownership is transferred, not set)")
    target = _member(session, principal, user_id)
    _may_manage(principal, target, "change the role of")
    if target.role != role:
        old, target.role = target.role, role
        audit.record_by(session, principal, "member.role_changed", target=f"user:{user_id}",
                        detail=f"{old} -> {role}")
    return target


def _drop(session: Session, tenant_id: str, user_id: str) -> None:
    """End a membership: the user's API keys of the workspace are revoked with it."""
    session.execute(update(ApiKey).where(ApiKey.tenant_id == tenant_id, ApiKey.user_id == user_id,
                                         ApiKey.revoked_at.is_(None)).values(revoked_at=utcnow()))
    session.execute(delete(Membership).where(Membership.tenant_id == tenant_id, Membership.user_id == user_id))


def remove(session: Session, *, principal: Principal, user_id: str) -> None:
    """Remove a member (an owner or admin), or leave (anyone but the owner, on themselves)."""
    target = _member(session, principal, user_id)
    if user_id == principal.user_id:
        leave(session, principal=principal)
        return
    _may_manage(principal, target, "remove")
    _drop(session, principal.tenant_id, user_id)
    audit.record_by(session, principal, "member.removed", target=f"user:{user_id}")


def leave(session: Session, *, principal: Principal) -> None:
    if principal.role == Role.OWNER:
        raise ConflictError("the owner cannot leave: transfer ownership to another member first")
    _drop(session, principal.tenant_id, principal.user_id)
    audit.record_by(session, principal, "member.left", target=f"user:{principal.user_id}")


def transfer(session: Session, *, principal: Principal, user_id: str) -> None:
    """Make another member the owner; the old owner stays as an admin."""
    if principal.role != Role.OWNER:
        raise PermissionDeniedError("only the owner may transfer ownership")
    target = _member(session, principal, user_id)
    if user_id == principal.user_id:
        raise InvalidRequestError("user_id: you own this workspace already")
    mine = _member(session, principal, principal.user_id)
    mine.role, target.role = Role.ADMIN, Role.OWNER
    audit.record_by(session, principal, "workspace.transferred", target=f"user:{user_id}")


# -- invitations ---------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class NewInvitation:
    """An invitation just made: its token exists only here."""

    invitation: Invitation
    token: str


def invite(session: Session, *, principal: Principal, role: str = Role.MEMBER, email: str = "",
           hours: float = 72.0) -> NewInvitation:
    """A one-time token that makes whoever accepts it (the given e-mail address only, when set) a
    member with ``role``, until it expires."""
    require_manager(principal, "invite people")
    if role not in (Role.ADMIN, Role.MEMBER):
        raise InvalidRequestError("role: 'admin' or 'member'")
    if role == Role.ADMIN and principal.role != Role.OWNER:
        raise PermissionDeniedError("only the owner may invite an admin")
    if not 0 < hours <= MAX_INVITE_HOURS:
        raise InvalidRequestError(f"expires_in_hours: more than 0, at most {MAX_INVITE_HOURS}")
    token = INVITE_PREFIX + secrets.token_urlsafe(24)
    row = Invitation(tenant_id=principal.tenant_id, token_hash=hash_key(token), role=role,
                     email=normalize_email(email) if email.strip() else "", created_by=principal.user_id,
                     expires_at=utcnow() + timedelta(hours=hours))
    session.add(row)
    session.flush()
    audit.record_by(session, principal, "invitation.created", target=f"invitation:{row.id}",
                    detail=f"as {role}" + (f" for {row.email}" if row.email else ""))
    return NewInvitation(row, token)


def invitation_state(row: Invitation) -> str:
    if row.accepted_at is not None:
        return "accepted"
    if row.revoked_at is not None:
        return "revoked"
    if aware(row.expires_at) <= utcnow():
        return "expired"
    return "pending"


def invitations(session: Session, *, principal: Principal) -> list[Invitation]:
    require_manager(principal, "see invitations")
    return list(session.scalars(select(Invitation).where(Invitation.tenant_id == principal.tenant_id)
                                .order_by(Invitation.created_at.desc(), Invitation.id)))


def revoke_invitation(session: Session, *, principal: Principal, invitation_id: str) -> Invitation:
    row = session.get(Invitation, invitation_id)
    if row is None or row.tenant_id != principal.tenant_id:
        raise NotFoundError(f"invitation {invitation_id!r} not found")
    require_manager(principal, "revoke invitations")
    if invitation_state(row) == "pending":
        row.revoked_at = utcnow()
        audit.record_by(session, principal, "invitation.revoked", target=f"invitation:{row.id}")
    return row


def check_invitation(session: Session, token: str, email: str | None = None) -> Invitation:
    """The pending invitation of a token; a precise refusal otherwise."""
    row = session.scalar(select(Invitation).where(Invitation.token_hash == hash_key(token.strip())))
    if row is None:
        raise NotFoundError("invitation not found: check the token")
    state = invitation_state(row)
    if state != "pending":
        raise ConflictError(f"this invitation was {state}" if state != "expired" else "this invitation expired")
    if row.email and email is not None and row.email != email:
        raise PermissionDeniedError("this invitation is for another e-mail address")
    return row


def accept(session: Session, *, user_id: str, token: str) -> Tenant:
    """Join the invitation's workspace with its role; the invitation is used up."""
    user = session.get(User, user_id)
    assert user is not None
    row = check_invitation(session, token, user.email)
    if session.scalar(select(Membership.id).where(Membership.tenant_id == row.tenant_id,
                                                  Membership.user_id == user_id)) is not None:
        raise ConflictError("you are a member of this workspace already")
    session.add(Membership(tenant_id=row.tenant_id, user_id=user_id, role=row.role))
    row.accepted_at, row.accepted_by = utcnow(), user_id
    audit.record(session, "member.added", tenant_id=row.tenant_id, user_id=user_id, target=f"user:{user_id}",
                 detail=f"{user.email} as {row.role}, by invitation {row.id}")
    session.flush()
    tenant = session.get(Tenant, row.tenant_id)
    assert tenant is not None
    return tenant
