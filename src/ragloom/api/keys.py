"""/keys: the caller's API keys (every member's for an owner or admin) — create, list, revoke; /audit:
the workspace's audit log."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query

from ragloom.api.deps import CallerDep, ContextDep, PrincipalDep
from ragloom.api.responses import CALLER_ERRORS
from ragloom.context import Principal
from ragloom.errors import PermissionDeniedError
from ragloom.schemas.audit import AuditLog
from ragloom.schemas.keys import ApiKeyInfo, ApiKeyList, KeyCreate, NewApiKey
from ragloom.service.accounts import audit, identity, workspaces
from ragloom.service.accounts.views import audit_view, key_view
from ragloom.states import Role

router = APIRouter(tags=["keys"], responses=CALLER_ERRORS)


@router.post("/keys", status_code=201)
def create_key(body: KeyCreate, ctx: ContextDep, caller: CallerDep) -> NewApiKey:
    """A new key for the caller in this workspace (or ``workspace_id``, another of theirs); the secret
    is in this response only."""
    with ctx.db.session() as s:
        if body.workspace_id:
            member = workspaces.membership(s, user_id=caller.user_id, tenant_id=body.workspace_id)
            if caller.session_id is None and body.workspace_id != caller.tenant_id:
                raise PermissionDeniedError("an API key acts only in its own workspace: sign in (or use a key of "
                                            "that workspace) to create a key there")
            principal = Principal(body.workspace_id, caller.user_id, Role(member.role), caller.scope)
        else:
            principal = caller.principal()
        new = identity.create_api_key(s, tenant_id=principal.tenant_id, user_id=principal.user_id, name=body.name,
                                      scope=body.scope, expires_at=body.expiry(datetime.now(UTC)))
        row = identity.get_api_key(s, principal=principal, key_id=new.id)
        return NewApiKey(**key_view(row, identity.key_state(row)).model_dump(), key=new.key)


@router.get("/keys")
def list_keys(ctx: ContextDep, principal: PrincipalDep) -> ApiKeyList:
    with ctx.db.session() as s:
        rows = identity.list_api_keys(s, principal=principal)
        return ApiKeyList(keys=[key_view(r, identity.key_state(r)) for r in rows], total=len(rows))


@router.delete("/keys/{key_id}")
def revoke_key(key_id: str, ctx: ContextDep, principal: PrincipalDep) -> ApiKeyInfo:
    """Revoke a key: every request with it is refused from now on (401)."""
    with ctx.db.session() as s:
        row = identity.revoke_api_key(s, principal=principal, key_id=key_id)
        return key_view(row, identity.key_state(row))


@router.get("/audit")
def audit_log(ctx: ContextDep, principal: PrincipalDep, action: str | None = None,
              limit: Annotated[int, Query(ge=1, le=audit.MAX_PAGE)] = 100,
              offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
              scope: Annotated[str, Query(pattern="^(workspace|server)$")] = "workspace") -> AuditLog:
    """The workspace's audit log, newest first (owners and admins only); ``scope=server``: the events of
    no workspace — failed sign-ins, new accounts, password resets, sign-up changes (server administrators)."""
    with ctx.db.session() as s:
        page = audit.events(s, principal=principal, action=action, limit=limit, offset=offset,
                            server=scope == "server")
        return audit_view(page.events, page.total)
