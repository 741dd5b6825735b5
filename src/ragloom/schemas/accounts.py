"""People: a user, the caller (``/me``), a sign-in, and whether sign-up is open."""

from __future__ import annotations

from pydantic import Field

from ragloom.schemas.base import View
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
