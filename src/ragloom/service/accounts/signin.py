"""Accounts for people: sign-up, sign-in with a password, web sessions, password change and reset.

A web session is a random token in an HttpOnly cookie; only its SHA-256 is stored, with the CSRF
token the session's state-changing requests must echo (``X-CSRF-Token``) and the workspace it acts
in. Failed sign-ins are audit events (``auth.failed``); they are also what throttles: more than
``settings.login_attempts`` for one e-mail address in :data:`THROTTLE_WINDOW` (or four times as
many from one client address) and sign-in answers 429 until the oldest falls out of the window.

Sign-up signs the new account in at once, so a sign-up with an address that has an account cannot
look like a success: it is refused (409, "sign in instead") — and counted as a failed sign-in of
that address and of the caller's address, under the same throttle, so that trying addresses to learn
which have accounts is as slow as guessing passwords.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from ragloom.config import Settings
from ragloom.context import Caller, request_origin
from ragloom.db.models import AuditEvent, LoginSession, Membership, SiteSetting, Tenant, User, utcnow
from ragloom.errors import (
    AuthenticationError,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitedError,
)
from ragloom.schemas.names import clean_name
from ragloom.service.accounts import audit, passwords
from ragloom.service.accounts.identity import aware, hash_key
from ragloom.states import Role

THROTTLE_WINDOW = timedelta(minutes=15)
SIGNUP = "signup"  # site setting: "open" (the default) or "closed"
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
_TOUCH_EVERY = timedelta(minutes=1)  # a session's expiry slides forward at most this often


def normalize_email(email: str) -> str:
    value = email.strip().lower()
    if not _EMAIL.match(value) or len(value) > 255 or value != clean_name(value):
        raise InvalidRequestError("email: not an e-mail address")
    return value


# -- sign-up, open or closed ---------------------------------------------------------------------

def signup_open(session: Session) -> bool:
    row = session.get(SiteSetting, SIGNUP)
    return row is None or row.value != "closed"


def set_signup(session: Session, *, open_: bool, user_id: str | None = None) -> None:
    row = session.get(SiteSetting, SIGNUP)
    if row is None:
        row = SiteSetting(key=SIGNUP)
        session.add(row)
    row.value = "open" if open_ else "closed"
    audit.record(session, "signup.opened" if open_ else "signup.closed", tenant_id=None, user_id=user_id)


def sign_up(session: Session, settings: Settings, *, email: str, password: str, name: str = "",
            invited: bool = False) -> tuple[User, Tenant]:
    """A new account with a workspace of its own (owner). Refused when sign-up is closed, unless
    the person holds an invitation (``invited``: the caller accepts it next); refused (409) for an
    address that has an account, which counts as a failed sign-in (see the module's docstring)."""
    email = normalize_email(email)
    if not invited and not signup_open(session):
        raise PermissionDeniedError("sign-up is closed on this server: ask an administrator for an invitation")
    _throttle(session, settings, email)
    hashed = passwords.hash_password(password)
    existing = session.scalar(select(User).where(User.email == email))
    if existing is not None:
        _failed(session, email, existing, detail="sign-up with the address of an account")
        raise ConflictError("an account with this e-mail address exists: sign in, or ask an administrator to "
                            "reset its password")
    user = User(email=email, name=(clean_name(name) or email.split("@")[0])[:128], password_hash=hashed)
    session.add(user)
    session.flush()
    tenant = Tenant(name=f"{user.name}'s workspace"[:128])
    session.add(tenant)
    session.flush()
    session.add(Membership(tenant_id=tenant.id, user_id=user.id, role=Role.OWNER))
    audit.record(session, "account.created", tenant_id=tenant.id, user_id=user.id, target=f"user:{user.id}",
                 detail=email)
    session.flush()
    return user, tenant


def user(session: Session, user_id: str) -> User:
    row = session.get(User, user_id)
    if row is None:
        raise AuthenticationError("this account no longer exists")
    return row


def users(session: Session) -> list[User]:
    return list(session.scalars(select(User).order_by(User.email)))


def require_server_admin(session: Session, user_id: str, action: str) -> None:
    if not user(session, user_id).is_superuser:
        raise PermissionDeniedError(f"only a server administrator may {action}")


# -- sign-in and throttling ------------------------------------------------------------------------

def _failures(session: Session, since: datetime, *, email: str | None = None, origin: str | None = None
              ) -> tuple[int, datetime | None]:
    query = select(func.count(), func.min(AuditEvent.created_at)).where(
        AuditEvent.action == "auth.failed", AuditEvent.created_at >= since)
    if email is not None:
        query = query.where(AuditEvent.target == f"email:{email}")
    if origin is not None:
        query = query.where(AuditEvent.origin == origin, AuditEvent.target.like("email:%"))
    count, oldest = session.execute(query).one()
    return int(count or 0), oldest


def _throttle(session: Session, settings: Settings, email: str) -> None:
    now = utcnow()
    since = now - THROTTLE_WINDOW
    origin = request_origin.get() or "cli"
    for count, oldest, limit, who in (
        (*_failures(session, since, email=email), settings.login_attempts, "this e-mail address"),
        (*_failures(session, since, origin=origin), settings.login_attempts * 4, "your address"),
    ):
        if count >= limit:
            wait = (aware(oldest) + THROTTLE_WINDOW - now).total_seconds() if oldest else THROTTLE_WINDOW.seconds
            raise RateLimitedError(f"too many failed sign-ins for {who}: try again in {max(1, int(wait))} s",
                                   retry_after=max(1.0, wait))


def _failed(session: Session, email: str, user: User | None, detail: str | None = None) -> None:
    """Log a failed sign-in in its own transaction (the caller's is rolled back by the refusal)."""
    with Session(session.get_bind()) as own, own.begin():
        audit.record(own, "auth.failed", tenant_id=None, user_id=user.id if user else None,
                     target=f"email:{email}",
                     detail=detail or ("wrong password" if user else "unknown e-mail address"))


@dataclass(frozen=True, slots=True)
class NewSession:
    """A web session just opened: the cookie's token exists only here."""

    id: str
    token: str
    csrf_token: str
    user: User
    tenant_id: str | None
    expires_at: datetime


def default_workspace(session: Session, user_id: str) -> str | None:
    """The workspace a new session starts in: one the user owns, else any they belong to."""
    rows = session.execute(select(Membership.tenant_id, Membership.role).join(Tenant)
                           .where(Membership.user_id == user_id).order_by(Tenant.created_at)).all()
    owned = [t for t, role in rows if role == Role.OWNER]
    choices = owned or [t for t, _ in rows]
    return choices[0] if choices else None


def open_session(session: Session, settings: Settings, user: User, tenant_id: str | None = None) -> NewSession:
    token = secrets.token_urlsafe(32)
    csrf = secrets.token_urlsafe(24)
    expires = utcnow() + timedelta(hours=settings.session_hours)
    tenant_id = tenant_id or default_workspace(session, user.id)
    row = LoginSession(token_hash=hash_key(token), user_id=user.id, tenant_id=tenant_id, csrf_token=csrf,
                       expires_at=expires)
    session.add(row)
    session.flush()
    return NewSession(row.id, token, csrf, user, tenant_id, expires)


def log_in(session: Session, settings: Settings, *, email: str, password: str) -> NewSession:
    """Check the password and open a session; ``AuthenticationError`` with one message whatever
    was wrong, ``RateLimitedError`` after too many failures."""
    try:
        email = normalize_email(email)
    except InvalidRequestError:
        raise AuthenticationError("wrong e-mail address or password") from None
    _throttle(session, settings, email)
    user = session.scalar(select(User).where(User.email == email))
    if not passwords.verify(user.password_hash if user else None, password) or user is None:
        _failed(session, email, user)
        raise AuthenticationError("wrong e-mail address or password")
    assert user.password_hash is not None
    if passwords.needs_rehash(user.password_hash):
        user.password_hash = passwords.hash_password(password)
    new = open_session(session, settings, user)
    audit.record(session, "auth.signed_in", tenant_id=new.tenant_id, user_id=user.id, target=f"user:{user.id}")
    return new


def session_caller(session: Session, settings: Settings, token: str) -> Caller:
    """The caller a session cookie stands for; ``AuthenticationError`` when unknown or expired."""
    row = session.scalar(select(LoginSession).where(LoginSession.token_hash == hash_key(token)))
    now = utcnow()
    if row is None or aware(row.expires_at) <= now:
        raise AuthenticationError("not signed in, or the session expired: sign in again")
    if now - aware(row.last_seen_at) >= _TOUCH_EVERY:
        row.last_seen_at = now
        row.expires_at = now + timedelta(hours=settings.session_hours)
    role = None
    if row.tenant_id is not None:
        role = session.scalar(select(Membership.role).where(Membership.tenant_id == row.tenant_id,
                                                            Membership.user_id == row.user_id))
    if role is None:  # removed from the workspace it acted in (or never had one): back to one of theirs
        row.tenant_id = default_workspace(session, row.user_id)
        if row.tenant_id is not None:
            role = session.scalar(select(Membership.role).where(Membership.tenant_id == row.tenant_id,
                                                                Membership.user_id == row.user_id))
    return Caller(user_id=row.user_id, tenant_id=row.tenant_id if role else None, role=Role(role) if role else None,
                  session_id=row.id, csrf_token=row.csrf_token)


def log_out(session: Session, session_id: str) -> None:
    session.execute(delete(LoginSession).where(LoginSession.id == session_id))


def switch(session: Session, *, session_id: str, user_id: str, tenant_id: str) -> None:
    """Make the session act in another of the user's workspaces (404 for one they are not in)."""
    if session.scalar(select(Membership.id).where(Membership.tenant_id == tenant_id,
                                                  Membership.user_id == user_id)) is None:
        raise NotFoundError(f"workspace {tenant_id!r} not found")
    row = session.get(LoginSession, session_id)
    if row is None:
        raise AuthenticationError("not signed in, or the session expired: sign in again")
    row.tenant_id = tenant_id


# -- passwords ---------------------------------------------------------------------------------------

def change_password(session: Session, *, user_id: str, current: str, new: str,
                    keep_session: str | None = None) -> None:
    """Change one's own password (the current one is asked again); the user's other sessions end."""
    user = session.get(User, user_id)
    if user is None or not passwords.verify(user.password_hash, current):
        raise PermissionDeniedError("current_password: wrong password")
    user.password_hash = passwords.hash_password(new)
    query = delete(LoginSession).where(LoginSession.user_id == user_id)
    if keep_session:
        query = query.where(LoginSession.id != keep_session)
    session.execute(query)
    audit.record(session, "password.changed", tenant_id=None, user_id=user_id, target=f"user:{user_id}")


def reset_password(session: Session, *, email: str, password: str | None = None) -> str:
    """An administrator's reset (the CLI): set ``password`` or a random one, returned to show once;
    every session of the user ends."""
    user = session.scalar(select(User).where(User.email == normalize_email(email)))
    if user is None:
        raise NotFoundError(f"no account with the e-mail address {email!r}")
    plain = password or secrets.token_urlsafe(12)
    user.password_hash = passwords.hash_password(plain)
    session.execute(delete(LoginSession).where(LoginSession.user_id == user.id))
    audit.record(session, "password.reset", tenant_id=None, user_id=user.id, target=f"user:{user.id}")
    return plain
