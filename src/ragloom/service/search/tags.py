"""Tag sets use cases: tag chunks and questions, list tags (``tag_kb_ids`` are validated in ``knowledgebases``).

The logic lives in :mod:`ragloom.knowledge.tags` and the retrieval stage
:mod:`ragloom.retrieval.tags`; this module resolves what they need from the
metadata DB (which knowledge bases are tag sets of the tenant, their active
versions), keeps the tag priors in the context's cache and hands them a tagger.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from ragloom.context import Context, Principal
from ragloom.dataflow import ChunkRecord
from ragloom.db.models import Document, KnowledgeBase
from ragloom.docstore.base import Filters
from ragloom.knowledge.tags import Tagger, TagSets, count_tags
from ragloom.retrieval import tags as tag_stage
from ragloom.schemas.datasets import DatasetTags
from ragloom.service import knowledgebases
from ragloom.service.accounts import workspace_models
from ragloom.service.knowledgebases import TAG_METHOD
from ragloom.service.search.views import tags_view


def resolve_tag_sets(session: Session, *, tenant_id: str, kb_ids: Sequence[str], topn: int) -> TagSets | None:
    """The tenant's tag sets among ``kb_ids`` (deleted ones and other tenants' ignored) with their
    active versions; None when none is left."""
    if not kb_ids:
        return None
    found = sorted(session.scalars(select(KnowledgeBase.id).where(
        KnowledgeBase.id.in_(list(kb_ids)), KnowledgeBase.tenant_id == tenant_id,
        KnowledgeBase.chunk_method == TAG_METHOD)))
    if not found:
        return None
    versions = sorted(v for v in session.scalars(select(Document.active_version_id).where(
        Document.kb_id.in_(found), Document.active_version_id.is_not(None))) if v)
    return TagSets(tenant_id=tenant_id, kb_ids=tuple(found), version_ids=tuple(versions), topn=topn)


def tagger_for(ctx: Context, *, tenant_id: str, kb_ids: Sequence[str], topn: int) -> Tagger | None:
    """A tagger over the given tag sets, or None when there is none to tag with."""
    with ctx.db.session() as s:
        sets = resolve_tag_sets(s, tenant_id=tenant_id, kb_ids=kb_ids, topn=topn)
    if sets is None or not sets.version_ids:
        return None
    return Tagger(ctx.docstore, ctx.analyzer, sets, ctx.tag_cache.prior(ctx.docstore, sets))


def question_tags(ctx: Context, kbs: Sequence[KnowledgeBase], question: str) -> dict[str, float]:
    """The question's tags over the tag sets of the searched knowledge bases (their union; the
    largest ``topn_tags``); {} when none of them uses a tag set."""
    sets = tag_stage.question_tag_sets(question, [(kb.tag_kb_ids, kb.topn_tags) for kb in kbs])
    if sets is None:
        return {}
    tagger = tagger_for(ctx, tenant_id=kbs[0].tenant_id, kb_ids=sets.kb_ids, topn=sets.topn)
    return tag_stage.question_tags(question, tagger)


def kb_tags(ctx: Context, session: Session, *, principal: Principal, kb_id_or_name: str) -> DatasetTags:
    """How many chunks of a knowledge base's published documents carry each tag, most frequent first:
    for a tag set, the tags of its rows; for another knowledge base, the tags its chunks were given."""
    kb = knowledgebases.get(session, principal=principal, kb_id_or_name=kb_id_or_name)
    versions = [v for v in session.scalars(select(Document.active_version_id).where(
        Document.kb_id == kb.id, Document.active_version_id.is_not(None))) if v]
    counts: Counter[str] = Counter()
    if versions:
        counts.update(count_tags(ctx.docstore, kb.tenant_id, Filters(kb_ids=[kb.id], version_ids=versions)).counts)
    return tags_view(kb, counts, is_tag_set=kb.chunk_method == TAG_METHOD)


def tag_records(ctx: Context, *, tenant_id: str, tag_kb_ids: Sequence[str], topn: int,
                records: Sequence[ChunkRecord]) -> int:
    """Give each searchable record (not hidden TOC rows) its tags from the tag sets, in place;
    records no tag-set row matches go to the chat model when one is configured (else stay
    untagged). Returns how many records got tags."""
    if not tag_kb_ids:
        return 0
    tagger = tagger_for(ctx, tenant_id=tenant_id, kb_ids=tag_kb_ids, topn=topn)
    if tagger is None:
        return 0
    return tag_stage.tag_records(tagger, records, chat=workspace_models.chat_model(ctx, tenant_id))
