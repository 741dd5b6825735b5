"""/auth: sign up, sign in and out (a session cookie plus a CSRF token), who am I, change one's
password, switch the session's workspace; /admin/signup: open or close sign-up (server admins)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from ragloom.api.deps import (
    PUBLIC,
    CallerDep,
    ContextDep,
    limited_per_address,
)
from ragloom.api.responses import CALLER_ERRORS, error_responses
from ragloom.context import Caller, Context
from ragloom.errors import InvalidRequestError, PermissionDeniedError
from ragloom.schemas.accounts import LogIn, Me, PasswordChange, SignedIn, SignUp, SignupSetting, SignupState
from ragloom.schemas.base import iso_utc
from ragloom.schemas.workspaces import WorkspaceSwitch, WorkspaceView
from ragloom.service.accounts import signin, workspaces
from ragloom.service.accounts.views import user_view
from ragloom.web import cookies

router = APIRouter(tags=["accounts"], responses=CALLER_ERRORS)


def me_view(ctx: Context, caller: Caller) -> Me:
    with ctx.db.session() as s:
        user = signin.user(s, caller.user_id)
        spaces = [WorkspaceView(id=t.id, name=t.name, role=r, current=t.id == caller.tenant_id)
                  for t, r in workspaces.visible_to(s, caller)]
        current = next((w for w in spaces if w.current), None)
        return Me(user=user_view(user), workspace=current, workspaces=spaces,
                  via="session" if caller.session_id else "key", csrf_token=caller.csrf_token)


def _signed_in(ctx: Context, request: Request, response: Response, new: signin.NewSession) -> SignedIn:
    """Set the session and CSRF cookies: ``Secure`` and ``__Host-`` prefixed over HTTPS (:mod:`ragloom.web.cookies`)."""
    settings = ctx.settings
    age = int(settings.session_hours * 3600)
    secure = cookies.is_secure(request.scope, settings.cookie_secure)
    for base, value, http_only in ((cookies.SESSION, new.token, True), (cookies.CSRF, new.csrf_token, False)):
        response.set_cookie(cookies.name(base, secure), value, max_age=age, path="/", httponly=http_only,
                            samesite="lax", secure=secure)
    caller = Caller(new.user.id, new.tenant_id, None, session_id=new.id, csrf_token=new.csrf_token)
    return SignedIn(**me_view(ctx, caller).model_dump(), expires_at=iso_utc(new.expires_at))


@router.post("/auth/signup", status_code=201, openapi_extra=PUBLIC, dependencies=[limited_per_address("signup")],
             responses=error_responses(429))
def sign_up(body: SignUp, ctx: ContextDep, request: Request, response: Response) -> SignedIn:
    """Create an account (with a workspace of its own) and sign in. Closed sign-up still admits the
    holder of an invitation, who also joins its workspace and starts there."""
    with ctx.db.session() as s:
        invited = None
        if body.invitation:
            invited = workspaces.check_invitation(s, body.invitation, signin.normalize_email(body.email))
        user, own = signin.sign_up(s, ctx.settings, email=body.email, password=body.password, name=body.name,
                                   invited=invited is not None)
        start = workspaces.accept(s, user_id=user.id, token=body.invitation).id if invited else own.id
        new = signin.open_session(s, ctx.settings, user, start)
    return _signed_in(ctx, request, response, new)


@router.post("/auth/login", openapi_extra=PUBLIC, dependencies=[limited_per_address("login")],
             responses=error_responses(429))
def log_in(body: LogIn, ctx: ContextDep, request: Request, response: Response) -> SignedIn:
    """Sign in with e-mail address and password: sets the session cookie (HttpOnly) and returns the CSRF
    token to send as ``X-CSRF-Token``. Too many failures answer 429 with ``Retry-After``."""
    with ctx.db.session() as s:
        new = signin.log_in(s, ctx.settings, email=body.email, password=body.password)
    return _signed_in(ctx, request, response, new)


@router.post("/auth/logout", status_code=204)
def log_out(ctx: ContextDep, caller: CallerDep, response: Response) -> None:
    """End this web session (an API key is revoked instead: DELETE /api/v1/keys/{id})."""
    if caller.session_id is None:
        raise InvalidRequestError("not a web session: an API key signs nothing out; revoke it to stop it")
    with ctx.db.session() as s:
        signin.log_out(s, caller.session_id)
    for base in (cookies.SESSION, cookies.CSRF):
        response.delete_cookie(base, path="/")
        response.delete_cookie(cookies.name(base, True), path="/", secure=True)


@router.get("/auth/me")
def who_am_i(ctx: ContextDep, caller: CallerDep) -> Me:
    """The signed-in user, the workspace requests act in, and every workspace they belong to (an API key:
    its own only)."""
    return me_view(ctx, caller)


@router.post("/auth/password", status_code=204)
def change_password(body: PasswordChange, ctx: ContextDep, caller: CallerDep) -> None:
    """Change your password (the current one is asked again); your other web sessions end."""
    with ctx.db.session() as s:
        signin.change_password(s, user_id=caller.user_id, current=body.current_password, new=body.new_password,
                               keep_session=caller.session_id)


@router.post("/auth/workspace")
def switch_workspace(body: WorkspaceSwitch, ctx: ContextDep, caller: CallerDep) -> Me:
    """Make this web session act in another of your workspaces. An API key belongs to one workspace:
    create a key in the other one instead (POST /api/v1/keys with workspace_id)."""
    if caller.session_id is None:
        raise PermissionDeniedError("an API key acts only in its own workspace: create a key in the other "
                                    "workspace (POST /api/v1/keys with workspace_id)")
    with ctx.db.session() as s:
        signin.switch(s, session_id=caller.session_id, user_id=caller.user_id, tenant_id=body.workspace_id)
        role = workspaces.membership(s, user_id=caller.user_id, tenant_id=body.workspace_id).role
    moved = Caller(caller.user_id, body.workspace_id, role, session_id=caller.session_id,  # type: ignore[arg-type]
                   csrf_token=caller.csrf_token)
    return me_view(ctx, moved)


def _server_admin(ctx: Context, caller: Caller) -> None:
    with ctx.db.session() as s:
        signin.require_server_admin(s, caller.user_id, "change sign-up")


@router.get("/admin/signup")
def signup_state(ctx: ContextDep, caller: CallerDep) -> SignupState:
    """Whether anyone may sign up (else only holders of an invitation)."""
    with ctx.db.session() as s:
        return SignupState(open=signin.signup_open(s))


@router.put("/admin/signup")
def set_signup(body: SignupSetting, ctx: ContextDep, caller: CallerDep) -> SignupState:
    """Open or close sign-up (server administrators only; ``ragloom users signup open|closed`` too)."""
    _server_admin(ctx, caller)
    with ctx.db.session() as s:
        signin.set_signup(s, open_=body.open, user_id=caller.user_id)
    return SignupState(open=body.open)
