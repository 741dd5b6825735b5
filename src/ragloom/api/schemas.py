"""Request bodies of the API (responses are the dicts of ``ragloom.service.views``).

Creating a dataset takes ``ragloom.service.knowledgebases.KBCreate`` itself."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_PAGE = 1_000_000_000  # static bound; the real one is page x page_size <= RAGLOOM_MAX_RESULT_WINDOW
MAX_DATASETS = 100  # knowledge bases searched by one request
MAX_DOCUMENT_IDS = 10_000  # document ids in one request


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DocumentIds(_Strict):
    ids: list[str] = Field(min_length=1, max_length=MAX_DOCUMENT_IDS)


class RetrievalRequest(_Strict):
    question: str = Field(min_length=1, max_length=4000)
    dataset_ids: list[str] = Field(default_factory=list, max_length=MAX_DATASETS,
                                   description="required unless route is true")
    route: bool = Field(False, description="search only the datasets whose description fits the question")
    document_ids: list[str] | None = Field(None, max_length=MAX_DOCUMENT_IDS)
    page: int = Field(1, ge=1, le=MAX_PAGE, description="1-based; page x page_size may not exceed the server's "
                      "result window (RAGLOOM_MAX_RESULT_WINDOW, default 1024)")
    page_size: int = Field(6, ge=1, le=256)
    similarity_threshold: float | None = Field(None, ge=0.0, le=1.0)
    vector_similarity_weight: float | None = Field(None, ge=0.0, le=1.0)
    mode: str = Field("hybrid", description="hybrid, keyword or vector")
    fusion: Literal["normalized", "weighted"] | None = Field(
        None, description="hybrid scoring: normalized (z-scores, relative, no threshold) or weighted (the "
        "reference's, with the knowledge base's weight and threshold); default: the server's setting")
    metadata_filter: dict[str, Any] | None = Field(
        None, description='e.g. {"and": [{"key": "author", "op": "=", "value": "Ada"}, '
                          '{"key": "year", "op": "range", "value": [2020, null]}]}')
    explain: bool = Field(False, description="return every candidate's scores and the stage that dropped it")
    toc_enhance: bool = Field(False, description="re-score with the best document's table of contents")


class AnswerRequest(_Strict):
    question: str = Field(min_length=1, max_length=4000)
    dataset_ids: list[str] = Field(default_factory=list, max_length=MAX_DATASETS,
                                   description="required unless route is true")
    route: bool = False
    document_ids: list[str] | None = Field(None, max_length=MAX_DOCUMENT_IDS)
    metadata_filter: dict[str, Any] | None = None
    toc_enhance: bool = False
    top_n: int = Field(6, ge=1, le=64, description="evidence chunks; at most RAGLOOM_MAX_RESULT_WINDOW too")
    similarity_threshold: float | None = Field(None, ge=0.0, le=1.0)
    vector_similarity_weight: float | None = Field(None, ge=0.0, le=1.0)
    stream: bool = False


class MetadataUpdate(_Strict):
    """Keys to set (scalars or lists of scalars); ``null`` removes a key."""

    metadata: dict[str, str | int | float | bool | list[str | int | float | bool] | None]


class DocumentUpdate(_Strict):
    """A document's own chunk method (``null`` = follow the dataset); changing it re-parses the document."""

    chunk_method: str | None
    parser_config: dict[str, object] | None = None
