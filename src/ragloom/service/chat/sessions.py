"""Chat sessions and their messages: create, list (newest first), rename, delete; messages with
feedback; delete a question with its answer. A session belongs to the user who started it, with one
assistant of their tenant: any other id is 'not found'."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ragloom.context import Principal
from ragloom.db.models import Assistant, ChatMessage, ChatSession, Document, KnowledgeBase, utcnow
from ragloom.errors import InvalidRequestError, NotFoundError
from ragloom.schemas.sessions import NAME_CHARS, FeedbackSet
from ragloom.service.chat import assistants
from ragloom.states import MessageRole

DEFAULT_NAME = "New session"


def name_from(question: str) -> str:
    """A session's name from its first question."""
    text = " ".join(question.split())
    return text if len(text) <= 60 else text[:59].rstrip() + "…"


def create(session: Session, *, principal: Principal, assistant: Assistant, name: str | None = None) -> ChatSession:
    chat = ChatSession(tenant_id=principal.tenant_id, assistant_id=assistant.id, user_id=principal.user_id,
                       name=(name or DEFAULT_NAME)[:NAME_CHARS])
    session.add(chat)
    session.flush()
    return chat


def _owned(principal: Principal, assistant: Assistant) -> Any:
    return ((ChatSession.assistant_id == assistant.id) & (ChatSession.tenant_id == principal.tenant_id)
            & (ChatSession.user_id == principal.user_id))


def list_sessions(session: Session, *, principal: Principal, assistant: Assistant, offset: int,
                  limit: int) -> tuple[list[ChatSession], int]:
    """The caller's sessions with ``assistant``, newest first, and how many there are."""
    where = _owned(principal, assistant)
    total = session.scalar(select(func.count()).select_from(ChatSession).where(where)) or 0
    rows = session.scalars(select(ChatSession).where(where)
                           .order_by(ChatSession.created_at.desc(), ChatSession.id.desc()).offset(offset).limit(limit))
    return list(rows), total


def get(session: Session, *, principal: Principal, assistant: Assistant, session_id: str) -> ChatSession:
    chat = session.scalar(select(ChatSession).where(_owned(principal, assistant), ChatSession.id == session_id))
    if chat is None:
        raise NotFoundError(f"session {session_id!r} of assistant {assistant.name!r} not found")
    return chat


def rename(session: Session, *, principal: Principal, assistant: Assistant, session_id: str, name: str) -> ChatSession:
    chat = get(session, principal=principal, assistant=assistant, session_id=session_id)
    chat.name = name
    chat.updated_at = utcnow()
    session.flush()
    return chat


def delete(session: Session, *, principal: Principal, assistant: Assistant, session_id: str) -> None:
    """Delete a session with its messages."""
    session.delete(get(session, principal=principal, assistant=assistant, session_id=session_id))
    session.flush()


def messages(session: Session, chat: ChatSession) -> list[ChatMessage]:
    return list(session.scalars(select(ChatMessage).where(ChatMessage.session_id == chat.id)
                                .order_by(ChatMessage.seq)))


def message_counts(session: Session, session_ids: Sequence[str]) -> dict[str, int]:
    if not session_ids:
        return {}
    rows = session.execute(select(ChatMessage.session_id, func.count()).where(ChatMessage.session_id.in_(session_ids))
                           .group_by(ChatMessage.session_id))
    return {sid: n for sid, n in rows}


def recent_turns(session: Session, chat: ChatSession, turns: int) -> list[tuple[str, str]]:
    """The last ``turns`` (question, answer) pairs of the session, oldest first."""
    rows = session.execute(select(ChatMessage.turn, ChatMessage.role, ChatMessage.content)
                           .where(ChatMessage.session_id == chat.id).order_by(ChatMessage.seq.desc())
                           .limit(2 * turns))
    pairs: dict[int, dict[str, str]] = {}
    for turn, role, content in rows:
        pairs.setdefault(turn, {})[role] = content
    return [(p.get(MessageRole.USER, ""), p.get(MessageRole.ASSISTANT, "")) for _, p in sorted(pairs.items())
            if MessageRole.USER in p]


def _message(session: Session, *, principal: Principal, assistant: Assistant, session_id: str,
             message_id: str) -> tuple[ChatSession, ChatMessage]:
    chat = get(session, principal=principal, assistant=assistant, session_id=session_id)
    message = session.scalar(select(ChatMessage).where(ChatMessage.session_id == chat.id, ChatMessage.id == message_id))
    if message is None:
        raise NotFoundError(f"message {message_id!r} of session {session_id!r} not found")
    return chat, message


def set_feedback(session: Session, *, principal: Principal, assistant: Assistant, session_id: str, message_id: str,
                 spec: FeedbackSet) -> ChatMessage:
    _, message = _message(session, principal=principal, assistant=assistant, session_id=session_id,
                          message_id=message_id)
    if message.role != MessageRole.ASSISTANT:
        raise InvalidRequestError(f"message_id: {message_id!r} is a question; feedback rates an answer")
    message.feedback = spec.rating
    message.feedback_comment = spec.comment if spec.rating else ""
    session.flush()
    return message


def delete_pair(session: Session, *, principal: Principal, assistant: Assistant, session_id: str,
                message_id: str) -> list[str]:
    """Delete a question and its answer (either one's id); returns the ids deleted."""
    chat, message = _message(session, principal=principal, assistant=assistant, session_id=session_id,
                             message_id=message_id)
    pair = list(session.scalars(select(ChatMessage).where(ChatMessage.session_id == chat.id,
                                                          ChatMessage.turn == message.turn)
                                .order_by(ChatMessage.seq)))
    for m in pair:
        session.delete(m)
    session.flush()
    return [m.id for m in pair]


def add_turn(session: Session, chat: ChatSession, *, question: str, answer: str, model: str, insufficient: bool,
             refs: list[dict[str, Any]], citations: list[dict[str, Any]],
             explain: dict[str, Any]) -> tuple[ChatMessage, ChatMessage]:
    """Store a question and its answer at the end of the session.

    The session row is written first: concurrent answers in one session then queue on it (SQLite's
    write lock, PostgreSQL's row lock) before reading the last turn number, so each takes the next one."""
    chat.updated_at = utcnow()
    session.flush()
    last = session.execute(select(func.max(ChatMessage.seq), func.max(ChatMessage.turn))
                           .where(ChatMessage.session_id == chat.id)).one()
    seq = (last[0] if last[0] is not None else -1) + 1
    turn = (last[1] if last[1] is not None else -1) + 1
    asked = ChatMessage(session_id=chat.id, seq=seq, turn=turn, role=MessageRole.USER, content=question)
    answered = ChatMessage(session_id=chat.id, seq=seq + 1, turn=turn, role=MessageRole.ASSISTANT, content=answer,
                           model=model, insufficient=insufficient, refs=refs, citations=citations, explain=explain)
    asked.created_at = utcnow()
    answered.created_at = utcnow()
    session.add_all([asked, answered])
    chat.updated_at = answered.created_at
    session.flush()
    return asked, answered


def active_versions(session: Session, refs: Iterable[Mapping[str, Any]]) -> dict[str, str | None]:
    """The active version id of each referenced document that still exists (read-time status of
    version-locked references)."""
    doc_ids = sorted({r["doc_id"] for r in refs})
    if not doc_ids:
        return {}
    rows = session.execute(select(Document.id, Document.active_version_id).where(Document.id.in_(doc_ids)))
    found: dict[str, str | None] = {d: v for d, v in rows}
    from ragloom.retrieval.graph_evidence import KG_PREFIX, is_kg_id

    for d in doc_ids:  # a knowledge graph's evidence (use_kg): current while the knowledge base exists
        if is_kg_id(d) and session.get(KnowledgeBase, d.removeprefix(KG_PREFIX)) is not None:
            found[d] = d
    return found


def assistant_of(session: Session, *, principal: Principal, assistant_id_or_name: str) -> Assistant:
    return assistants.get(session, principal=principal, assistant_id_or_name=assistant_id_or_name)
