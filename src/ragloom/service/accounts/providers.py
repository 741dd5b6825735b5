"""A workspace's own models: chat, embedding and rerank providers (any OpenAI-compatible API).

Owners and admins set (create or replace), test and delete them; every member may list them. The API
key is stored only encrypted with the server's secret key (:mod:`ragloom.service.accounts.secrets`) and never
leaves the server again: not in a response, a log line or the audit log (a provider shows
``has_api_key``, and to owners and admins the key's last four characters). A stored key is only ever
sent to the base URL it was set with: changing the URL needs the key again.

A base URL must resolve to public addresses, or to a range the administrator allows with
``RAGLOOM_OUTBOUND_ALLOW``: checked when it is set (400 naming the address) and again at every
connection (:mod:`ragloom.models.http`), so a name that later resolves elsewhere is refused too. A
connection test reports what went wrong — status, content type — and never the body of a reply that
is not JSON.

Which model a workspace then uses — its provider's, else the server's default — is decided in
:mod:`ragloom.service.accounts.workspace_models`.
"""

from __future__ import annotations

import base64
import ipaddress
import time

import httpx
from sqlalchemy import select
from sqlalchemy.orm import Session

from ragloom.context import Context, Principal
from ragloom.db.models import KnowledgeBase, ModelProvider
from ragloom.errors import (
    ConfigError,
    ConflictError,
    InvalidRequestError,
    ModelError,
    NotFoundError,
    PermissionDeniedError,
)
from ragloom.models.chat import OpenAIChatModel
from ragloom.models.embedding import OpenAIEmbedder
from ragloom.models.rerank import HttpReranker
from ragloom.models.vision import OpenAIVisionModel
from ragloom.schemas.base import iso_utc
from ragloom.schemas.providers import ConnectionTest, ModelInUse, ProviderInfo, ProviderList, ProviderSet
from ragloom.service.accounts import audit, secrets
from ragloom.service.accounts.workspace_models import NAME_LIMIT, ProviderKind, embedding_model_name, find, outbound
from ragloom.states import Role

__all__ = ["ProviderKind", "delete", "get", "list_providers", "list_view", "set_provider", "test_connection", "view"]

TEST_TIMEOUT = 20.0  # seconds a connection test waits for the provider
# a 64 x 64 red square: what the vision provider's connection test shows the model
PROBE_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAEAAAABACAIAAAAlC+aJAAAAUElEQVR42u3PQREAAAQAMATRP4pYUni42xospzs+q3hOQEBAQEBAQEBAQEBA"
    "QEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBA4N4CQ3UBhF8gRisAAAAASUVORK5CYII=")
HINT_MIN_LENGTH = 16  # a key shorter than this shows no last characters


# --- requests and views ---------------------------------------------------------------------------


def check_destination(ctx: Context, base_url: str) -> None:
    """``InvalidRequestError`` when ``base_url``'s host resolves to an address a workspace's provider may
    not reach (see the module's docstring). A name that does not resolve now passes: every connection
    checks again."""
    url = httpx.URL(base_url)
    host = url.host
    subject = "base_url" if _is_address(host) else f"base_url's host {host}"
    try:
        _, refused = outbound(ctx).policy.screen(host, url.port or (443 if url.scheme == "https" else 80), subject)
    except OSError:
        return
    if refused is not None:
        raise InvalidRequestError(refused)


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


# --- the providers --------------------------------------------------------------------------------

def _kind(kind: str) -> ProviderKind:
    try:
        return ProviderKind(kind)
    except ValueError:
        raise NotFoundError(f"no provider kind {kind!r}: one of {', '.join(ProviderKind)}") from None


def _require_manager(principal: Principal, action: str) -> None:
    if principal.role not in (Role.OWNER, Role.ADMIN):
        raise PermissionDeniedError(f"only a workspace owner or admin may {action}")


def get(session: Session, *, principal: Principal, kind: str) -> ModelProvider:
    row = find(session, principal.tenant_id, _kind(kind))
    if row is None:
        raise NotFoundError(f"this workspace has no {kind} provider (it uses the server's default)")
    return row


def list_providers(session: Session, *, principal: Principal) -> list[ModelProvider]:
    rows = session.scalars(select(ModelProvider).where(ModelProvider.tenant_id == principal.tenant_id))
    order = list(ProviderKind)
    return sorted(rows, key=lambda r: order.index(ProviderKind(r.kind)) if r.kind in order else len(order))


def set_provider(ctx: Context, session: Session, *, principal: Principal, kind: str,
                 spec: ProviderSet) -> ModelProvider:
    """Create or replace the workspace's provider of ``kind`` (owners and admins)."""
    _require_manager(principal, "set the workspace's model providers")
    kind = _kind(kind)
    if kind == ProviderKind.EMBEDDING and len(embedding_model_name(principal.tenant_id, spec.model)) > NAME_LIMIT:
        raise InvalidRequestError(f"model: an embedding model name may have at most "
                                  f"{NAME_LIMIT - len(embedding_model_name(principal.tenant_id, ''))} characters")
    check_destination(ctx, spec.base_url)
    row = find(session, principal.tenant_id, kind)
    if spec.api_key is not None:
        secret = secrets.encrypt(ctx.settings, spec.api_key.get_secret_value().strip())
    elif row is not None and row.secret and row.base_url != spec.base_url:
        raise InvalidRequestError("api_key: the base URL changed, so give the API key again (a stored key is only "
                                  "ever sent to the URL it was set for), or \"\" for none")
    else:
        secret = row.secret if row is not None else ""
    key_state = "none" if not secret else "new" if spec.api_key is not None else "kept"
    if row is None:
        row = ModelProvider(tenant_id=principal.tenant_id, kind=kind)
        session.add(row)
    row.base_url, row.model, row.secret, row.updated_by = spec.base_url, spec.model, secret, principal.user_id
    session.flush()
    audit.record_by(session, principal, "provider.set", target=f"provider:{kind}",
                    detail=f"{kind}: {spec.model} at {spec.base_url}; API key: {key_state}")
    return row


def delete(session: Session, *, principal: Principal, kind: str) -> None:
    """Remove the workspace's provider of ``kind``: the server's default applies again. An embedding
    provider that knowledge bases were built with stays until they are re-indexed to another model."""
    _require_manager(principal, "delete the workspace's model providers")
    row = get(session, principal=principal, kind=kind)
    if row.kind == ProviderKind.EMBEDDING:
        names = list(session.scalars(select(KnowledgeBase.name).where(
            KnowledgeBase.tenant_id == principal.tenant_id,
            KnowledgeBase.embedding_model.startswith(embedding_model_name(principal.tenant_id, ""), autoescape=True),
        ).order_by(KnowledgeBase.name)))
        if names:
            shown = ", ".join(repr(n) for n in names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            raise ConflictError(f"knowledge bases {shown} were built with this embedding provider and need it to be "
                                "searched: re-index them with another embedding model first (POST "
                                "/api/v1/datasets/{id}/reindex), or replace the provider (PUT) instead")
    audit.record_by(session, principal, "provider.deleted", target=f"provider:{row.kind}",
                    detail=f"{row.kind}: {row.model} at {row.base_url}")
    session.delete(row)
    session.flush()


def _hint(ctx: Context, row: ModelProvider) -> str | None:
    if not row.secret:
        return None
    try:
        plain = secrets.decrypt(ctx.settings, row.secret)
    except ConfigError:
        return None  # the server's key changed: a connection test says so
    return f"...{plain[-4:]}" if len(plain) >= HINT_MIN_LENGTH else None


def view(ctx: Context, row: ModelProvider, principal: Principal) -> ProviderInfo:
    """The provider as ``principal`` sees it: the key's last characters for owners and admins only."""
    hint = _hint(ctx, row) if principal.role in (Role.OWNER, Role.ADMIN) else None
    return ProviderInfo(kind=row.kind, base_url=row.base_url, model=row.model, has_api_key=bool(row.secret),
                        api_key_hint=hint, updated_by=row.updated_by, updated_at=iso_utc(row.updated_at))


def list_view(ctx: Context, session: Session, *, principal: Principal) -> ProviderList:
    rows = list_providers(session, principal=principal)
    own = {r.kind: r for r in rows}
    s = ctx.settings
    server: dict[str, str | None] = {
        ProviderKind.CHAT: s.chat_model if s.chat_base_url and s.chat_model else None,
        ProviderKind.EMBEDDING: s.embedding_model,
        ProviderKind.RERANK: (s.rerank_model or s.rerank_provider) if s.rerank_provider else None,
        ProviderKind.VISION: None,  # a workspace's own only
    }
    in_use = []
    for kind in ProviderKind:
        if kind in own:
            model = own[kind].model
            if kind == ProviderKind.EMBEDDING:
                model = embedding_model_name(principal.tenant_id, model)
            in_use.append(ModelInUse(kind=kind, source="workspace", model=model))
        else:
            in_use.append(ModelInUse(kind=kind, source="server" if server[kind] else "none", model=server[kind]))
    return ProviderList(providers=[view(ctx, r, principal) for r in rows], total=len(rows), in_use=in_use)


# --- the connection test --------------------------------------------------------------------------

def test_connection(ctx: Context, session: Session, *, principal: Principal, kind: str) -> ConnectionTest:
    """One minimal real call with the stored provider: chat, a one-token completion; embedding, one
    short text (its vectors' length is reported); rerank, two short texts. A provider that fails or
    cannot be reached is a result with ``ok`` false and the reason, never an exception."""
    _require_manager(principal, "test the workspace's model providers")
    row = get(session, principal=principal, kind=kind)
    plain, dimension, ok = "", None, False
    start = time.perf_counter()
    try:
        plain = secrets.decrypt(ctx.settings, row.secret)
        start = time.perf_counter()
        message, dimension = _probe(ProviderKind(row.kind), row.base_url, row.model, plain or None,
                                    outbound(ctx))
        ok = True
    except (ModelError, ConfigError) as exc:  # the provider's failure is the answer
        message = exc.message.replace(plain, "***") if plain else exc.message
    latency_ms = round((time.perf_counter() - start) * 1000, 1)
    return ConnectionTest(kind=row.kind, model=row.model, ok=ok, latency_ms=latency_ms, message=message,
                          dimension=dimension)


def _probe(kind: ProviderKind, base_url: str, model: str, key: str | None,
           transport: httpx.BaseTransport) -> tuple[str, int | None]:
    if kind == ProviderKind.CHAT:
        chat = OpenAIChatModel(base_url, model, key, timeout=TEST_TIMEOUT, transport=transport)
        try:
            chat.chat([{"role": "user", "content": "ping"}], temperature=0.0, max_tokens=1)
        finally:
            chat.close()
        return "the chat model answered", None
    if kind == ProviderKind.EMBEDDING:
        emb = OpenAIEmbedder(base_url, model, key, timeout=TEST_TIMEOUT,  # embeds one short text for its size
                             transport=transport)
        return f"the embedding model answered with vectors of {emb.dim} dimensions", emb.dim
    if kind == ProviderKind.VISION:
        vision = OpenAIVisionModel(base_url, model, key, timeout=TEST_TIMEOUT, max_tokens=8, transport=transport)
        try:
            vision.describe(PROBE_PNG, "What colour is this picture? One word.")
        finally:
            vision.close()
        return "the vision model described a picture", None
    reranker = HttpReranker(base_url, model, key, timeout=TEST_TIMEOUT, transport=transport)
    try:
        scores = reranker.score("ping", ["pong", "ping pong"])
    finally:
        reranker.close()
    if len(scores) != 2:
        raise ModelError(f"the rerank endpoint scored {len(scores)} of 2 texts")
    return "the reranker scored two texts", None
