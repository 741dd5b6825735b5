"""Knowledge builds: a knowledge base's build settings (RAPTOR summary trees, the knowledge graph),
validated like the chunking parameters; a request to start builds; and a build with its progress,
cost estimate and the builds a request started, as the API shows them."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ragloom.errors import InvalidRequestError
from ragloom.schemas.base import Number, Timestamp, View

MAX_DOCUMENTS = 1000  # document_ids of one request


PROMPT_SLOT = "{cluster_content}"
DEFAULT_PROMPT = (
    "Below are passages of a document that belong together. Write a summary of them: first a short title "
    "line, then a few sentences that keep the facts, names and numbers they state. Add nothing they do not "
    "say.\n\n" + PROMPT_SLOT
)


class RaptorSettings(BaseModel):
    """How RAPTOR summary trees are built for a knowledge base (``parser_config.raptor`` or ``raptor``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    use_raptor: bool = Field(False, description="build a document's summaries by itself when the document is "
                             "published (new, replaced or re-parsed); builds can always be started by hand")
    scope: Literal["file", "dataset"] = Field(
        "file", description="file: one tree per document; dataset: also one tree over the documents' roots")
    max_cluster: int = Field(64, ge=2, le=1024, description="most clusters a layer is split into")
    max_token: int = Field(256, ge=32, le=2048, description="longest summary, in tokens")
    threshold: float = Field(0.1, gt=0.0, lt=1.0, description="a row also joins every other cluster it belongs "
                             "to with at least this probability")
    random_seed: int = Field(0, ge=0, le=2**32 - 1, description="seed of the clustering (same seed: same tree)")
    max_depth: int = Field(5, ge=1, le=12, description="most summary layers above the chunks")
    prompt: str = Field(DEFAULT_PROMPT, min_length=1, max_length=4000,
                        description=f"the summary prompt; {PROMPT_SLOT} is replaced by the cluster's texts")

    @field_validator("prompt")
    @classmethod
    def _has_slot(cls, value: str) -> str:
        if PROMPT_SLOT not in value:
            raise ValueError(f"must contain {PROMPT_SLOT}, where the cluster's texts go")
        return value

    @classmethod
    def parse(cls, data: Any, *, strict: bool = True) -> RaptorSettings:
        """Validated settings; :class:`InvalidRequestError` naming every bad field."""
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise InvalidRequestError("raptor must be an object, e.g. {\"use_raptor\": true}")
        try:
            return cls.model_validate(data, strict=strict)
        except ValidationError as exc:
            problems = "; ".join(f"raptor.{'.'.join(str(p) for p in err['loc']) or 'settings'}: {err['msg']}"
                                 for err in exc.errors())
            raise InvalidRequestError(f"invalid RAPTOR settings: {problems}") from exc


class GraphSettings(BaseModel):
    """How the knowledge graph of a knowledge base is built (``graphrag``, or ``parser_config.graphrag``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    use_graphrag: bool = Field(False, description="extract a document's subgraph by itself when the document is "
                               "published (new, replaced or re-parsed); builds can always be started by hand")
    method: Literal["offline", "light", "general"] = Field(
        "offline", description="offline: capitalised noun phrases and co-occurrence (no chat model); light: "
        "the chat model, one pass; general: the chat model with gleaning and the entity types below")
    entity_types: list[str] = Field(default_factory=lambda: ["organization", "person", "geo", "event", "category"],
                                    max_length=32, description="entity types the general method extracts")
    resolution: bool = Field(False, description="merge entities that name the same thing (e.g. IBM and I.B.M.)")
    community: bool = Field(False, description="detect communities (Leiden) and write their reports")

    @classmethod
    def parse(cls, data: Any, *, strict: bool = True) -> GraphSettings:
        """Validated settings; :class:`InvalidRequestError` naming every bad field."""
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise InvalidRequestError("graphrag must be an object, e.g. {\"use_graphrag\": true}")
        try:
            return cls.model_validate(data, strict=strict)
        except ValidationError as exc:
            problems = "; ".join(f"graphrag.{'.'.join(str(p) for p in err['loc']) or 'settings'}: {err['msg']}"
                                 for err in exc.errors())
            raise InvalidRequestError(f"invalid knowledge-graph settings: {problems}") from exc


class BuildEstimate(View):
    """What a build would cost before it starts: chat-model calls and tokens, from the documents' chunks
    and the method. The first summary layer is planned for real; the layers above are projected."""

    kind: str
    mode: str = Field(description="llm (the workspace's chat model writes summaries) or extractive (no chat "
                                  "model: the sentences nearest each cluster's centre, no LLM call)")
    model: str | None = Field(description="the chat model; null in extractive mode")
    documents: int = Field(description="documents considered (with a published version)")
    documents_to_build: int = Field(description="of them, those whose part is not up to date")
    llm_calls: int = Field(description="chat-model calls expected (0 in extractive mode)")
    llm_calls_cached: int = Field(description="of the first layer's calls, those already in the LLM cache "
                                              "(free)")
    prompt_tokens: int = Field(description="prompt tokens of those calls (the embedder's tokenizer)")
    completion_tokens: int = Field(description="at most this many reply tokens")
    note: str
    details: dict[str, Any] = Field(description="the kind's own figures (raptor: chunks, summaries, layers, "
                                                "knowledge_base_tree)")


class Build(View):
    """A knowledge build: queued, running, done, failed or cancelled, with its stage, progress and costs."""

    id: str
    kb_id: str
    document_id: str | None = Field(description="null: every document of the dataset")
    kind: str
    trigger: str = Field(description="user (started by hand), publish (a document was published) or delete "
                                     "(a document was deleted)")
    status: str = Field(description="queued, running, done, failed or cancelled")
    stage: str
    progress: Number
    message: str
    attempts: int
    estimate: BuildEstimate | None
    stats: dict[str, Any] = Field(description="what it did: documents built and skipped, summaries made and "
                                              "reused, llm calls, cache hits, prompt and completion tokens")
    created_by: str | None
    created_at: Timestamp | None
    started_at: Timestamp | None
    finished_at: Timestamp | None


class BuildList(View):
    builds: list[Build]
    total: int


class KnowledgeDropped(View):
    """What deleting a kind of built knowledge removed."""

    kind: str = Field(description="raptor or graph")
    removed: int = Field(description="summaries deleted (raptor) or entities (graph)")


class BuildsStarted(View):
    """The builds a request queued (none for a dry run) and the estimate they were started with."""

    dry_run: bool
    builds: list[Build]
    estimate: BuildEstimate


class BuildRequest(BaseModel):
    """What to build: ``kind`` over the dataset, or over some of its documents (one build each);
    ``dry_run`` only estimates."""

    model_config = ConfigDict(extra="forbid")

    kind: str = Field(min_length=1, max_length=16, description="raptor or graph")
    document_ids: list[str] | None = Field(None, max_length=MAX_DOCUMENTS, description="ids or names; null: the "
                                           "whole dataset (documents whose part is up to date are skipped)")
    dry_run: bool = Field(False, description="only estimate the cost (chat-model calls and tokens); start nothing")
