"""The chunk methods and their parameters, and a chunking preview of a sample."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

PREVIEW_CHUNKS = 50  # chunks returned (the count is of all)
PREVIEW_CHARS = 2000  # of each chunk's text


class MethodParameter(BaseModel):
    """One parameter of a chunk method, as a form field."""

    name: str
    type: str = Field(description="integer, number, boolean, string or object (a JSON object)")
    default: Any
    minimum: float | None = None
    maximum: float | None = None
    max_length: int | None = None
    nullable: bool = False
    description: str


class ChunkMethod(BaseModel):
    name: str
    description: str
    parameters: list[MethodParameter]


class ChunkMethodList(BaseModel):
    methods: list[ChunkMethod]


class PreviewChunk(BaseModel):
    order: int
    text: str = Field(description=f"the chunk's text (its first {PREVIEW_CHARS} characters)")
    tokens: int
    pages: list[int] = Field(description="pages the chunk lies on (1-based; empty for a flowing format)")
    truncated: bool


class ChunkingPreview(BaseModel):
    """How the sample was chunked. Nothing was stored."""

    filename: str
    chunk_method: str
    parser_config: dict[str, Any]
    pages_parsed: int | None = Field(description="pages read (a PDF's first pages only)")
    pages_total: int | None
    blocks: int
    chunk_count: int
    chunks: list[PreviewChunk] = Field(description=f"the first {PREVIEW_CHUNKS}")
    figures: int = Field(0, description="figures in the pages parsed that would become figure chunks (the chunk "
                                        "count leaves them out)")
    vision_model: str | None = Field(None, description="the workspace's vision model, which would describe them "
                                                       "(null: none; figures keep caption, OCR text and context)")
    vision_calls: int | None = Field(None, description="the calls to it parsing these pages would make: its "
                                                       "descriptions of the other figures are in the cache already")
