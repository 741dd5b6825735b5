"""Put an evaluation corpus into a knowledge base through the normal service layer.

One document per corpus item (``<id>.txt`` for text items, the file name for path
items), into a scratch knowledge base. Tasks run in this process
(:func:`ragloom.worker.run_until`), so no worker needs to be running. An existing
knowledge base is measured as it stands: nothing is uploaded into it
(:func:`existing_kb_notes`).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import select

from ragloom.context import Context, Principal
from ragloom.db.models import Document
from ragloom.evaluation.dataset import CorpusItem, Dataset
from ragloom.schemas.datasets import KBCreate
from ragloom.service import knowledgebases
from ragloom.service.documents import catalog
from ragloom.worker import run_until

log = logging.getLogger(__name__)

# (stage, done, total): called as ingestion and the query runs advance
Progress = Callable[[str, int, int], None]
UPLOAD_BATCH = 100


def no_progress(stage: str, done: int, total: int) -> None:
    return None


@dataclass(slots=True)
class IngestResult:
    kb_id: str
    kb_name: str
    scratch: bool
    documents: int = 0
    failed: list[str] = field(default_factory=list)  # document names whose parsing failed
    empty: list[str] = field(default_factory=list)  # corpus ids with an empty text, not ingested


def guess_language(items: list[CorpusItem]) -> str:
    """``zh`` when at least a fifth of the sampled text characters are CJK ideographs; else the sample's
    language when ragloom analyses it apart (:func:`ragloom.nlp.languages.detect_language`: de, fr, ja...);
    else ``en``."""
    from ragloom.nlp.languages import detect_language

    sample = "".join((c.text or "")[:400] for c in items[:200])
    if not sample:
        return "en"
    cjk = sum(1 for ch in sample if "\u4e00" <= ch <= "\u9fff")
    found = detect_language(sample)
    if cjk / len(sample) >= 0.2 and found != "ja":
        return "zh"
    return found if found not in ("zh", "en") else "en"


def open_kb(ctx: Context, principal: Principal, dataset: Dataset, *, kb: str | None = None,
            language: str | None = None) -> IngestResult:
    """An existing knowledge base (``kb``, by id or name) or a new scratch one with a random name."""
    with ctx.db.session() as s:
        if kb is not None:
            found = knowledgebases.get(s, principal=principal, kb_id_or_name=kb)
            return IngestResult(kb_id=found.id, kb_name=found.name, scratch=False)
        name = f"eval-{uuid.uuid4().hex[:10]}"
        spec = KBCreate(name=name, language=language or guess_language(dataset.corpus),
                                       description=f"scratch knowledge base for evaluating {dataset.directory}")
        created = knowledgebases.create(ctx, s, principal=principal, spec=spec)
        return IngestResult(kb_id=created.id, kb_name=created.name, scratch=True)


def ingest(ctx: Context, principal: Principal, dataset: Dataset, target: IngestResult,
           progress: Progress = no_progress) -> IngestResult:
    """Upload every corpus item into ``target`` and run the parsing tasks until all are done or failed."""
    items = [c for c in dataset.corpus if not c.is_empty]
    target.empty = [c.id for c in dataset.corpus if c.is_empty]
    ids: list[str] = []
    for start in range(0, len(items), UPLOAD_BATCH):
        batch = items[start : start + UPLOAD_BATCH]
        ups = [catalog.Upload(filename=c.document_name, data=c.data()) for c in batch]
        with ctx.db.session() as s:
            docs = catalog.add_documents(ctx, s, principal=principal, kb_id=target.kb_id, uploads=ups)
            ids.extend(d.id for d in docs)
        progress("upload", min(start + UPLOAD_BATCH, len(items)), len(items))
    _drain(ctx, ids, progress)
    with ctx.db.session() as s:
        rows = s.execute(select(Document.name, Document.status).where(Document.id.in_(ids))).all()
    target.documents = len(rows)
    target.failed = sorted(name for name, status in rows if status != "done")
    if target.failed:
        log.warning("%d of %d corpus documents failed to parse: %s", len(target.failed), len(rows),
                    ", ".join(target.failed[:10]))
    return target


def existing_kb_notes(ctx: Context, dataset: Dataset, target: IngestResult) -> list[str]:
    """Measure an existing knowledge base as it stands (nothing is uploaded): notes on the corpus
    documents it lacks or could not parse; ``target`` gets the counts."""
    items = [c for c in dataset.corpus if not c.is_empty]
    target.empty = [c.id for c in dataset.corpus if c.is_empty]
    with ctx.db.session() as s:
        rows = s.execute(select(Document.name, Document.status).where(Document.kb_id == target.kb_id)).all()
    status = dict(rows)
    target.documents = sum(1 for c in items if c.document_name in status)
    target.failed = sorted(c.document_name for c in items if status.get(c.document_name, "done") != "done")
    missing = [c.document_name for c in items if c.document_name not in status]
    if not missing:
        return []
    shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
    return [f"{len(missing)} corpus documents are not in {target.kb_name} and can never be found: {shown}"]


def _drain(ctx: Context, ids: list[str], progress: Progress) -> None:
    total = len(ids)

    def done() -> bool:
        with ctx.db.session() as s:
            statuses = s.scalars(select(Document.status).where(Document.id.in_(ids))).all()
        finished = sum(1 for st in statuses if st in ("done", "failed", "cancelled"))
        progress("ingest", finished, total)
        return finished >= total

    run_until(ctx, done, poll=0.01)


def drop_kb(ctx: Context, principal: Principal, target: IngestResult) -> None:
    """Delete a scratch knowledge base (never one the caller named)."""
    if not target.scratch:
        return
    with ctx.db.session() as s:
        knowledgebases.delete(ctx, s, principal=principal, kb_id_or_name=target.kb_id)
