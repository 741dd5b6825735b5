"""/providers: the workspace's own chat, embedding and rerank models — list (every member, never an
API key), set or replace, delete and test (owners and admins)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Response

from ragloom.api.deps import ContextDep, PrincipalDep
from ragloom.api.responses import CALLER_ERRORS, error_responses
from ragloom.schemas.providers import ConnectionTest, ProviderInfo, ProviderList, ProviderSet
from ragloom.service.accounts import providers
from ragloom.service.accounts.providers import ProviderKind

router = APIRouter(prefix="/providers", tags=["providers"], responses=CALLER_ERRORS)
# any other kind is a resource that does not exist (404), like an unknown id
KindPath = Annotated[str, Path(description=f"one of: {', '.join(ProviderKind)}", examples=["chat"])]


@router.get("")
def list_providers(ctx: ContextDep, principal: PrincipalDep) -> ProviderList:
    """The workspace's providers, and for each kind the model in use (its own, else the server's default)."""
    with ctx.db.session() as s:
        return providers.list_view(ctx, s, principal=principal)


@router.put("/{kind}")
def set_provider(kind: KindPath, body: ProviderSet, ctx: ContextDep, principal: PrincipalDep) -> ProviderInfo:
    """Create or replace the workspace's provider of this kind. Its API key is stored encrypted and never
    returned. A knowledge base keeps the embedding model it was built with (re-index to move it). A
    base URL that resolves to a loopback, private, link-local or other non-public address is refused
    (400) unless the server's administrator allows its range (``RAGLOOM_OUTBOUND_ALLOW``)."""
    with ctx.db.session() as s:
        return providers.view(ctx, providers.set_provider(ctx, s, principal=principal, kind=kind, spec=body),
                              principal)


@router.delete("/{kind}", status_code=204, response_class=Response, responses=error_responses(409))
def delete_provider(kind: KindPath, ctx: ContextDep, principal: PrincipalDep) -> Response:
    """The server's default model applies again; an embedding provider that knowledge bases were built
    with is kept (409) until they are re-indexed with another model."""
    with ctx.db.session() as s:
        providers.delete(s, principal=principal, kind=kind)
    return Response(status_code=204)


@router.post("/{kind}/test")
def test_provider(kind: KindPath, ctx: ContextDep, principal: PrincipalDep) -> ConnectionTest:
    """One minimal call with the stored provider; a provider that fails or cannot be reached is a result
    (``ok`` false, the reason in ``message``), not an error status."""
    with ctx.db.session() as s:
        return providers.test_connection(ctx, s, principal=principal, kind=kind)
