"""Chunk methods, registered by name, and their validated parameters.

``chunk_blocks(blocks, config, count_tokens)`` runs the method named by
``config.method``. Built-in methods register through :meth:`ChunkerRegistry.register`,
the same way an extension adds its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ragloom.errors import InvalidRequestError
from ragloom.ingest.blocks import Block, Chunk
from ragloom.ingest.chunkers.delimiters import parse_delimiters
from ragloom.ingest.chunkers.naive import naive_chunk

__all__ = ["ChunkerConfig", "Chunker", "ChunkerRegistry", "chunk_blocks", "default_chunkers", "naive_chunk"]


class ChunkerConfig(BaseModel):
    """Parameters of a chunk method (the knowledge base's ``parser_config``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    method: str = Field("naive", description="registered chunk method name")
    chunk_token_num: int = Field(512, ge=16, le=16384, description="token budget of one chunk")
    delimiter: str = Field("\n!?。；！？", description="delimiter grammar; `multi` switches to custom mode")
    overlapped_percent: float = Field(0, ge=0, le=90, description="percent of the previous chunk repeated")
    heading_prefix: bool = Field(True, description="start chunks with their heading path")

    @field_validator("overlapped_percent", mode="before")
    @classmethod
    def _fraction_to_percent(cls, value: Any) -> Any:
        """Like the reference, a value in (0, 1) is read as a fraction."""
        if isinstance(value, int | float) and 0 < value < 1:
            return value * 100
        return value

    @field_validator("delimiter")
    @classmethod
    def _grammar(cls, value: str) -> str:
        parse_delimiters(value)  # ValueError → a validation error naming the field
        return value

    @classmethod
    def parse(cls, data: dict[str, Any]) -> ChunkerConfig:
        """Validate ``data``; :class:`InvalidRequestError` lists every bad field."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'config'}: {err['msg']}" for err in exc.errors()
            )
            raise InvalidRequestError(f"invalid chunking parameters: {problems}") from exc


class Chunker(Protocol):
    """Turns a document's blocks into chunks, in reading order, each within the token budget."""

    def __call__(
        self, blocks: Sequence[Block], config: ChunkerConfig, count_tokens: Callable[[str], int]
    ) -> list[Chunk]: ...


def _naive(blocks: Sequence[Block], config: ChunkerConfig, count_tokens: Callable[[str], int]) -> list[Chunk]:
    return naive_chunk(
        blocks,
        count_tokens=count_tokens,
        chunk_token_num=config.chunk_token_num,
        delimiter=config.delimiter,
        overlapped_percent=config.overlapped_percent,
        heading_prefix=config.heading_prefix,
    )


class ChunkerRegistry:
    """Chunk methods keyed by name."""

    def __init__(self) -> None:
        self._methods: dict[str, Chunker] = {}

    def register(self, name: str, chunker: Chunker, *, replace: bool = False) -> None:
        if name in self._methods and not replace:
            raise ValueError(f"a chunk method named {name!r} is already registered")
        self._methods[name] = chunker

    @property
    def names(self) -> list[str]:
        return sorted(self._methods)

    def get(self, name: str) -> Chunker:
        try:
            return self._methods[name]
        except KeyError:
            raise InvalidRequestError(
                f"unknown chunk method {name!r}; available: {', '.join(self.names)}"
            ) from None


@cache
def default_chunkers() -> ChunkerRegistry:
    """The process-wide registry with the built-in methods."""
    registry = ChunkerRegistry()
    registry.register("naive", _naive)
    return registry


def chunk_blocks(
    blocks: Sequence[Block],
    config: ChunkerConfig,
    count_tokens: Callable[[str], int],
    registry: ChunkerRegistry | None = None,
) -> list[Chunk]:
    """Run the method ``config.method`` over ``blocks``."""
    return (registry or default_chunkers()).get(config.method)(blocks, config, count_tokens)
