"""Figures at ingestion: each figure of a document becomes a chunk with its picture kept
(:mod:`ragloom.ingest.figures` finds and reads them; this module stores the pictures and asks the
workspace's vision model for descriptions).

The picture goes to the object store (tenant namespace) and a :class:`~ragloom.db.models.VersionFigure`
row ties it to the chunk (``GET /datasets/{kb}/documents/{doc}/chunks/{chunk}/figure.png``; the object GC
keeps it while the row lives). With a vision provider (``PUT /api/v1/providers/vision``), each
picture is described by the model once: descriptions are kept in the workspace's LLM cache under the
picture's hash, so a re-parse, or the same picture in another document, costs no call; a model that fails
leaves the figure without a description (its caption, OCR text and context stay) and the task says so.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass

from ragloom.context import Context
from ragloom.dataflow import Chunk, ParsedDocument
from ragloom.db.models import VersionFigure
from ragloom.docstore.ids import chunk_id
from ragloom.errors import ModelError
from ragloom.ingest import figures
from ragloom.ingest.guard import checkpoint
from ragloom.ingest.job import Job
from ragloom.models.vision import DESCRIBE_PROMPT
from ragloom.service.accounts import workspace_models
from ragloom.service.builds.llm_cache import LlmCache

log = logging.getLogger(__name__)

NO_FIGURE_METHODS = figures.NO_FIGURE_METHODS


@dataclass(slots=True)
class FigureReport:
    figures: int = 0
    described: int = 0
    from_cache: int = 0
    failed: str = ""

    @property
    def note(self) -> str:
        if not self.figures:
            return ""
        said = f"{self.figures} figures"
        if self.described:
            said += f", {self.described} described ({self.from_cache} from the cache)"
        if self.failed:
            said += f"; the vision model failed: {self.failed}"
        return said


def description_key(model: str, picture_sha256: str) -> str:
    """The LLM-cache key of a picture's description by ``model`` (the picture named by its SHA-256)."""
    return hashlib.sha256(f"figure\0{model}\0{DESCRIBE_PROMPT}\0{picture_sha256}".encode()).hexdigest()


def estimate(ctx: Context, tenant_id: str, picture_hashes: list[str]) -> tuple[str | None, int | None]:
    """What describing pictures (named by their SHA-256) would cost: the workspace's vision model and the
    calls it would be asked (the pictures its cache does not hold); ``(None, None)`` without one."""
    vision = workspace_models.vision_model(ctx, tenant_id)
    if vision is None:
        return None, None
    keys = [description_key(vision.name, h) for h in picture_hashes]
    held = LlmCache(ctx.db, tenant_id).get_many(keys) if keys else set()
    return vision.name, sum(1 for k in keys if k not in held)


def add_figures(ctx: Context, job: Job, data: bytes, parsed: ParsedDocument, chunks: list[Chunk],
                report: Callable[[str], None] = lambda message: None) -> FigureReport:
    """Append a chunk per figure of ``parsed`` to ``chunks`` (kind ``figure``) and store its picture."""
    out = FigureReport()
    if job.chunk_method in NO_FIGURE_METHODS:
        return out
    found = figures.find_figures(parsed, data, job.filename)
    if not found:
        return out
    report(f"reading {len(found)} figures")
    vision = workspace_models.vision_model(ctx, job.tenant_id)
    cache = LlmCache(ctx.db, job.tenant_id, model=f"vision:{vision.name}") if vision is not None else None
    rows: list[VersionFigure] = []
    for n, figure in enumerate(found):
        checkpoint()
        figure.ocr_text = figures.read_inside(figure, job.language)
        if vision is not None and cache is not None:
            key = description_key(vision.name, hashlib.sha256(figure.png).hexdigest())
            described = cache.get(key)
            if described is not None:
                out.from_cache += 1
            elif not out.failed:  # after a failure, only what the cache holds
                try:
                    described = vision.describe(figure.png)
                except ModelError as exc:  # the rest of the document is not held up by the model
                    out.failed = exc.message
                    log.warning("task %s: figure %d not described: %s", job.task_id, n, exc.message)
                if described:  # an empty reply is not kept: the next parse asks again
                    cache.put(key, described)
            if described:
                figure.description = described
                out.described += 1
        order = job.order_base + figures.ORDER_OFFSET + n
        chunks.append(figures.figure_chunk(figure, order, job.chunk_method))
        key = ctx.objects.put(figure.png, namespace=job.tenant_id)
        rows.append(VersionFigure(version_id=job.version_id, chunk_id=chunk_id(job.version_id, order),
                                  image_key=key, width=figure.width, height=figure.height,
                                  page=figure.block.page, described_by=vision.name if figure.description and vision
                                  else ""))
    with ctx.db.session() as s:
        for row in rows:
            s.merge(row)
    out.figures = len(found)
    return out
