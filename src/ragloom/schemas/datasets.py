"""Knowledge bases (datasets) as the API shows them, and their tag counts."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from ragloom.schemas.base import Number, Timestamp, View, absent_unless
from ragloom.schemas.builds import GraphSettings, RaptorSettings


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
