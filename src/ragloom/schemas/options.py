"""What a caller may choose about one retrieval: the one declaration of its fields, defaults, ranges
and descriptions. The API's request bodies are built on these models (:mod:`ragloom.schemas.requests`), the
search and answer use cases take them, and the stages receive them inside ``RetrievalParams``.

:class:`EvidenceOptions` is what an answer and a retrieval share (which chunks may serve, how strictly
they are kept); :class:`RetrievalOptions` adds the page, the mode, the fusion and ``explain``.
Unset weights and thresholds (``None``) are resolved by the chosen fusion
(:mod:`ragloom.retrieval.fusion`), the knowledge base and the settings, not here.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

Mode = Literal["hybrid", "keyword", "vector"]
BuiltinFusion = Literal["normalized", "weighted"]  # the fusions a request may choose (ragloom.retrieval.fusion)

MAX_PAGE = 1_000_000_000  # static bound; the real one is page x page_size <= RAGLOOM_MAX_RESULT_WINDOW
MAX_PAGE_SIZE = 256
MAX_DOCUMENT_IDS = 10_000  # document ids in one request


class EvidenceOptions(BaseModel):
    """Which chunks may serve as evidence and how strictly they are kept: the options an answer
    takes, and the part of a retrieval's options an answer shares."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    route: bool = Field(False, description="search only the datasets whose description fits the question")
    document_ids: list[str] | None = Field(None, max_length=MAX_DOCUMENT_IDS,
                                           description="search only these documents of the datasets")
    metadata_filter: dict[str, Any] | None = Field(
        None, description='e.g. {"and": [{"key": "author", "op": "=", "value": "Ada"}, '
                          '{"key": "year", "op": "range", "value": [2020, null]}]}')
    toc_enhance: bool = Field(False, description="re-score with the best document's table of contents")
    use_kg: bool = Field(False, description="put first one evidence item from the dataset's knowledge graph "
                         "(entities, relations, a community report) when one is built (POST .../builds kind graph)")
    similarity_threshold: float | None = Field(
        None, ge=0.0, le=1.0, description="drop chunks scoring lower: with the weighted fusion, on their "
        "weighted similarity (default: the knowledge base's); with the normalized fusion (relative scores), on "
        "their relevance, as min_relevance")
    vector_similarity_weight: float | None = Field(
        None, ge=0.0, le=1.0, description="the vector side's weight; default: the fusion's (normalized: the "
        "server's RAGLOOM_FUSION_VECTOR_WEIGHT; weighted: the knowledge base's)")
    min_relevance: float | None = Field(
        None, ge=0.0, le=1.0, description="drop chunks whose relevance (the calibrated probability that they are "
        "relevant, 0..1) is lower, whatever the fusion; default: similarity_threshold when one is given and the "
        "fusion is normalized, else the knowledge base's min_relevance, else the server's. 0 turns off the "
        "question's gate (min_answerable) too")
    min_answerable: float | None = Field(
        None, ge=0.0, le=1.0, description="return nothing when the probability that any candidate is relevant "
        "(the question is on a topic the documents cover) is lower; default: the server's "
        "(RAGLOOM_MIN_ANSWERABLE); 0: no gate")
    cross_languages: list[Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=32)]] = \
        Field(default_factory=list, max_length=8, description="languages the question is also searched in, e.g. "
              "[\"English\", \"Chinese\"]: the workspace's chat model translates it first (explain shows the "
              "translations); without a chat model the question is searched as asked")


class RetrievalOptions(EvidenceOptions):
    """The options of one retrieval: the evidence options plus the page, the mode, the fusion and ``explain``."""

    page: int = Field(1, ge=1, le=MAX_PAGE, description="1-based; page x page_size may not exceed the server's "
                      "result window (RAGLOOM_MAX_RESULT_WINDOW, default 1024)")
    page_size: int = Field(6, ge=1, le=MAX_PAGE_SIZE, description="chunks per page")
    mode: Mode = Field("hybrid", description="hybrid, keyword or vector")
    fusion: BuiltinFusion | None = Field(
        None, description="hybrid scoring: normalized (z-scores, relative, no threshold) or weighted (the "
        "reference's, with the knowledge base's weight and threshold); default: the server's setting")
    explain: bool = Field(False, description="return every candidate's scores and the stage that dropped it")
    rerank: bool = Field(True, description="re-score with the workspace's reranker when one is configured; "
                         "false: skip it (to compare, say)")

    @classmethod
    def of_answer(cls, evidence: EvidenceOptions, top_n: int) -> RetrievalOptions:
        """The retrieval an answer runs: its evidence options, its ``top_n`` chunks on one page."""
        return cls(page_size=top_n, **evidence.model_dump(include=set(EvidenceOptions.model_fields)))
