"""/chats: chat assistants, their sessions and messages, and completions."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from ragloom.api.deps import ContextDep, PrincipalDep, rate_limited
from ragloom.api.responses import CALLER_ERRORS, REF, error_responses
from ragloom.errors import RagloomError
from ragloom.schemas.assistants import AssistantCreate, AssistantList, AssistantUpdate, AssistantView
from ragloom.schemas.chats import ChatReply, CompletionRequest
from ragloom.schemas.sessions import (
    DeletedMessages,
    FeedbackSet,
    Message,
    MessageList,
    SessionCreate,
    SessionDetail,
    SessionList,
    SessionRename,
    SessionView,
)
from ragloom.schemas.system import ErrorBody
from ragloom.service.chat import assistants, completion, sessions
from ragloom.service.chat.views import assistant_view_of, message_view, session_detail, session_view

router = APIRouter(prefix="/chats", tags=["chats"], responses=CALLER_ERRORS)

MAX_LIST_PAGE = 1_000_000
PageQuery = Annotated[int, Query(ge=1, le=MAX_LIST_PAGE)]
PageSizeQuery = Annotated[int, Query(ge=1, le=1000)]


# --- assistants -------------------------------------------------------------------------------------

@router.post("", status_code=201, responses=error_responses(409))
def create_assistant(body: AssistantCreate, ctx: ContextDep, principal: PrincipalDep) -> AssistantView:
    with ctx.db.session() as s:
        a = assistants.create(ctx, s, principal=principal, spec=body)
        return assistant_view_of(s, principal=principal, assistant=a)


@router.get("")
def list_assistants(ctx: ContextDep, principal: PrincipalDep) -> AssistantList:
    with ctx.db.session() as s:
        rows = assistants.list_all(s, principal=principal)
        views = [assistant_view_of(s, principal=principal, assistant=a) for a in rows]
        return AssistantList(assistants=views, total=len(views))


@router.get("/{chat_id}")
def get_assistant(chat_id: str, ctx: ContextDep, principal: PrincipalDep) -> AssistantView:
    """An assistant by id or name."""
    with ctx.db.session() as s:
        a = assistants.get(s, principal=principal, assistant_id_or_name=chat_id)
        return assistant_view_of(s, principal=principal, assistant=a)


@router.patch("/{chat_id}", responses=error_responses(409))
def update_assistant(chat_id: str, body: AssistantUpdate, ctx: ContextDep,
                     principal: PrincipalDep) -> AssistantView:
    with ctx.db.session() as s:
        a = assistants.update(ctx, s, principal=principal, assistant_id_or_name=chat_id, spec=body)
        return assistant_view_of(s, principal=principal, assistant=a)


@router.delete("/{chat_id}", status_code=204, response_class=Response)
def delete_assistant(chat_id: str, ctx: ContextDep, principal: PrincipalDep) -> Response:
    """Delete an assistant with its sessions and messages."""
    with ctx.db.session() as s:
        assistants.delete(s, principal=principal, assistant_id_or_name=chat_id)
    return Response(status_code=204)


# --- sessions ---------------------------------------------------------------------------------------

@router.post("/{chat_id}/sessions", status_code=201)
def create_session(chat_id: str, body: SessionCreate, ctx: ContextDep,
                   principal: PrincipalDep) -> SessionView:
    with ctx.db.session() as s:
        a = assistants.get(s, principal=principal, assistant_id_or_name=chat_id)
        return session_view(sessions.create(s, principal=principal, assistant=a, name=body.name), a, 0)


@router.get("/{chat_id}/sessions")
def list_sessions(chat_id: str, ctx: ContextDep, principal: PrincipalDep, page: PageQuery = 1,
                  page_size: PageSizeQuery = 30) -> SessionList:
    """Your sessions with this assistant, newest first."""
    with ctx.db.session() as s:
        a = assistants.get(s, principal=principal, assistant_id_or_name=chat_id)
        rows, total = sessions.list_sessions(s, principal=principal, assistant=a, offset=(page - 1) * page_size,
                                             limit=page_size)
        counts = sessions.message_counts(s, [r.id for r in rows])
        return SessionList(sessions=[session_view(r, a, counts.get(r.id, 0)) for r in rows], total=total, page=page,
                           page_size=page_size)


@router.get("/{chat_id}/sessions/{session_id}")
def get_session(chat_id: str, session_id: str, ctx: ContextDep, principal: PrincipalDep) -> SessionDetail:
    """A session with its messages; each reference says whether its document version is still current."""
    with ctx.db.session() as s:
        a = assistants.get(s, principal=principal, assistant_id_or_name=chat_id)
        c = sessions.get(s, principal=principal, assistant=a, session_id=session_id)
        rows = sessions.messages(s, c)
        active = sessions.active_versions(s, [r for m in rows for r in m.refs or []])
        return session_detail(c, a, rows, active)


@router.patch("/{chat_id}/sessions/{session_id}")
def rename_session(chat_id: str, session_id: str, body: SessionRename, ctx: ContextDep,
                   principal: PrincipalDep) -> SessionView:
    with ctx.db.session() as s:
        a = assistants.get(s, principal=principal, assistant_id_or_name=chat_id)
        c = sessions.rename(s, principal=principal, assistant=a, session_id=session_id, name=body.name)
        return session_view(c, a, sessions.message_counts(s, [c.id]).get(c.id, 0))


@router.delete("/{chat_id}/sessions/{session_id}", status_code=204, response_class=Response)
def delete_session(chat_id: str, session_id: str, ctx: ContextDep, principal: PrincipalDep) -> Response:
    with ctx.db.session() as s:
        a = assistants.get(s, principal=principal, assistant_id_or_name=chat_id)
        sessions.delete(s, principal=principal, assistant=a, session_id=session_id)
    return Response(status_code=204)


# --- messages ---------------------------------------------------------------------------------------

@router.get("/{chat_id}/sessions/{session_id}/messages")
def list_messages(chat_id: str, session_id: str, ctx: ContextDep, principal: PrincipalDep) -> MessageList:
    with ctx.db.session() as s:
        a = assistants.get(s, principal=principal, assistant_id_or_name=chat_id)
        rows = sessions.messages(s, sessions.get(s, principal=principal, assistant=a, session_id=session_id))
        active = sessions.active_versions(s, [r for m in rows for r in m.refs or []])
        return MessageList(messages=[message_view(m, active) for m in rows], total=len(rows))


@router.put("/{chat_id}/sessions/{session_id}/messages/{message_id}/feedback")
def set_feedback(chat_id: str, session_id: str, message_id: str, body: FeedbackSet, ctx: ContextDep,
                 principal: PrincipalDep) -> Message:
    """Rate an answer (up or down, with a comment); ``rating: null`` removes the rating."""
    with ctx.db.session() as s:
        a = assistants.get(s, principal=principal, assistant_id_or_name=chat_id)
        m = sessions.set_feedback(s, principal=principal, assistant=a, session_id=session_id, message_id=message_id,
                                  spec=body)
        return message_view(m, sessions.active_versions(s, m.refs or []))


@router.delete("/{chat_id}/sessions/{session_id}/messages/{message_id}")
def delete_message_pair(chat_id: str, session_id: str, message_id: str, ctx: ContextDep,
                        principal: PrincipalDep) -> DeletedMessages:
    """Delete a question and its answer (give either one's id)."""
    with ctx.db.session() as s:
        a = assistants.get(s, principal=principal, assistant_id_or_name=chat_id)
        deleted = sessions.delete_pair(s, principal=principal, assistant=a, session_id=session_id,
                                       message_id=message_id)
    return DeletedMessages(deleted=deleted)


# --- completions ------------------------------------------------------------------------------------

def _event(title: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "title": title, "description": description, "properties": properties,
            "required": list(properties)}


CHAT_EVENTS: dict[str, Any] = {"oneOf": [
    _event("ChatDelta", "a piece of the answer text, as the model writes it", {"delta": {"type": "string"}}),
    _event("ChatFinal", "the stored reply (the JSON reply's payload) after the last delta; its answer text "
           "replaces the streamed text", {"reply": {"$ref": REF.format(model=ChatReply.__name__)}}),
    {"$ref": REF.format(model=ErrorBody.__name__),
     "description": "the answer failed after the stream started (the last event before [DONE])"},
    {"type": "string", "const": "[DONE]", "description": "the end of the stream (not JSON)"},
]}

CHAT_STREAM: dict[int | str, dict[str, Any]] = {200: {
    "description": "the reply (application/json), or with stream: true its events (text/event-stream): "
                   "'data: {\"delta\": ...}' lines, then 'data: {\"reply\": ...}', then 'data: [DONE]'",
    "content": {"text/event-stream": {
        "schema": {"type": "string", "description": "server-sent events; each data line is one of itemSchema's data"},
        "itemSchema": {"type": "object", "required": ["data"], "properties": {
            "data": {"type": "string", "contentMediaType": "application/json", "contentSchema": CHAT_EVENTS}}},
    }},
}}


@router.post("/{chat_id}/completions", response_model=ChatReply, dependencies=[rate_limited("answer")],
             responses={**CHAT_STREAM, **error_responses(429, 502)})
def completions(chat_id: str, body: CompletionRequest, ctx: ContextDep,
                principal: PrincipalDep) -> ChatReply | StreamingResponse:
    """Ask an assistant a question in a session (a new session without ``session_id``). The question and
    the answer are stored; the answer's references keep the document versions they cite."""
    prepared = completion.prepare(ctx, principal=principal, assistant_id=chat_id, request=body)
    if not body.stream:
        return completion.complete(ctx, principal=principal, prepared=prepared)
    # Start the answer before the response, so a failing chat model still gets a proper status code.
    events = completion.complete_stream(ctx, principal=principal, prepared=prepared)
    first = next(events)
    return StreamingResponse(_sse(first, events), media_type="text/event-stream")


def _sse(first: str | ChatReply, rest: Iterator[str | ChatReply],
         shown: Callable[[ChatReply], BaseModel] = lambda reply: reply) -> Iterator[str]:
    """The events of a streamed answer: its deltas, then ``shown`` of the stored reply (a visitor's view of
    it, say), then ``[DONE]``; an error after the start is the last event before ``[DONE]``."""
    try:
        for item in _chain(first, rest):
            if isinstance(item, str):
                yield f"data: {json.dumps({'delta': item}, ensure_ascii=False)}\n\n"
            else:
                yield f"data: {json.dumps({'reply': shown(item).model_dump(mode='json')}, ensure_ascii=False)}\n\n"
    except RagloomError as exc:
        yield f"data: {json.dumps({'error': type(exc).__name__, 'message': exc.message})}\n\n"
    yield "data: [DONE]\n\n"


def _chain(first: str | ChatReply, rest: Iterator[str | ChatReply]) -> Iterator[str | ChatReply]:
    yield first
    yield from rest
