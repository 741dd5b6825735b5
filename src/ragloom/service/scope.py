"""The applicability scope of a question, decided before retrieval (issue 27): the documents of the
searched knowledge bases and their metadata, read by :func:`ragloom.retrieval.scope.decide`.

A decided scope restricts retrieval to the matching documents (``document_ids``, a pre-filter); a
missing value asks; a value no document carries is a gap that retrieves nothing (never a search of
everything).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from sqlalchemy import select

from ragloom.context import Context, Principal
from ragloom.db.models import Document
from ragloom.retrieval.options import EvidenceOptions
from ragloom.retrieval.scope import ScopeDecision, ScopeKey, decide, is_clarification
from ragloom.retrieval.scope import ScopeRequest as ScopeRequest  # the edge's types: a retrieval's scope,
from ragloom.retrieval.scope import ScopeSettings as ScopeSettings  # an assistant's
from ragloom.service import knowledgebases

Options = TypeVar("Options", bound=EvidenceOptions)


def documents_metadata(ctx: Context, kb_ids: Sequence[str],
                       doc_ids: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """id -> metadata of the documents of ``kb_ids`` (only ``doc_ids`` among them when given); the
    caller has checked that it may read the knowledge bases."""
    if not kb_ids:
        return {}
    with ctx.db.session() as s:
        query = select(Document.id, Document.meta).where(Document.kb_id.in_(list(kb_ids)))
        if doc_ids is not None:
            query = query.where(Document.id.in_(list(doc_ids)))
        return {d: dict(m or {}) for d, m in s.execute(query)}


def decide_scope(ctx: Context, *, kb_ids: Sequence[str], keys: Sequence[ScopeKey], question: str,
                 earlier: Sequence[str] = (), given: Mapping[str, str] | None = None,
                 doc_ids: Sequence[str] | None = None, answering: bool = False) -> ScopeDecision:
    """The scope of ``question`` over the documents of ``kb_ids`` (``doc_ids`` among them when given)."""
    if not keys:
        return decide(keys, {}, question=question)
    return decide(keys, documents_metadata(ctx, kb_ids, doc_ids), question=question, earlier=earlier, given=given,
                  answering=answering)


def restricted(options: Options, decision: ScopeDecision) -> Options:
    """``options`` restricted to the decided documents (a scoped decision; others are returned as is)."""
    if decision.status != "scoped" or decision.doc_ids is None:
        return options
    allowed = decision.doc_ids
    if options.document_ids is not None:
        chosen = set(options.document_ids)
        allowed = [d for d in allowed if d in chosen]
    return options.model_copy(update={"document_ids": allowed})


def clarified_question(turns: Sequence[tuple[str, str]], question: str) -> str:
    """The question to search and answer when the last replies asked for the scope: the question they
    first asked about (this one and the ones between only give values, read by the scope, and the
    search is restricted to the documents they select); else ``question``."""
    asked = question
    for q, a in reversed(turns):
        if not is_clarification(a):
            break
        asked = q
    return asked


def for_request(ctx: Context, *, principal: Principal, kb_ids: Sequence[str], question: str, request: ScopeRequest,
                options: Options) -> tuple[Options, ScopeDecision]:
    """A retrieval's scope (the retrieval API's ``scope``): its values, and its keys without one read
    from the question, over the documents of ``kb_ids`` (names or ids the caller can read, else 404);
    ``options`` restricted to the matching documents. Clarify and gap: the caller retrieves nothing."""
    with ctx.db.session() as s:
        ids = [knowledgebases.get(s, principal=principal, kb_id_or_name=k).id for k in kb_ids]
    decision = decide_scope(ctx, kb_ids=ids, keys=request.required(), question=question, given=request.values,
                            doc_ids=options.document_ids)
    return restricted(options, decision), decision
