"""The resources of knowledge builds: a build with its progress and cost, a cost estimate, a listing
(the API's response models and the CLI's JSON, as in :mod:`ragloom.service.views`)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ragloom.db import models as db
from ragloom.schemas.base import Number, Timestamp, View, iso_utc


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


class BuildsStarted(View):
    """The builds a request queued (none for a dry run) and the estimate they were started with."""

    dry_run: bool
    builds: list[Build]
    estimate: BuildEstimate


def build_view(row: db.KnowledgeBuild) -> Build:
    return Build(
        id=row.id, kb_id=row.kb_id, document_id=row.document_id, kind=row.kind, trigger=row.trigger,
        status=row.status, stage=row.stage, progress=round(row.progress, 4), message=row.message,
        attempts=row.attempts, estimate=BuildEstimate.model_validate(row.estimate) if row.estimate else None,
        stats=dict(row.stats or {}), created_by=row.created_by, created_at=iso_utc(row.created_at),
        started_at=iso_utc(row.started_at), finished_at=iso_utc(row.finished_at),
    )
