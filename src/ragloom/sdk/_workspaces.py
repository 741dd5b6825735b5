"""Workspaces, their members and invitations, their model providers; the server's health."""

from __future__ import annotations

from typing import Literal

from ragloom.schemas.providers import ConnectionTest, ProviderInfo, ProviderList, ProviderSet
from ragloom.schemas.system import Health
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
from ragloom.sdk._base import Base, Route, body, operation

ProviderKindName = Literal["chat", "embedding", "rerank"]


class WorkspacesAPI(Base):
    # --- workspaces ---

    @operation("GET", "/workspaces")
    def list_workspaces(self, op: Route, /) -> WorkspaceList:
        """Every workspace you belong to, with your role; ``current`` is where this client acts."""
        return self._model(WorkspaceList, op)

    @operation("POST", "/workspaces")
    def create_workspace(self, op: Route, /, name: str) -> WorkspaceView:
        """A new workspace you own (act in it with ``switch_workspace`` or a key created there)."""
        return self._model(WorkspaceView, op, json=body(WorkspaceName, {"name": name}))

    @operation("PATCH", "/workspaces/{workspace_id}")
    def rename_workspace(self, op: Route, /, workspace_id: str, name: str | None = None, *,
                         members_share: bool | None = None) -> WorkspaceView:
        """Rename a workspace, or let its members share their assistants by link (``members_share``)."""
        return self._model(WorkspaceView, op, path={"workspace_id": workspace_id},
                           json=body(WorkspaceUpdate, {"name": name, "members_share": members_share}))

    @operation("POST", "/workspaces/{workspace_id}/leave")
    def leave_workspace(self, op: Route, /, workspace_id: str) -> None:
        """Leave a workspace (its owner transfers ownership first); your keys there are revoked."""
        self._empty(op, path={"workspace_id": workspace_id})

    @operation("POST", "/workspaces/{workspace_id}/transfer")
    def transfer_workspace(self, op: Route, /, workspace_id: str, user_id: str) -> None:
        """Make another member the owner (the owner only); you stay as an admin."""
        self._empty(op, path={"workspace_id": workspace_id}, json=body(OwnerChange, {"user_id": user_id}))

    # --- members and invitations (of the workspace this client acts in) ---

    @operation("GET", "/members")
    def list_members(self, op: Route, /) -> MemberList:
        return self._model(MemberList, op)

    @operation("PATCH", "/members/{user_id}")
    def change_role(self, op: Route, /, user_id: str, role: Literal["admin", "member"]) -> MemberView:
        return self._model(MemberView, op, path={"user_id": user_id}, json=body(RoleChange, {"role": role}))

    @operation("DELETE", "/members/{user_id}")
    def remove_member(self, op: Route, /, user_id: str) -> None:
        """Remove a member (their keys in this workspace are revoked)."""
        self._empty(op, path={"user_id": user_id})

    @operation("GET", "/invitations")
    def list_invitations(self, op: Route, /) -> InvitationList:
        return self._model(InvitationList, op)

    @operation("POST", "/invitations")
    def invite(self, op: Route, /, *, role: Literal["admin", "member"] = "member", email: str = "",
               expires_in_hours: float = 72.0) -> NewInvitation:
        """A one-time invitation into this workspace (only ``email`` may accept it, when given); its
        token is in this result only."""
        return self._model(NewInvitation, op, json=body(InvitationCreate, {
            "role": role, "email": email, "expires_in_hours": expires_in_hours}))

    @operation("DELETE", "/invitations/{invitation_id}")
    def revoke_invitation(self, op: Route, /, invitation_id: str) -> InvitationView:
        return self._model(InvitationView, op, path={"invitation_id": invitation_id})

    @operation("POST", "/invitations/accept")
    def accept_invitation(self, op: Route, /, token: str) -> WorkspaceView:
        """Join the workspace of an invitation with its role."""
        return self._model(WorkspaceView, op, json=body(InvitationAccept, {"token": token}))

    # --- model providers ---

    @operation("GET", "/providers")
    def list_providers(self, op: Route, /) -> ProviderList:
        """The workspace's providers (never their keys) and, for each kind, the model in use."""
        return self._model(ProviderList, op)

    @operation("PUT", "/providers/{kind}")
    def set_provider(self, op: Route, /, kind: ProviderKindName, *, base_url: str, model: str,
                     api_key: str | None = None) -> ProviderInfo:
        """Create or replace the workspace's provider of ``kind`` (an OpenAI-compatible API);
        ``api_key=None`` keeps the stored key (same ``base_url``), ``""`` means none."""
        payload = body(ProviderSet, {"base_url": base_url, "model": model})  # the key is a SecretStr: not dumped
        if api_key is not None:
            payload["api_key"] = api_key
        return self._model(ProviderInfo, op, path={"kind": kind}, json=payload)

    @operation("DELETE", "/providers/{kind}")
    def delete_provider(self, op: Route, /, kind: ProviderKindName) -> None:
        """The server's default model applies again."""
        self._empty(op, path={"kind": kind})

    @operation("POST", "/providers/{kind}/test")
    def test_provider(self, op: Route, /, kind: ProviderKindName) -> ConnectionTest:
        """One minimal call with the stored provider; a failure is a result (``ok`` false), not an error."""
        return self._model(ConnectionTest, op, path={"kind": kind})

    # --- the server ---

    @operation("GET", "/health", accept=(503,))
    def health(self, op: Route, /) -> Health:
        """Liveness of the API and of the ingestion workers (no key needed); ``status`` "unavailable"
        when no worker is alive."""
        return self._model(Health, op)
