"""Tenants, users, memberships and API keys."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from ragloom.context import Principal
from ragloom.db.models import ApiKey, Membership, Tenant, User, utcnow
from ragloom.errors import AuthenticationError, ConflictError, InvalidRequestError, NotFoundError
from ragloom.service.accounts import audit, passwords
from ragloom.states import KeyScope, Role

KEY_PREFIX = "ragloom-"
ROLES = tuple(Role)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class NewKey:
    """A freshly created API key: the plain key exists only here, once."""

    key: str
    tenant_id: str
    user_id: str
    id: str = ""
    scope: KeyScope = KeyScope.READ_WRITE
    expires_at: datetime | None = None


def create_tenant(session: Session, *, name: str, owner_email: str) -> tuple[Tenant, User]:
    """A tenant with its owner (the user is created when the email is new)."""
    user = session.scalar(select(User).where(User.email == owner_email))
    if user is None:
        user = User(email=owner_email, name=owner_email.split("@")[0])
        session.add(user)
    tenant = Tenant(name=name)
    session.add(tenant)
    session.flush()
    session.add(Membership(tenant_id=tenant.id, user_id=user.id, role=Role.OWNER))
    session.flush()
    return tenant, user


def add_member(session: Session, *, tenant_id: str, email: str, role: str = "member") -> User:
    if role not in ROLES:
        raise ConflictError(f"unknown role {role!r}; one of {ROLES}")
    user = session.scalar(select(User).where(User.email == email))
    if user is None:
        user = User(email=email, name=email.split("@")[0])
        session.add(user)
        session.flush()
    session.add(Membership(tenant_id=tenant_id, user_id=user.id, role=role))
    session.flush()
    audit.record(session, "member.added", tenant_id=tenant_id, user_id=None, target=f"user:{user.id}",
                 detail=f"{email} as {role}")
    return user


def create_api_key(session: Session, *, tenant_id: str, user_id: str, name: str = "",
                   scope: KeyScope = KeyScope.READ_WRITE, expires_at: datetime | None = None) -> NewKey:
    """Create a key for a member of the tenant; only its hash is stored. A ``read`` key may list,
    search and ask, not change anything; past ``expires_at`` the key is refused."""
    if expires_at is not None and aware(expires_at) <= utcnow():
        raise InvalidRequestError("expires_at: the expiry must be in the future")
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    row = ApiKey(tenant_id=tenant_id, user_id=user_id, key_hash=hash_key(key), prefix=key[:12], name=name,
                 scope=KeyScope(scope), expires_at=expires_at)
    session.add(row)
    session.flush()
    audit.record(session, "key.created", tenant_id=tenant_id, user_id=user_id, target=f"key:{row.id}",
                 detail=f"{row.prefix}... {row.scope}" + (f" {name!r}" if name else ""))
    return NewKey(key=key, tenant_id=tenant_id, user_id=user_id, id=row.id, scope=KeyScope(scope),
                  expires_at=expires_at)


def list_api_keys(session: Session, *, principal: Principal) -> list[ApiKey]:
    """The caller's keys in this workspace — every member's for an owner or admin; newest first."""
    query = select(ApiKey).where(ApiKey.tenant_id == principal.tenant_id)
    if principal.role == Role.MEMBER:
        query = query.where(ApiKey.user_id == principal.user_id)
    return list(session.scalars(query.order_by(ApiKey.created_at.desc(), ApiKey.id)))


def get_api_key(session: Session, *, principal: Principal, key_id: str) -> ApiKey:
    """A key the caller may see: their own, or any in the workspace for an owner or admin. Another
    workspace's key, or another member's for a member, is not found."""
    row = session.get(ApiKey, key_id)
    if row is None or row.tenant_id != principal.tenant_id or (
            principal.role == Role.MEMBER and row.user_id != principal.user_id):
        raise NotFoundError(f"API key {key_id!r} not found")
    return row


def revoke_api_key(session: Session, *, principal: Principal, key_id: str) -> ApiKey:
    """Revoke a key the caller may see (:func:`get_api_key`): refused from the next request on."""
    row = get_api_key(session, principal=principal, key_id=key_id)
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        audit.record_by(session, principal, "key.revoked", target=f"key:{row.id}", detail=f"{row.prefix}...")
    return row


def key_state(row: ApiKey, now: datetime | None = None) -> str:
    """``active``, ``revoked`` or ``expired``."""
    if row.revoked_at is not None:
        return "revoked"
    if row.expires_at is not None and aware(row.expires_at) <= (now or utcnow()):
        return "expired"
    return "active"


def _refused(session: Session, row: ApiKey | None, what: str) -> None:
    """A failed sign-in, logged in its own transaction (the caller's is rolled back by the refusal)."""
    engine = session.get_bind()
    with Session(engine) as own, own.begin():
        audit.record(own, "auth.failed", tenant_id=row.tenant_id if row else None,
                     user_id=row.user_id if row else None, target=f"key:{row.id}" if row else "",
                     detail=f"refused {what}")


LAST_USED_RESOLUTION = timedelta(minutes=1)
"""An API key's ``last_used_at`` is stamped at most this often (the list shows it to the minute)."""


def aware(dt: datetime) -> datetime:
    """``dt`` with a time zone: SQLite gives naive UTC datetimes back."""
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt  # SQLite gives naive UTC datetimes back


def authenticate(session: Session, key: str | None) -> Principal:
    """The principal an API key stands for; ``AuthenticationError`` when unknown, revoked or expired."""
    if not key:
        raise AuthenticationError("missing API key: send 'Authorization: Bearer <key>'")
    found = session.execute(  # the key and its user's membership in one round trip
        select(ApiKey, Membership.role)
        .outerjoin(Membership, (Membership.tenant_id == ApiKey.tenant_id) & (Membership.user_id == ApiKey.user_id))
        .where(ApiKey.key_hash == hash_key(key))
    ).first()
    row, role = (found[0], found[1]) if found is not None else (None, None)
    if row is None:
        _refused(session, None, "an unknown API key")
        raise AuthenticationError("invalid API key")
    state = key_state(row)
    if state != "active":
        _refused(session, row, f"a {state} API key {row.prefix}...")
        raise AuthenticationError(f"the API key {row.prefix}... {'was revoked' if state == 'revoked' else 'expired'}")
    if role is None:
        raise AuthenticationError("the API key's user is no longer a member of its tenant")
    now = utcnow()
    if row.last_used_at is None or now - aware(row.last_used_at) >= LAST_USED_RESOLUTION:
        row.last_used_at = now  # a write per request would serialise every search on the database's write lock
    return Principal(tenant_id=row.tenant_id, user_id=row.user_id, role=Role(role), scope=KeyScope(row.scope))


@dataclass(frozen=True, slots=True)
class Bootstrap:
    principal: Principal
    new_key: NewKey | None  # set only the first time
    password: str | None = None  # the admin's first password: set only the first time, shown once


DEFAULT_TENANT = "default"
ADMIN_EMAIL = "admin@localhost"


def bootstrap(session: Session) -> Bootstrap:
    """Create the default tenant, an admin user (a server administrator, with a random password to
    sign in with) and an API key if there is no tenant yet.

    Running it again reuses what exists and creates no new key.
    """
    tenant = session.scalar(select(Tenant).order_by(Tenant.created_at).limit(1))
    if tenant is not None:
        member = session.scalar(
            select(Membership).where(Membership.tenant_id == tenant.id, Membership.role == Role.OWNER).limit(1)
        )
        assert member is not None, "a tenant always has an owner"
        return Bootstrap(Principal(tenant.id, member.user_id, Role.OWNER), None)
    tenant, user = create_tenant(session, name=DEFAULT_TENANT, owner_email=ADMIN_EMAIL)
    user.is_superuser = True
    password = secrets.token_urlsafe(12)
    user.password_hash = passwords.hash_password(password)
    key = create_api_key(session, tenant_id=tenant.id, user_id=user.id, name="bootstrap")
    return Bootstrap(Principal(tenant.id, user.id, Role.OWNER), key, password)
