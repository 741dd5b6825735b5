"""A task's inputs (:class:`Job`, read from the DB once) and its progress reporting."""

from __future__ import annotations

import time
from dataclasses import dataclass

from ragloom.db.models import Document, DocumentVersion, KnowledgeBase, Task
from ragloom.errors import TaskCancelledError
from ragloom.ingest.guard import checkpoint
from ragloom.service import tasks
from ragloom.service.context import Context

ORDER_STRIDE = 100_000


@dataclass(slots=True)
class Job:
    """Everything a task needs, read from the DB once at its start."""

    task_id: str
    tenant_id: str
    kb_id: str
    doc_id: str
    version_id: str
    filename: str
    content_hash: str
    file_key: str  # the object store key of the version's file (DocumentVersion.file_key)
    chunk_method: str
    parser_config: dict
    embedding_model: str
    language: str
    from_page: int = 0  # 1-based first page of a page-range task; 0 = the whole document
    to_page: int = 100_000_000
    tag_kb_ids: tuple[str, ...] = ()  # the knowledge base's tag sets: its chunks get tags from them
    topn_tags: int = 3

    @property
    def is_page_range(self) -> bool:
        return self.from_page > 0

    @property
    def order_base(self) -> int:
        """Chunk orders of a page-range task start at ``from_page * 100000``, so the
        chunks of all tasks of a version sort in reading order and never collide."""
        return self.from_page * ORDER_STRIDE


class Progress:
    """Reports progress to the task row; raises TaskCancelledError once cancel is asked, and
    whatever the task's guard raises (:func:`ragloom.ingest.guard.checkpoint`)."""

    def __init__(self, ctx: Context, task_id: str) -> None:
        self.ctx = ctx
        self.task_id = task_id
        self._last = 0.0

    def __call__(self, progress: float, message: str, *, force: bool = False) -> None:
        checkpoint()
        now = time.monotonic()
        if not force and now - self._last < 0.5:
            return
        self._last = now
        with self.ctx.db.session() as s:
            alive = tasks.report(s, self.task_id, progress=progress, message=message)
        if not alive:
            raise TaskCancelledError("cancelled by user")


def load_job(ctx: Context, task_id: str) -> Job:
    with ctx.db.session() as s:
        task = s.get(Task, task_id)
        assert task is not None
        version = s.get(DocumentVersion, task.version_id)
        doc = s.get(Document, task.document_id)
        kb = s.get(KnowledgeBase, task.kb_id)
        assert version is not None and doc is not None and kb is not None
        return Job(
            task_id=task.id, tenant_id=task.tenant_id, kb_id=kb.id, doc_id=doc.id, version_id=version.id,
            filename=doc.name, content_hash=version.content_hash, file_key=version.file_key,
            chunk_method=version.chunk_method,
            parser_config=dict(version.parser_config or {}), embedding_model=kb.embedding_model,
            language=kb.language, from_page=task.from_page, to_page=task.to_page,
            tag_kb_ids=tuple(kb.tag_kb_ids or ()), topn_tags=kb.topn_tags,
        )
