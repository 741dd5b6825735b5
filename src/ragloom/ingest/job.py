"""A task's inputs (:class:`Job`) and the progress callback the stages report to."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ragloom.nlp.names import telling_name

ORDER_STRIDE = 100_000

__all__ = ["ORDER_STRIDE", "Job", "Progress", "no_progress", "telling_name"]


@dataclass(slots=True)
class Job:
    """Everything the stages need to know about the file they work on (read once at the task's start)."""

    task_id: str
    tenant_id: str
    kb_id: str
    doc_id: str
    version_id: str
    filename: str
    content_hash: str
    file_key: str  # the object store key of the version's file (DocumentVersion.file_key)
    chunk_method: str
    parser_config: dict[str, Any] = field(default_factory=dict)
    embedding_model: str = ""
    language: str = "English"
    from_page: int = 0  # 1-based first page of a page-range task; 0 = the whole document
    to_page: int = 100_000_000
    tag_kb_ids: tuple[str, ...] = ()  # the knowledge base's tag sets: its chunks get tags from them
    topn_tags: int = 3

    @property
    def title(self) -> str | None:
        """The file name as the document's title (blended into its vectors, indexed as its title
        terms), or None when the name says nothing (:func:`telling_name`)."""
        return telling_name(self.filename)

    @property
    def is_page_range(self) -> bool:
        return self.from_page > 0

    @property
    def order_base(self) -> int:
        """Chunk orders of a page-range task start at ``from_page * 100000``, so the
        chunks of all tasks of a version sort in reading order and never collide."""
        return self.from_page * ORDER_STRIDE


class Progress(Protocol):
    """Where a stage reports how far it got (0..1) and what it does. The task runner's implementation
    (:class:`ragloom.service.documents.ingestion.TaskProgress`) records it and raises when the task must stop."""

    def __call__(self, progress: float, message: str, *, force: bool = False) -> None: ...


def no_progress(progress: float, message: str, *, force: bool = False) -> None:
    """A :class:`Progress` that reports nowhere (parsing and chunking a file outside a task)."""
