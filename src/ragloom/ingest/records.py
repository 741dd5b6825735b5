"""Search-store rows of a task's chunks: records (with parent rows) and the TOC row.

Row ids come from :mod:`ragloom.docstore.ids`; tags are added by the task runner
(:mod:`ragloom.service.documents.ingestion`), which knows the knowledge base's tag sets."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ragloom.dataflow import Chunk, ChunkKind, ChunkRecord
from ragloom.docstore.ids import chunk_id, parent_id, toc_id
from ragloom.errors import ModelError
from ragloom.ingest.job import ORDER_STRIDE, Job, Progress
from ragloom.knowledge.toc import TocEntry, build_toc, dump_toc

if TYPE_CHECKING:
    from ragloom.models.chat import ChatModel
    from ragloom.nlp import ChunkTerms
    from ragloom.nlp.languages import Analyzers

log = logging.getLogger(__name__)


def to_records(analyzers: Analyzers, job: Job, chunks: list[Chunk], vectors: np.ndarray,
               titles: Sequence[tuple[int, str]] = ()) -> list[ChunkRecord]:
    """Search-store rows: one per chunk, plus one hidden row per distinct parent text
    (parent-child chunking: children are matched, the parent is swapped in at retrieval).
    A qa chunk is indexed by its questions only (its text keeps question and answer); another chunk's
    questions (written by the chat model, ``auto_questions``) are indexed beside its text. Each text is
    analysed for the knowledge base's language (``auto``: its own, :meth:`Analyzers.for_text`)."""
    from ragloom.nlp import analyze_chunk

    records: list[ChunkRecord] = []
    parents: dict[str, list[int]] = {}
    for c, vec in zip(chunks, vectors, strict=True):
        # a qa chunk is matched by its questions; generated questions (auto_questions) come beside the text
        indexed = "\n".join(c.questions) if c.questions and c.method == "qa" else c.text
        analyzer = analyzers.for_text(indexed, job.language)
        terms = analyze_chunk(analyzer, indexed, title=job.title or "", important_keywords=c.important_keywords,
                              questions=c.questions)
        pid = parent_id(job.version_id, c.parent_text) if c.parent_text else None
        if pid is not None:
            parents.setdefault(pid, []).append(len(records))
        records.append(_record(job, c, vec, terms, pid))
    for pid, members in parents.items():
        first = chunks[members[0]]
        text = first.parent_text or ""
        vec = np.mean([records[i].vector for i in members], axis=0)
        positions = [p for i in members for p in records[i].positions]
        terms = analyze_chunk(analyzers.for_text(text, job.language), text, title=job.title or "")
        parent = Chunk(text=text, order=first.order, positions=list(dict.fromkeys(positions)),
                       heading_path=first.heading_path, kind=ChunkKind.PARENT, method=first.method)
        row = _record(job, parent, (vec / (np.linalg.norm(vec) or 1.0)).astype(np.float32), terms, None)
        row.id, row.available = pid, False
        records.append(row)
    entries = build_toc(titles, [(r.id, c.text) for c, r in zip(chunks, records, strict=False)])
    if entries:
        records.append(_toc_record(job, entries, records[0].vector))
    return records


def llm_toc(chat: ChatModel | None, max_context_tokens: int, job: Job, chunks: list[Chunk],
            records: list[ChunkRecord], count_tokens: Callable[[str], int], progress: Progress) -> str:
    """With ``parser_config.toc_extraction`` and no TOC from headings, ask the chat model for one
    and append its hidden row to ``records``. Returns a note for the task message ("" when no TOC
    was asked for). Never raises for the model: without a chat model, or when it fails, the
    document is indexed without a TOC and the note says why."""
    from ragloom.knowledge.toc_llm import batch_budget, build_toc_with_llm

    if not job.parser_config.get("toc_extraction") or not chunks or any(r.kind == ChunkKind.TOC for r in records):
        return ""
    if chat is None:
        log.info("task %s: toc_extraction is on but no chat model is configured; no TOC", job.task_id)
        return "no TOC: toc_extraction needs a chat model (set chat_base_url and chat_model)"
    progress(0.85, "asking the chat model for a table of contents", force=True)
    pairs = [(r.id, c.text) for c, r in zip(chunks, records, strict=False)]
    try:
        built = build_toc_with_llm(chat, pairs, count_tokens,
                                   budget=batch_budget(max_context_tokens))
    except ModelError as exc:
        log.warning("task %s: no TOC, the chat model failed: %s", job.task_id, exc.message)
        return f"no TOC: the chat model failed ({exc.message})"
    if built.entries:
        records.append(_toc_record(job, built.entries, records[0].vector))
    return built.note


def _toc_record(job: Job, entries: Sequence[TocEntry], vector: np.ndarray) -> ChunkRecord:
    """The hidden table-of-contents row of this task's chunks."""
    return ChunkRecord(id=toc_id(job.version_id, job.from_page), kb_id=job.kb_id, doc_id=job.doc_id,
                       version_id=job.version_id, content=dump_toc(entries), vector=vector,
                       document_name=job.filename, available=False, kind=ChunkKind.TOC,
                       order=job.order_base + ORDER_STRIDE - 1)


def _record(job: Job, c: Chunk, vec: np.ndarray, terms: ChunkTerms, parent: str | None) -> ChunkRecord:
    return ChunkRecord(
        id=chunk_id(job.version_id, c.order), kb_id=job.kb_id, doc_id=job.doc_id,
        version_id=job.version_id, content=c.text, vector=vec, document_name=job.filename,
        content_terms=terms.content_terms, content_fine_terms=terms.content_fine_terms,
        title_terms=terms.title_terms, title_fine_terms=terms.title_fine_terms,
        important_keywords=terms.important_keywords, important_terms=terms.important_terms,
        question_terms=terms.question_terms, order=c.order, kind=c.kind,
        positions=list(c.positions), heading_path=list(c.heading_path), html=c.html, parent_id=parent,
        tag_keywords=list(c.tag_keywords), table=c.table, questions=list(c.questions),
    )

