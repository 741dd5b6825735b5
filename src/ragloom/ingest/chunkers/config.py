"""Validated parameters of the chunk methods (a knowledge base's ``parser_config``).

One flat model: the common fields apply to every method that has a token
budget; the method-specific ones are ignored by the other methods, except that
``children_delimiter`` is refused outright for a method that cannot split
children (naive and title only), and ``toc_extraction`` for a method without
sections (qa, table, presentation, picture, one, email), so a misconfiguration is reported instead of
silently doing nothing. :meth:`ChunkerConfig.parse` turns every problem into one
:class:`InvalidRequestError` naming each bad field.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ragloom.errors import InvalidRequestError
from ragloom.ingest.chunkers.delimiters import parse_delimiters

MAX_DELIMITER_CHARS = 256
PARENT_CHILD_METHODS = ("naive", "title")
TOC_METHODS = ("naive", "title", "book", "laws", "manual", "paper")


class ChunkerConfig(BaseModel):
    """Parameters of a chunk method (the knowledge base's ``parser_config``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    method: str = Field("naive", description="registered chunk method name")
    chunk_token_num: int = Field(512, ge=16, le=16384, description="token budget of one chunk")
    delimiter: str = Field("\n!?。；！？", max_length=MAX_DELIMITER_CHARS,
                           description="delimiter grammar; `multi` switches to custom mode")
    overlapped_percent: float = Field(0, ge=0, le=90, description="percent of the previous chunk repeated")
    heading_prefix: bool = Field(True, description="start chunks with their heading path")
    children_delimiter: str = Field(
        "", max_length=MAX_DELIMITER_CHARS,
        description="parent-child (naive, title): split each chunk into indexed children at these delimiters",
    )
    title_depth: int = Field(
        6, ge=1, le=9,
        description="title method: headings of the N outermost levels present start a chunk; deeper ones stay inside",
    )
    picture_min_chars: int = Field(
        32, ge=0, le=10000, description="picture method: OCR text shorter than this is reported as too short"
    )
    toc_extraction: bool = Field(
        False, description=f"{', '.join(TOC_METHODS)}: when the document has no headings, "
                           "the configured chat model builds its table of contents",
    )
    task_page_size: int | None = Field(
        None, ge=1, le=10000, description="pages per parsing task of a PDF (default 12; 22 for paper)"
    )
    auto_keywords: int = Field(
        0, ge=0, le=30, description="enrichment: keywords the chat model writes for each chunk (indexed, boosted)"
    )
    auto_questions: int = Field(
        0, ge=0, le=10, description="enrichment: questions the chat model writes for each chunk (searchable)"
    )
    metadata_fields: dict[str, str] = Field(
        default_factory=dict, max_length=20,
        description="enrichment: document metadata the chat model fills from the document's beginning, "
                    "{name: what it is}",
    )

    @field_validator("overlapped_percent", mode="before")
    @classmethod
    def _fraction_to_percent(cls, value: Any) -> Any:
        """Like the reference, a value in (0, 1) is read as a fraction."""
        if isinstance(value, int | float) and 0 < value < 1:
            return value * 100
        return value

    @field_validator("metadata_fields")
    @classmethod
    def _field_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name, what in value.items():
            if not re.fullmatch(r"[\w.-]{1,64}", name):
                raise ValueError(f"field name {name[:80]!r}: 1 to 64 letters, digits, '_', '.' or '-'")
            if len(what) > 500:
                raise ValueError(f"field {name!r}: the description is longer than 500 characters")
        return value

    @field_validator("delimiter", "children_delimiter")
    @classmethod
    def _grammar(cls, value: str) -> str:
        """The grammar parses, has no empty backtick token, and its pattern compiles — the very
        pattern the chunkers use, so a delimiter accepted here never fails a task later."""
        delimiters = parse_delimiters(value)  # ValueError → a validation error naming the field
        if _has_empty_token(value):
            raise ValueError("an empty multi-character delimiter (``) matches nothing; remove it")
        try:
            delimiters.pattern  # noqa: B018 - compiling is the check
        except (re.error, RecursionError, OverflowError) as exc:
            raise ValueError(f"does not make a valid pattern: {exc}") from exc
        return value

    @model_validator(mode="after")
    def _children_only_where_supported(self) -> ChunkerConfig:
        if self.children_delimiter and self.method not in PARENT_CHILD_METHODS:
            raise ValueError(
                f"children_delimiter: parent-child chunking works with the methods "
                f"{', '.join(PARENT_CHILD_METHODS)}, not {self.method!r}"
            )
        if self.toc_extraction and self.method not in TOC_METHODS:
            raise ValueError(
                f"toc_extraction: a table of contents is built for the methods {', '.join(TOC_METHODS)}, "
                f"not {self.method!r}"
            )
        return self

    @classmethod
    def parse(cls, data: dict[str, Any], *, strict: bool = False) -> ChunkerConfig:
        """Validate ``data``; :class:`InvalidRequestError` lists every bad field.

        ``strict`` (used when parameters are set: knowledge base create/update, upload,
        a document's own method) refuses values of the wrong JSON type instead of converting
        them (``"512"`` for a number, ``"false"`` for a boolean): the raw ``parser_config``
        is stored and some of it is read as is, where ``"false"`` would be true."""
        try:
            return cls.model_validate(data, strict=strict)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'config'}: {err['msg']}" for err in exc.errors()
            )
            raise InvalidRequestError(f"invalid chunking parameters: {problems}") from exc


def _has_empty_token(spec: str) -> bool:
    """Whether the delimiter grammar holds a backtick pair with nothing between (``)."""
    i = 0
    while (start := spec.find("`", i)) >= 0:
        end = spec.find("`", start + 1)
        if end < 0:
            return False
        if end == start + 1:
            return True
        i = end + 1
    return False
