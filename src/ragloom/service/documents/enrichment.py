"""Chunk enrichment during ingestion: the workspace's chat model writes keywords and questions for each
chunk and fills the metadata fields the knowledge base asks for (:mod:`ragloom.knowledge.enrich`).

Runs after chunking, before embedding, when the document's ``parser_config`` asks for it
(``auto_keywords``, ``auto_questions``, ``metadata_fields``). Calls go through the workspace's LLM
cache (:mod:`ragloom.service.builds.llm_cache`): a re-parse of the same text costs no call. Without a chat
model the document is indexed as it is and its task message says so; a model that fails after its
retries fails the task with the model's reason (a retry later may succeed).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ragloom.context import Context
from ragloom.dataflow import Chunk, ParsedDocument
from ragloom.ingest.guard import checkpoint
from ragloom.ingest.job import Job
from ragloom.knowledge.enrich import Enricher, EnrichSettings
from ragloom.service.builds import llm_cache

log = logging.getLogger(__name__)

SKIPPED_KINDS = ("parent", "toc")  # rows nobody matches directly


@dataclass
class Enriched:
    """What enrichment did to one task's chunks."""

    chunks: int = 0
    calls: int = 0
    cache_hits: int = 0
    unreadable: int = 0
    metadata: dict[str, object] | None = None
    note: str = ""  # why nothing was done, when nothing was


def enrich(ctx: Context, job: Job, parsed: ParsedDocument, chunks: Sequence[Chunk],
           report: Callable[[str], None] = lambda message: None) -> Enriched:
    """Give ``chunks`` their generated keywords and questions (in place) and store the metadata the
    document's beginning gives (values the user set win)."""
    settings = EnrichSettings.of(job.parser_config)
    if not settings.wanted:
        return Enriched()
    model = llm_cache.cached_chat(ctx, job.tenant_id)
    if model is None:
        note = ("no chat model: keywords, questions and metadata were not generated (set one under Model "
                "providers, then re-parse)")
        log.warning("task %s: %s", job.task_id, note)
        return Enriched(note=note)
    enricher = Enricher(model, checkpoint=checkpoint)
    out = Enriched()
    targets = [c for c in chunks if c.kind not in SKIPPED_KINDS and c.text.strip()]
    if settings.keywords or settings.questions:
        def step(done: int, total: int) -> None:
            if done == total or done % 10 == 0:
                report(f"enriching chunks: {done} of {total}")

        results = enricher.chunks([c.text for c in targets], settings, progress=step)
        for c, (keywords, questions) in zip(targets, results, strict=True):
            c.important_keywords = list(dict.fromkeys([*c.important_keywords, *keywords]))
            c.questions = list(dict.fromkeys([*c.questions, *questions]))
        out.chunks = len(targets)
    first_part = not job.is_page_range or job.from_page == 1  # a document's metadata is asked for once
    if settings.metadata_fields and first_part:
        report("filling metadata fields")
        found = enricher.metadata("\n".join(b.text for b in parsed.blocks), settings.metadata_fields)
        if found:
            from ragloom.service.documents.catalog import merge_extracted_metadata

            with ctx.db.session() as s:
                merge_extracted_metadata(s, job.doc_id, found)
        out.metadata = found
    out.calls, out.cache_hits, out.unreadable = model.usage.calls, model.usage.cache_hits, enricher.unreadable
    return out
