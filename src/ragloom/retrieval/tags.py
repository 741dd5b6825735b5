"""Tag features as a retrieval stage (REFERENCE §5.5, §5.3): which tag sets a question is tagged with,
the question's tags, and the tags of chunk records (what :class:`~ragloom.retrieval.features.RankFeatures`
compares at search time).

The stage receives plain data and a ready :class:`~ragloom.knowledge.tags.Tagger` (the service resolves
the tag sets from the metadata DB and keeps their priors in the context's cache); it reads nothing itself.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragloom.dataflow import ChunkKind, ChunkRecord
from ragloom.knowledge.tags import Tagger, tag_all

if TYPE_CHECKING:
    from ragloom.models.chat import ChatModel

__all__ = ["QuestionTagSets", "question_tag_sets", "question_tags", "tag_records"]


@dataclass(frozen=True)
class QuestionTagSets:
    """The tag sets to tag a question with, and how many tags to keep."""

    kb_ids: list[str]
    topn: int


def question_tag_sets(question: str, searched: Sequence[tuple[Sequence[str] | None, int]]) -> QuestionTagSets | None:
    """Over the searched knowledge bases' ``(tag_kb_ids, topn_tags)``: the union of their tag sets (in
    order) and the largest ``topn_tags``; None when none of them uses a tag set or the question is blank."""
    tag_ids = list(dict.fromkeys(t for tag_kb_ids, _ in searched for t in (tag_kb_ids or [])))
    if not tag_ids or not question.strip():
        return None
    return QuestionTagSets(kb_ids=tag_ids, topn=max(topn for _, topn in searched))


def question_tags(question: str, tagger: Tagger | None) -> dict[str, float]:
    """The question's tags (one matching term is enough); {} without a tagger."""
    return tagger.tag(question, min_terms=1) if tagger is not None else {}


def tag_records(tagger: Tagger, records: Sequence[ChunkRecord], *, chat: ChatModel | None) -> int:
    """Give each searchable record (not hidden TOC rows) its tags, in place; records no tag-set row
    matches go to ``chat`` when given (else stay untagged). Returns how many records got tags."""
    targets = [r for r in records if r.kind != ChunkKind.TOC]
    seeds = [zlib.crc32(r.id.encode()) for r in targets]  # the LLM's examples: random, but stable per chunk
    found = tag_all(tagger, [r.content for r in targets], chat=chat, seeds=seeds)
    for record, tags in zip(targets, found, strict=True):
        record.tags = tags
    return sum(1 for tags in found if tags)
