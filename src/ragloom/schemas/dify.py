"""Dify's external-knowledge API as ragloom serves it (``POST /dify/retrieval``): Dify's retrieval
request, its records and its error body."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragloom.schemas.options import MAX_PAGE_SIZE


class _Request(BaseModel):
    # Dify may send more than its specification lists (other knowledge services take extra fields):
    # unknown fields are ignored, not refused.
    model_config = ConfigDict(extra="ignore")


class DifyRetrievalSetting(_Request):
    top_k: int = Field(ge=1, description=f"records to return at most; more than {MAX_PAGE_SIZE} (or the "
                                         "server's result window) returns that many")
    score_threshold: float = Field(ge=0.0, le=1.0, description="records scoring lower are left out; Dify sends "
                                                               "0.0 when its score threshold is off")


ComparisonOperator = Literal[
    "contains", "not contains", "start with", "end with", "is", "is not", "in", "not in", "empty", "not empty",
    "null", "not null", "=", "≠", "!=", ">", "<", "≥", ">=", "≤", "<=", "before", "after",
]


UNSUPPORTED_OPERATORS = ("start with", "end with")  # ragloom's metadata filter has no prefix or suffix match


class DifyMetadataCondition(_Request):
    name: str | list[str] = Field(description="the metadata key (a list: any of these keys)")
    comparison_operator: ComparisonOperator = Field(
        description="every operator of Dify's specification but 'start with' and 'end with' (refused with 400)")
    value: str | int | float | list[str | int | float] | None = Field(
        None, description="omitted for empty, not empty, null and not null")


class DifyMetadataConditions(_Request):
    logical_operator: Literal["and", "or"] = "and"
    conditions: list[DifyMetadataCondition] = Field(min_length=1, max_length=100)


class DifyRetrievalRequest(_Request):
    """Dify's retrieval request."""

    knowledge_id: str = Field(min_length=1, max_length=255, description="a ragloom dataset id or name")
    query: str = Field(min_length=1, max_length=4000)
    retrieval_setting: DifyRetrievalSetting
    metadata_condition: DifyMetadataConditions | None = Field(
        None, description="only documents whose metadata match (ragloom's document metadata)")


class DifyRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: str = Field(description="the chunk's text")
    score: float = Field(description="the search's similarity, 0..1 (the server's fusion; see POST /retrieval)")
    title: str = Field(description="the document's name")
    metadata: dict[str, Any] = Field(description="document_id, dataset_id, chunk_id, version_id and pages "
                                                 "(1-based) of the chunk; always an object")


class DifyRecords(BaseModel):
    """Dify's retrieval response: the best records first (``[]`` when nothing matches)."""

    model_config = ConfigDict(extra="forbid")

    records: list[DifyRecord]


class DifyError(BaseModel):
    """Dify's error body."""

    model_config = ConfigDict(extra="forbid")

    error_code: int = Field(description="1001 invalid Authorization header format, 1002 authorization failed, "
                                        "2001 the knowledge does not exist; otherwise the HTTP status",
                            examples=[2001])
    error_msg: str = Field(examples=["The knowledge does not exist: knowledge base 'manuals' not found"])
