"""The states things go through, one enum each (``StrEnum``: stored and sent as their plain value).

A leaf module: every layer may import it.
"""

from __future__ import annotations

from enum import StrEnum


class TaskStatus(StrEnum):
    """An ingestion task's state; a document shows its latest version's tasks' (the most telling)."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


DocumentStatus = TaskStatus  # a document mirrors the tasks of its latest version


class VersionStatus(StrEnum):
    """A document version: built by its tasks, then published (ready) or dropped."""

    BUILDING = "building"
    READY = "ready"
    FAILED = "failed"
    SUPERSEDED = "superseded"
    CANCELLED = "cancelled"


class VersionReason(StrEnum):
    """Why a document version was made."""

    UPLOAD = "upload"  # a file uploaded (a new document, or new content of an existing one)
    REPARSE = "reparse"  # the same file parsed again
    SETTINGS = "settings"  # the document's chunking settings changed
    REINDEX = "reindex"  # the search store rebuilt


class RunOutcome(StrEnum):
    """How one run of a task by a worker ended."""

    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"
    RETRY = "retry"  # a transient fault: queued again after a pause
    INTERRUPTED = "interrupted"  # the worker is stopping: handed back to the queue


class Role(StrEnum):
    """A member's role in a workspace (tenant)."""

    OWNER = "owner"
    ADMIN = "admin"
    MEMBER = "member"


class KeyScope(StrEnum):
    """What an API key may do: read (list, search, ask) or also change things."""

    READ = "read"
    READ_WRITE = "read-write"


class MessageRole(StrEnum):
    """Who wrote a message of a chat session."""

    USER = "user"
    ASSISTANT = "assistant"


class Feedback(StrEnum):
    """A user's rating of an assistant's answer."""

    UP = "up"
    DOWN = "down"


class ReferenceStatus(StrEnum):
    """A stored citation compared with its document now: still the version searches see, an older
    version of a document that was re-parsed or replaced, or a document that is gone."""

    CURRENT = "current"
    SUPERSEDED = "superseded"
    DELETED = "deleted"
