"""Request bodies of the API (responses are the models of ``ragloom.service.views`` and ``ragloom.api.responses``).

Creating a dataset takes ``ragloom.service.knowledgebases.KBCreate`` itself; the retrieval and answer
bodies are the use cases' options (``ragloom.retrieval.options``) plus the question and the datasets."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ragloom.retrieval.options import MAX_DOCUMENT_IDS, EvidenceOptions, RetrievalOptions

MAX_DATASETS = 100  # knowledge bases searched by one request


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DocumentIds(_Strict):
    ids: list[str] = Field(min_length=1, max_length=MAX_DOCUMENT_IDS)


class _Question(_Strict):
    """The question and where to look: the first fields of the retrieval and answer bodies."""

    question: str = Field(min_length=1, max_length=4000)
    dataset_ids: list[str] = Field(default_factory=list, max_length=MAX_DATASETS,
                                   description="required unless route is true")


class RetrievalRequest(RetrievalOptions, _Question):
    """A question, the datasets to search, and how to search them."""


class AnswerRequest(EvidenceOptions, _Question):
    """A question, the datasets to answer from, which of their chunks may serve as evidence, and how many."""

    top_n: int = Field(6, ge=1, le=64, description="evidence chunks; at most RAGLOOM_MAX_RESULT_WINDOW too")
    stream: bool = False


class MetadataUpdate(_Strict):
    """Keys to set (scalars or lists of scalars); ``null`` removes a key."""

    metadata: dict[str, str | int | float | bool | list[str | int | float | bool] | None]


class DocumentUpdate(_Strict):
    """A document's own chunk method (``null`` = follow the dataset); changing it re-parses the document."""

    chunk_method: str | None
    parser_config: dict[str, object] | None = None
