"""People: signing up, signing in, changing a password, opening sign-up; a user, the caller (``/me``),
a sign-in, and whether sign-up is open."""

from __future__ import annotations

from pydantic import Field

from ragloom.schemas.base import Request, View
from ragloom.schemas.names import OptionalName
from ragloom.schemas.workspaces import WorkspaceView


class UserView(View):
    id: str
    email: str
    name: str
    is_admin: bool = Field(description="a server administrator (the first account)")


class Me(View):
    user: UserView
    workspace: WorkspaceView | None = Field(description="the workspace requests act in")
    workspaces: list[WorkspaceView]
    via: str = Field(description="session (a web sign-in) or key (an API key)")
    csrf_token: str | None = Field(None, description="a session's: send it as X-CSRF-Token on every request that "
                                   "changes data")


class SignedIn(Me):
    expires_at: str | None


class SignupState(View):
    open: bool


class SignUp(Request):
    """A new account: it gets a workspace of its own, and joins the invitation's too when one is given."""

    email: str = Field(min_length=3, max_length=255)
    password: str = Field(min_length=1, max_length=1024)
    name: OptionalName = Field("", max_length=128)
    invitation: str = Field("", max_length=200, description="an invitation token: lets you sign up when "
                            "sign-up is closed, and joins its workspace")


class LogIn(Request):
    email: str = Field(min_length=1, max_length=255)
    password: str = Field(min_length=1, max_length=1024)


class PasswordChange(Request):
    current_password: str = Field(min_length=1, max_length=1024)
    new_password: str = Field(min_length=1, max_length=1024)


class SignupSetting(Request):
    open: bool
