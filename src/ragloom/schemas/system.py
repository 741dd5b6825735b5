"""The API's error body and the server's health (workers, queue, the answer self-test)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from ragloom.schemas.base import Number, absent_unless


class ErrorBody(BaseModel):
    """Every error response (4xx and 5xx): the error's class and a message for a person."""

    model_config = ConfigDict(extra="forbid")

    error: str = Field(description="the kind of error, e.g. NotFoundError, InvalidRequestError, HTTPError",
                       examples=["NotFoundError"])
    message: str = Field(examples=["knowledge base 'manuals' not found"])


class WorkerState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    alive: int = Field(description="workers that sent a heartbeat recently (any machine)")
    expected: int | None = Field(description="workers this server's pool runs; null without a pool")
    busy: int = Field(description="alive workers running a task")
    restarts: int | None = Field(description="worker restarts by this server's pool; null without a pool")
    last_exits: list[str]


class QueueState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    queued: int
    running: int
    oldest_queued_seconds: Number | None = Field(description="how long the oldest runnable task has waited")
    builds_queued: int = Field(0, description="knowledge builds (RAPTOR, knowledge graph) waiting for a worker")
    builds_running: int = Field(0, description="knowledge builds a worker is running")


HealthStatus = Literal["ok", "degraded", "unavailable"]


class Health(BaseModel):
    """Liveness of the API and of the ingestion workers; no tenant data. Anyone sees the status; the
    workers and the queue are shown to a caller with an API key or a web session."""

    model_config = ConfigDict(extra="forbid")

    status: HealthStatus = Field(description="ok; degraded: fewer workers alive than expected; unavailable (HTTP "
                                             "503): none, so uploads wait")
    version: str
    workers: WorkerState | SkipJsonSchema[None] = absent_unless("the caller sent an API key or is signed in")
    queue: QueueState | SkipJsonSchema[None] = absent_unless("the caller sent an API key or is signed in")
    message: str | SkipJsonSchema[None] = absent_unless("status is 'unavailable'")
