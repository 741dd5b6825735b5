"""Request bodies of the API (responses are the dicts of ``ragloom.service.views``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DatasetCreate(_Strict):
    name: str = Field(min_length=1, max_length=128)
    description: str = ""
    language: str = "en"
    permission: str = "me"
    chunk_method: str = "naive"
    parser_config: dict[str, Any] = Field(default_factory=dict)
    embedding_model: str | None = None
    similarity_threshold: float = Field(0.2, ge=0.0, le=1.0)
    vector_similarity_weight: float = Field(0.3, ge=0.0, le=1.0)


class DocumentIds(_Strict):
    ids: list[str] = Field(min_length=1)


class RetrievalRequest(_Strict):
    question: str = Field(min_length=1, max_length=4000)
    dataset_ids: list[str] = Field(min_length=1)
    document_ids: list[str] | None = None
    page: int = Field(1, ge=1)
    page_size: int = Field(6, ge=1, le=256)
    similarity_threshold: float | None = Field(None, ge=0.0, le=1.0)
    vector_similarity_weight: float | None = Field(None, ge=0.0, le=1.0)


class AnswerRequest(_Strict):
    question: str = Field(min_length=1, max_length=4000)
    dataset_ids: list[str] = Field(min_length=1)
    document_ids: list[str] | None = None
    top_n: int = Field(6, ge=1, le=64)
    similarity_threshold: float | None = Field(None, ge=0.0, le=1.0)
    vector_similarity_weight: float | None = Field(None, ge=0.0, le=1.0)
    stream: bool = False
