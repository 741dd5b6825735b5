"""The applicability scope of a question, decided before retrieval (issue 27): the documents of the
searched knowledge bases and their metadata, read by :func:`ragloom.retrieval.scope.decide`.

A decided scope restricts retrieval to the matching documents (``document_ids``, a pre-filter); a
missing value asks; a value no document carries is a gap that retrieves nothing (never a search of
everything).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from ragloom.context import Context, Principal
from ragloom.dataflow import Answer
from ragloom.db.models import Document, KnowledgeBase
from ragloom.errors import ModelError
from ragloom.models.chat import ChatModel
from ragloom.retrieval.scope import ScopeDecision, decide, is_clarification, without_values
from ragloom.schemas.options import EvidenceOptions
from ragloom.schemas.scope import ScopeKey, ScopeRequest
from ragloom.service import knowledgebases
from ragloom.service.accounts import access, workspace_models

Options = TypeVar("Options", bound=EvidenceOptions)


def documents_metadata(session: Session, principal: Principal, kb_ids: Sequence[str],
                       doc_ids: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """id -> metadata of the documents of ``kb_ids`` the caller may read (only ``doc_ids`` among them when
    given); the caller has checked that it may read the knowledge bases."""
    if not kb_ids:
        return {}
    query = select(Document.id, Document.meta).where(Document.kb_id.in_(list(kb_ids)))
    if doc_ids is not None:
        query = query.where(Document.id.in_(list(doc_ids)))
    kbs = list(session.scalars(select(KnowledgeBase).where(KnowledgeBase.id.in_(list(kb_ids)))))
    hidden = set(access.hidden_documents(session, principal, kbs))
    return {d: dict(m or {}) for d, m in session.execute(query) if d not in hidden}


EXTRACT_PROMPT = """\
Read the user's messages for the values of these product details:
{keys}
Reply with one JSON object with exactly these keys, and nothing else; a value the messages do not \
give is null. Never guess: a detail not stated is null."""


def _key_line(key: ScopeKey, known: Sequence[str]) -> str:
    if key.match == "range":
        return f"- {key.key}: the {key.title} version number the user has, e.g. 2.4"
    listed = ", ".join(known[:30])
    return f"- {key.key}: the {key.title}" + (f" (known: {listed})" if listed else "")


def extract_values(chat_model: ChatModel, keys: Sequence[ScopeKey], known: Mapping[str, list[str]],
                   texts: Sequence[str]) -> dict[str, str]:
    """The values of ``keys`` the chat model reads in ``texts`` (the user's messages, oldest first);
    ``{}`` when it fails or answers something else than the JSON asked for."""
    prompt = EXTRACT_PROMPT.format(keys="\n".join(_key_line(k, known.get(k.key, [])) for k in keys))
    try:
        reply = chat_model.chat([{"role": "system", "content": prompt},
                                 {"role": "user", "content": "\n".join(texts)}], temperature=0.0, max_tokens=200)
    except ModelError:
        return {}
    found = re.search(r"\{.*\}", reply, re.S)
    try:
        data = json.loads(found.group(0)) if found else {}
    except ValueError:
        return {}
    wanted = {k.key for k in keys}
    return {k: str(v) for k, v in data.items() if k in wanted and isinstance(v, str | int | float) and str(v).strip()} \
        if isinstance(data, dict) else {}


def decide_scope(ctx: Context, *, principal: Principal, kb_ids: Sequence[str], keys: Sequence[ScopeKey], question: str,
                 earlier: Sequence[str] = (), given: Mapping[str, str] | None = None,
                 doc_ids: Sequence[str] | None = None, answering: bool = False,
                 chat_model: ChatModel | None = None) -> ScopeDecision:
    """The scope of ``question`` over the documents of ``kb_ids`` (``doc_ids`` among them when given).
    Values are read by matching the documents' values; with ``chat_model``, the keys that reading
    leaves without a value are asked of it."""
    if not keys:
        return decide(keys, {}, question=question)
    with ctx.db.session() as s:
        documents = documents_metadata(s, principal, kb_ids, doc_ids)
    decision = decide(keys, documents, question=question, earlier=earlier, given=given, answering=answering)
    if chat_model is None or decision.status != "clarify":
        return decision
    missing = [k for k in keys if k.key in decision.missing]
    extracted = extract_values(chat_model, missing, decision.known, [*earlier, question])
    if not extracted:
        return decision
    return decide(keys, documents, question=question, earlier=earlier, given=given, answering=answering,
                  extracted=extracted)


def restricted(options: Options, decision: ScopeDecision) -> Options:
    """``options`` restricted to the decided documents (a scoped decision; others are returned as is).
    The decision established that these documents apply to the question (its product, its version), so
    the question-level gate (``min_answerable``: is the topic covered at all) is not asked again: a
    short follow-up ("how often is it serviced?") over the few chunks of one manual has too little
    signal for it, and the scope already answered it."""
    if decision.status != "scoped" or decision.doc_ids is None:
        return options
    allowed = decision.doc_ids
    if options.document_ids is not None:
        chosen = set(options.document_ids)
        allowed = [d for d in allowed if d in chosen]
    return options.model_copy(update={"document_ids": allowed, "min_answerable": 0.0})


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
    decision = decide_scope(ctx, principal=principal, kb_ids=ids, keys=request.required(), question=question,
                            given=request.values, doc_ids=options.document_ids)
    return restricted(options, decision), decision


def unretrieved_answer(ctx: Context, principal: Principal, decision: ScopeDecision) -> Answer:
    """The answer of a clarify or gap decision: its message, nothing retrieved or cited."""
    model = workspace_models.chat_model(ctx, principal.tenant_id)
    return Answer(decision.message or "", model.name if model else "extractive", insufficient=True)


def answer_question(ctx: Context, principal: Principal, request: ScopeRequest, decision: ScopeDecision,
                    question: str) -> str:
    """The question an answer searches and is written for once the scope is decided: without the words
    naming the values when answers are extractive (the filter holds them), else as asked."""
    if decision.status != "scoped" or workspace_models.chat_model(ctx, principal.tenant_id) is not None:
        return question
    return without_values(request.required(), decision, question)
