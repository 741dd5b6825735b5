"""Signing in and out (a web session), your account, API keys, the audit log and sign-up (admins)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from ragloom.schemas.accounts import LogIn, Me, PasswordChange, SignedIn, SignUp, SignupSetting, SignupState
from ragloom.schemas.audit import AuditLog
from ragloom.schemas.keys import ApiKeyInfo, ApiKeyList, KeyCreate, NewApiKey
from ragloom.schemas.workspaces import WorkspaceSwitch
from ragloom.sdk._base import Base, Route, body, operation

KeyScopeName = Literal["read-write", "read"]


class AccountsAPI(Base):
    # --- a web session: the cookie is kept by the HTTP client, the CSRF token by this client ---

    @operation("POST", "/auth/signup")
    def sign_up(self, op: Route, /, email: str, password: str, *, name: str = "", invitation: str = "") -> SignedIn:
        """Create an account (with a workspace of its own; an invitation's too) and sign in: this client
        then acts as that user."""
        signed = self._model(SignedIn, op, json=body(SignUp, {"email": email, "password": password, "name": name,
                                                                 "invitation": invitation}))
        self.csrf_token = signed.csrf_token
        return signed

    @operation("POST", "/auth/login")
    def log_in(self, op: Route, /, email: str, password: str) -> SignedIn:
        """Sign in with e-mail address and password: this client then acts as that user (when it has no
        API key). Too many failures raise ``RateLimitedError``."""
        signed = self._model(SignedIn, op, json=body(LogIn, {"email": email, "password": password}))
        self.csrf_token = signed.csrf_token
        return signed

    @operation("POST", "/auth/logout")
    def log_out(self, op: Route, /) -> None:
        """End this web session."""
        self._empty(op)
        self.csrf_token = None

    @operation("GET", "/auth/me")
    def me(self, op: Route, /) -> Me:
        """Who you are, the workspace requests act in, and every workspace you belong to."""
        return self._model(Me, op)

    @operation("POST", "/auth/password")
    def change_password(self, op: Route, /, current_password: str, new_password: str) -> None:
        """Change your password; your other web sessions end."""
        self._empty(op, json=body(PasswordChange, {"current_password": current_password,
                                                      "new_password": new_password}))

    @operation("POST", "/auth/workspace")
    def switch_workspace(self, op: Route, /, workspace_id: str) -> Me:
        """Make this web session act in another of your workspaces (an API key acts in its own only)."""
        return self._model(Me, op, json=body(WorkspaceSwitch, {"workspace_id": workspace_id}))

    @operation("GET", "/admin/signup")
    def signup_state(self, op: Route, /) -> SignupState:
        """Whether anyone may sign up (else only holders of an invitation)."""
        return self._model(SignupState, op)

    @operation("PUT", "/admin/signup")
    def set_signup(self, op: Route, /, open: bool) -> SignupState:
        """Open or close sign-up (server administrators)."""
        return self._model(SignupState, op, json=body(SignupSetting, {"open": open}))

    # --- API keys and the audit log ---

    @operation("POST", "/keys")
    def create_key(self, op: Route, /, *, name: str = "", scope: KeyScopeName = "read-write",
                   expires_at: datetime | None = None, expires_in_days: int | None = None,
                   workspace_id: str | None = None) -> NewApiKey:
        """A new API key for you (in this workspace, or ``workspace_id``); its secret (``key``) is in this
        result only."""
        return self._model(NewApiKey, op, json=body(KeyCreate, {
            "name": name, "scope": scope, "expires_at": expires_at, "expires_in_days": expires_in_days,
            "workspace_id": workspace_id}))

    @operation("GET", "/keys")
    def list_keys(self, op: Route, /) -> ApiKeyList:
        """Your keys (every member's for an owner or admin), never their secrets."""
        return self._model(ApiKeyList, op)

    @operation("DELETE", "/keys/{key_id}")
    def revoke_key(self, op: Route, /, key_id: str) -> ApiKeyInfo:
        """Revoke a key: every request with it is refused from now on."""
        return self._model(ApiKeyInfo, op, path={"key_id": key_id})

    @operation("GET", "/audit")
    def audit_log(self, op: Route, /, *, action: str | None = None, limit: int = 100, offset: int = 0,
                  scope: Literal["workspace", "server"] = "workspace") -> AuditLog:
        """The workspace's audit log, newest first (owners and admins); ``scope="server"``: the events of
        no workspace (server administrators)."""
        return self._model(AuditLog, op, params={"action": action, "limit": limit, "offset": offset,
                                                    "scope": scope})
