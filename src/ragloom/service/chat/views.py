"""The builders of the chat resources ragloom shows — assistants, sessions, messages, replies — from
stored rows (the models are in :mod:`ragloom.schemas.assistants`, :mod:`ragloom.schemas.sessions`
and :mod:`ragloom.schemas.chats`; the conventions of :mod:`ragloom.service.views`).

A stored reference is shown with its ``status`` at read time: ``current`` while its version is the
one searches see, ``superseded`` once the document was re-parsed or replaced, ``deleted`` when the
document is gone; ``file`` and ``pages`` open the cited version (absent once the document is deleted).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.orm import Session

from ragloom.context import Principal
from ragloom.db import models as db
from ragloom.schemas.assistants import AssistantDataset, AssistantView
from ragloom.schemas.base import iso_utc
from ragloom.schemas.chats import ChatExplain, ChatReference, CitationView
from ragloom.schemas.sessions import Feedback, Message, SessionDetail, SessionView
from ragloom.service.chat.assistants import (
    dataset_states,
    llm_settings,
    prompt_settings,
    retrieval_options,
    scope_settings,
)
from ragloom.service.views import figure_link, table_rows_view, view_link
from ragloom.states import MessageRole, ReferenceStatus

# --- assistants -------------------------------------------------------------------------------------


def assistant_view_of(session: Session, *, principal: Principal, assistant: db.Assistant) -> AssistantView:
    """:func:`assistant_view` with its datasets' states as ``principal`` sees them."""
    return assistant_view(assistant, dataset_states(session, principal=principal, assistant=assistant))


def assistant_view(assistant: db.Assistant, states: Sequence[tuple[str, str, str]]) -> AssistantView:
    """``states``: :func:`ragloom.service.chat.assistants.dataset_states` of the assistant."""
    return AssistantView(
        id=assistant.id, name=assistant.name, description=assistant.description,
        dataset_ids=[kb["id"] for kb in assistant.knowledge_bases],
        datasets=[AssistantDataset(id=i, name=n, state=s) for i, n, s in states],
        llm=llm_settings(assistant), prompt=prompt_settings(assistant), retrieval=retrieval_options(assistant),
        top_n=assistant.top_n, rerank=assistant.rerank, scope=scope_settings(assistant),
        permission=assistant.permission,
        created_by=assistant.created_by, created_at=iso_utc(assistant.created_at),
        updated_at=iso_utc(assistant.updated_at),
    )


# --- references, citations, explain -----------------------------------------------------------------


def reference_view(ref: Mapping[str, Any], active: Mapping[str, str | None]) -> ChatReference:
    """A stored reference; ``active``: the active version id of each of the referenced documents that
    still exist (a missing document is deleted)."""
    doc_id, version_id, kb_id = ref["doc_id"], ref["version_id"], ref.get("kb_id")
    gone = doc_id not in active
    status = (ReferenceStatus.DELETED if gone else
              ReferenceStatus.CURRENT if active[doc_id] == version_id else ReferenceStatus.SUPERSEDED)
    base = f"/api/v1/datasets/{kb_id}/documents/{doc_id}"
    return ChatReference(
        id=ref["id"], chunk_id=ref["chunk_id"], doc_id=doc_id, kb_id=kb_id, version_id=version_id,
        document_name=ref["document_name"], content=ref["content"], positions=ref["positions"], status=status,
        active_version_id=None if gone else active[doc_id],
        file=None if gone or not kb_id else f"{base}/file?version_id={version_id}",
        pages=None if gone or not kb_id else f"{base}/pages?version_id={version_id}",
        preview=None if gone or not kb_id else view_link(base, version_id, ref["positions"]),
        changes=f"{base}/versions/diff?from={version_id}&to={active[doc_id]}"
        if status == ReferenceStatus.SUPERSEDED and kb_id and active[doc_id] else None,
        table=table_rows_view(ref.get("table")),
        figure=figure_link(kb_id, doc_id, ref["chunk_id"]) if ref.get("kind") == "figure" and kb_id and not gone
        else None,
        source_url=ref.get("source_url"),
        similarity=ref.get("similarity"), vector_similarity=ref.get("vector_similarity"),
        term_similarity=ref.get("term_similarity"),
    )


def citation_view(c: Mapping[str, Any]) -> CitationView:
    support = c.get("support")
    return CitationView(sentence=c["sentence"], id=c["index"], support=None if support is None else round(support, 4),
                        supported=c.get("supported", True), inserted=c.get("inserted", False),
                        verdict=c.get("verdict"), sentence_text=c.get("sentence_text"),
                        supporting_sentence=c.get("supporting_sentence"))


# --- sessions and messages --------------------------------------------------------------------------


def session_view(s: db.ChatSession, assistant: db.Assistant, message_count: int) -> SessionView:
    return SessionView(id=s.id, assistant_id=s.assistant_id, name=s.name, opening=prompt_settings(assistant).opening,
                       message_count=message_count, created_at=iso_utc(s.created_at), updated_at=iso_utc(s.updated_at),
                       share_id=s.share_id, visitor_id=s.visitor_id)


def message_view(m: db.ChatMessage, active: Mapping[str, str | None]) -> Message:
    answer = m.role == MessageRole.ASSISTANT
    feedback = Feedback(rating=m.feedback, comment=m.feedback_comment) if m.feedback in ("up", "down") else None
    return Message(
        id=m.id, session_id=m.session_id, turn=m.turn, role=MessageRole(m.role), content=m.content,
        created_at=iso_utc(m.created_at), model=m.model if answer else None,
        insufficient=m.insufficient if answer else None,
        references=[reference_view(r, active) for r in m.refs or []],
        citations=[citation_view(c) for c in m.citations or []],
        explain=ChatExplain.model_validate(m.explain) if answer and m.explain else None, feedback=feedback,
    )


def session_detail(s: db.ChatSession, assistant: db.Assistant, messages: Sequence[db.ChatMessage],
                   active: Mapping[str, str | None]) -> SessionDetail:
    head = session_view(s, assistant, len(messages))
    return SessionDetail(**dict(head), messages=[message_view(m, active) for m in messages])


