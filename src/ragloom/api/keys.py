"""/keys: the caller's API keys (every member's for an owner or admin) — create, list, revoke."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter

from ragloom.api.deps import ContextDep, PrincipalDep
from ragloom.api.responses import CALLER_ERRORS
from ragloom.api.schemas import KeyCreate
from ragloom.service import accounts
from ragloom.service.views import ApiKeyInfo, ApiKeyList, NewApiKey, key_view

router = APIRouter(prefix="/keys", tags=["keys"], responses=CALLER_ERRORS)


@router.post("", status_code=201)
def create_key(body: KeyCreate, ctx: ContextDep, principal: PrincipalDep) -> NewApiKey:
    """A new key for the caller in this workspace; the secret is in this response only."""
    with ctx.db.session() as s:
        new = accounts.create_api_key(s, tenant_id=principal.tenant_id, user_id=principal.user_id, name=body.name,
                                      scope=body.scope, expires_at=body.expiry(datetime.now(UTC)))
        row = accounts.get_api_key(s, principal=principal, key_id=new.id)
        return NewApiKey(**key_view(row, accounts.key_state(row)).model_dump(), key=new.key)


@router.get("")
def list_keys(ctx: ContextDep, principal: PrincipalDep) -> ApiKeyList:
    with ctx.db.session() as s:
        rows = accounts.list_api_keys(s, principal=principal)
        return ApiKeyList(keys=[key_view(r, accounts.key_state(r)) for r in rows], total=len(rows))


@router.delete("/{key_id}")
def revoke_key(key_id: str, ctx: ContextDep, principal: PrincipalDep) -> ApiKeyInfo:
    """Revoke a key: every request with it is refused from now on (401)."""
    with ctx.db.session() as s:
        row = accounts.revoke_api_key(s, principal=principal, key_id=key_id)
        return key_view(row, accounts.key_state(row))
