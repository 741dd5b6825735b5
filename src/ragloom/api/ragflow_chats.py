"""RAGFlow's chat assistants, sessions and completions under ``/ragflow/api/v1`` (issue 31, part 2, a first
step): ragloom's assistants (:mod:`ragloom.service.chat`) in RAGFlow's shapes, with RAGFlow 0.27's flat
``llm_id`` / ``llm_setting`` / ``prompt_config``. Part of the sub-application of :mod:`ragloom.api.ragflow`
(its envelope and error codes); a chat that is not the caller's answers 109 ``no authorization`` as
RAGFlow's does.

Completions stream as RAGFlow's do: the answer's deltas as the chat model writes them, then the final
event with its reference, then the end (``data: {"code": 0, "data": true}``); ``[ID:n]`` markers are
renumbered (in the order they first appear, a marker cut between deltas held back) to index the
reference's ``chunks``. The per-chat OpenAI-compatible endpoint (``/openai/{chat_id}/chat/completions``)
answers OpenAI's ``chat.completion``, with RAGFlow's ``reference`` list when ``extra_body.reference``."""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Iterator
from typing import Annotated, Any, NoReturn

from fastapi import APIRouter, Body, Query
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import ValidationError

from ragloom.api.deps import ContextDep, PrincipalDep, rate_limited
from ragloom.api.ragflow import API, DescArg, PageArg, PageSizeArg, _desc, _field_errors, _page, _page_size, _time, fail
from ragloom.context import Context, Principal
from ragloom.errors import ConflictError, NotFoundError, RagloomError
from ragloom.schemas.assistants import AssistantCreate, AssistantUpdate, AssistantView
from ragloom.schemas.base import iso_utc
from ragloom.schemas.chats import ChatReference, ChatReply, CompletionRequest
from ragloom.schemas.ragflow import (
    ARGUMENT_ERROR,
    AUTHENTICATION_ERROR,
    DATA_ERROR,
    RFAnswerReference,
    RFChat,
    RFChatList,
    RFChatRequest,
    RFCompletion,
    RFCompletionRequest,
    RFDeleteRequest,
    RFDocAgg,
    RFFeedback,
    RFMessage,
    RFReferenceChunk,
    RFResult,
    RFSession,
    RFSessionRequest,
)
from ragloom.schemas.sessions import FeedbackSet
from ragloom.service.chat import assistants, completion, sessions
from ragloom.service.chat.views import assistant_view_of
from ragloom.states import MessageRole

router = APIRouter(prefix=API, tags=["chats"])

LLM_KEYS = ("temperature", "top_p", "max_tokens", "presence_penalty", "frequency_penalty")


def _no_authorization() -> NoReturn:
    fail(AUTHENTICATION_ERROR, "no authorization", False)


def chat_out(v: AssistantView, principal: Principal) -> RFChat:
    created, created_date = _time(v.created_at)
    updated, updated_date = _time(v.updated_at)
    p = v.prompt
    prompt_config = {
        "system": p.system or "", "prologue": p.opening, "empty_response": p.empty_response or "",
        "quote": p.quote, "refine_multiturn": p.rewrite_followups, "keyword": p.keyword, "tts": False,
        "parameters": [{"key": "knowledge", "optional": False}] + [{"key": x.name, "optional": x.optional}
                                                                  for x in p.variables]}
    return RFChat(
        id=v.id, name=v.name, description=v.description, tenant_id=principal.tenant_id, dataset_ids=v.dataset_ids,
        kb_names=[d.name for d in v.datasets], llm_id=v.llm.model or "",
        llm_setting={k: getattr(v.llm, k) for k in LLM_KEYS}, prompt_config=prompt_config,
        similarity_threshold=v.retrieval.similarity_threshold,
        vector_similarity_weight=v.retrieval.vector_similarity_weight, top_n=v.top_n,
        create_time=created, create_date=created_date, update_time=updated, update_date=updated_date)


def _prompt(config: dict[str, Any]) -> dict[str, Any]:
    """RAGFlow's ``prompt_config`` keys as ragloom's prompt settings (the others are ignored)."""
    out: dict[str, Any] = {}
    if isinstance(config.get("system"), str) and config["system"].strip():
        out["system"] = config["system"]
    if isinstance(config.get("prologue"), str):
        out["opening"] = config["prologue"]
    if "empty_response" in config:
        out["empty_response"] = config["empty_response"] or None
    for theirs, ours in (("quote", "quote"), ("refine_multiturn", "rewrite_followups"), ("keyword", "keyword")):
        if isinstance(config.get(theirs), bool):
            out[ours] = config[theirs]
    return out


def _settings(body: RFChatRequest) -> dict[str, Any]:
    """The assistant fields a RAGFlow request sets."""
    fields: dict[str, Any] = {}
    if body.name is not None:
        fields["name"] = body.name.strip()
    if body.description is not None:
        fields["description"] = body.description
    if body.dataset_ids is not None:
        fields["dataset_ids"] = body.dataset_ids
    llm = {k: v for k, v in {**(body.llm or {}), **(body.llm_setting or {})}.items() if k in LLM_KEYS}
    if body.llm_id:
        llm["model"] = body.llm_id
    if llm:
        fields["llm"] = llm
    prompt = _prompt({**(body.prompt or {}), **(body.prompt_config or {})})
    if prompt:
        fields["prompt"] = prompt
    retrieval = {k: getattr(body, k) for k in ("similarity_threshold", "vector_similarity_weight")
                 if getattr(body, k) is not None}
    if retrieval:
        fields["retrieval"] = retrieval
    if body.top_n is not None:
        fields["top_n"] = body.top_n
    return fields


def _view(ctx: Context, principal: Principal, chat_id: str) -> AssistantView:
    with ctx.db.session() as s:
        try:
            a = assistants.get(s, principal=principal, assistant_id_or_name=chat_id)
        except NotFoundError:
            _no_authorization()
        return assistant_view_of(s, principal=principal, assistant=a)


# ---- chat assistants


@router.post("/chats", summary="Create a chat assistant")
def create_chat(body: RFChatRequest, ctx: ContextDep, principal: PrincipalDep) -> RFResult[RFChat]:
    if body.tenant_id is not None:
        fail(DATA_ERROR, "`tenant_id` must not be provided")
    if not body.name or not body.name.strip():
        fail(DATA_ERROR, "`name` is required")
    if not body.dataset_ids:
        fail(DATA_ERROR, "ragloom's chat assistants answer from at least one dataset: give `dataset_ids`")
    try:
        spec = AssistantCreate.model_validate(_settings(body))
    except ValidationError as exc:
        fail(ARGUMENT_ERROR, _field_errors(exc))
    with ctx.db.session() as s:
        try:
            a = assistants.create(ctx, s, principal=principal, spec=spec)
        except ConflictError:
            fail(DATA_ERROR, "Duplicated chat name in creating chat.")
        except NotFoundError as exc:
            fail(DATA_ERROR, f"You don't own the dataset: {exc.message}")
        view = assistant_view_of(s, principal=principal, assistant=a)
    return RFResult(data=chat_out(view, principal))


@router.get("/chats", summary="List chat assistants")
def list_chats(
    ctx: ContextDep, principal: PrincipalDep, page: PageArg = None, page_size: PageSizeArg = None,
    orderby: Annotated[str, Query(description="create_time, update_time or name")] = "create_time",
    desc: DescArg = None, id: Annotated[str | None, Query(description="one assistant")] = None,
    name: Annotated[str | None, Query(description="exact name")] = None,
    keywords: Annotated[str | None, Query(description="part of the name")] = None,
) -> RFResult[RFChatList]:
    if orderby not in ("create_time", "update_time", "name"):
        fail(ARGUMENT_ERROR, f"invalid orderby field: {orderby}")
    p, size = _page(page), _page_size(page_size)
    with ctx.db.session() as s:
        rows = assistants.list_all(s, principal=principal)
        if id:
            rows = [a for a in rows if a.id == id]
        elif name:
            rows = [a for a in rows if a.name == name]
        elif keywords:
            rows = [a for a in rows if keywords.lower() in a.name.lower()]
        if orderby == "name":
            rows.sort(key=lambda a: a.name, reverse=_desc(desc))
        else:
            key = "created_at" if orderby == "create_time" else "updated_at"
            rows.sort(key=lambda a: (getattr(a, key) or a.created_at, a.id), reverse=_desc(desc))
        total = len(rows)
        views = [assistant_view_of(s, principal=principal, assistant=a)
                 for a in rows[(p - 1) * size:p * size]]
    return RFResult(data=RFChatList(chats=[chat_out(v, principal) for v in views], total=total))


@router.get("/chats/{chat_id}", summary="Get a chat assistant")
def get_chat(chat_id: str, ctx: ContextDep, principal: PrincipalDep) -> RFResult[RFChat]:
    return RFResult(data=chat_out(_view(ctx, principal, chat_id), principal))


def _update_chat(chat_id: str, body: RFChatRequest, ctx: Context, principal: Principal) -> RFResult[RFChat]:
    if body.name is not None and not body.name.strip():
        fail(DATA_ERROR, "`name` cannot be empty")
    if body.dataset_ids is not None and not body.dataset_ids:
        fail(DATA_ERROR, "ragloom's chat assistants answer from at least one dataset: give `dataset_ids`")
    current = _view(ctx, principal, chat_id)
    try:
        spec = AssistantUpdate.model_validate(_settings(body))
    except ValidationError as exc:
        fail(ARGUMENT_ERROR, _field_errors(exc))
    with ctx.db.session() as s:
        try:
            a = assistants.update(ctx, s, principal=principal, assistant_id_or_name=current.id, spec=spec)
        except ConflictError:
            fail(DATA_ERROR, "Duplicated chat name.")
        except NotFoundError as exc:
            fail(DATA_ERROR, f"You don't own the dataset: {exc.message}")
        view = assistant_view_of(s, principal=principal, assistant=a)
    return RFResult(data=chat_out(view, principal))


@router.patch("/chats/{chat_id}", summary="Update a chat assistant")
def update_chat(chat_id: str, body: RFChatRequest, ctx: ContextDep, principal: PrincipalDep) -> RFResult[RFChat]:
    """``llm_setting`` and ``prompt_config`` are merged into the assistant's."""
    return _update_chat(chat_id, body, ctx, principal)


@router.put("/chats/{chat_id}", summary="Update a chat assistant (merged, as PATCH)")
def update_chat_put(chat_id: str, body: RFChatRequest, ctx: ContextDep,
                    principal: PrincipalDep) -> RFResult[RFChat]:
    return _update_chat(chat_id, body, ctx, principal)


def _delete_chats(ctx: Context, principal: Principal, ids: list[str]) -> RFResult[dict[str, Any]]:
    errors, done = [], 0
    with ctx.db.session() as s:
        for i in dict.fromkeys(ids):
            try:
                assistants.delete(s, principal=principal, assistant_id_or_name=i)
                done += 1
            except NotFoundError:
                errors.append(f"Chat({i}) not found.")
    if errors and not done:
        fail(DATA_ERROR, "; ".join(errors))
    if errors:
        return RFResult(data={"success_count": done, "errors": errors}, message=f"Partially deleted {done} chats")
    return RFResult(data={"success_count": done})


@router.delete("/chats", summary="Delete chat assistants")
def delete_chats(ctx: ContextDep, principal: PrincipalDep,
                 body: Annotated[RFDeleteRequest | None, Body()] = None) -> RFResult[dict[str, Any]]:
    req = body or RFDeleteRequest()
    if req.delete_all:
        with ctx.db.session() as s:
            ids = [a.id for a in assistants.list_all(s, principal=principal)]
    elif req.ids:
        ids = list(req.ids)
    else:
        return RFResult(data={})
    return _delete_chats(ctx, principal, ids)


@router.delete("/chats/{chat_id}", summary="Delete a chat assistant")
def delete_chat(chat_id: str, ctx: ContextDep, principal: PrincipalDep) -> RFResult[dict[str, Any]]:
    return _delete_chats(ctx, principal, [chat_id])


# ---- sessions


def _session_out(ctx: Context, principal: Principal, chat_id: str, session_id: str) -> RFSession:
    with ctx.db.session() as s:
        a = assistants.get(s, principal=principal, assistant_id_or_name=chat_id)
        c = sessions.get(s, principal=principal, assistant=a, session_id=session_id)
        opening = assistants.prompt_settings(a).opening
        messages = [RFMessage(role="assistant", content=opening)] if opening else []
        messages += [RFMessage(role=str(m.role), content=m.content, id=m.id) for m in sessions.messages(s, c)]
        created, created_date = _time(iso_utc(c.created_at))
        updated, updated_date = _time(iso_utc(c.updated_at))
        return RFSession(id=c.id, chat_id=a.id, name=c.name, messages=messages, user_id=principal.user_id,
                         create_time=created, create_date=created_date, update_time=updated,
                         update_date=updated_date)


@router.post("/chats/{chat_id}/sessions", summary="Create a session")
def create_session(chat_id: str, ctx: ContextDep, principal: PrincipalDep,
                   body: Annotated[RFSessionRequest | None, Body()] = None) -> RFResult[RFSession]:
    name = body.name if body and body.name is not None else "New session"
    if not name.strip():
        fail(DATA_ERROR, "`name` can not be empty.")
    chat = _view(ctx, principal, chat_id)
    with ctx.db.session() as s:
        a = assistants.get(s, principal=principal, assistant_id_or_name=chat.id)
        sid = sessions.create(s, principal=principal, assistant=a, name=name.strip()[:255]).id
    return RFResult(data=_session_out(ctx, principal, chat.id, sid))


@router.get("/chats/{chat_id}/sessions", summary="List sessions")
def list_sessions(
    chat_id: str, ctx: ContextDep, principal: PrincipalDep, page: PageArg = None, page_size: PageSizeArg = None,
    orderby: Annotated[str, Query(description="create_time, update_time or name")] = "create_time",
    desc: DescArg = None, id: Annotated[str | None, Query(description="one session")] = None,
    name: Annotated[str | None, Query(description="exact name")] = None,
) -> RFResult[list[RFSession]]:
    if orderby not in ("create_time", "update_time", "name"):
        fail(ARGUMENT_ERROR, f"invalid orderby field: {orderby}")
    p, size = _page(page), _page_size(page_size)
    chat = _view(ctx, principal, chat_id)
    with ctx.db.session() as s:
        a = assistants.get(s, principal=principal, assistant_id_or_name=chat.id)
        rows, _ = sessions.list_sessions(s, principal=principal, assistant=a, offset=0, limit=100_000)
        if id:
            rows = [r for r in rows if r.id == id]
        if name:
            rows = [r for r in rows if r.name == name]
        if orderby == "name":
            rows.sort(key=lambda r: r.name, reverse=_desc(desc))
        else:
            key = "created_at" if orderby == "create_time" else "updated_at"
            rows.sort(key=lambda r: (getattr(r, key) or r.created_at, r.id), reverse=_desc(desc))
        ids = [r.id for r in rows[(p - 1) * size:p * size]]
    return RFResult(data=[_session_out(ctx, principal, chat.id, i) for i in ids])


@router.get("/chats/{chat_id}/sessions/{session_id}", summary="Get a session")
def get_session(chat_id: str, session_id: str, ctx: ContextDep, principal: PrincipalDep) -> RFResult[RFSession]:
    chat = _view(ctx, principal, chat_id)
    try:
        return RFResult(data=_session_out(ctx, principal, chat.id, session_id))
    except NotFoundError:
        fail(DATA_ERROR, "Session not found!")


def _rename_session(chat_id: str, session_id: str, body: RFSessionRequest, ctx: Context,
                    principal: Principal) -> RFResult[RFSession]:
    if body.messages is not None or body.message is not None:
        fail(DATA_ERROR, "`messages` cannot be changed.")
    if body.reference is not None:
        fail(DATA_ERROR, "`reference` cannot be changed.")
    if body.name is None or not body.name.strip():
        fail(DATA_ERROR, "`name` can not be empty.")
    chat = _view(ctx, principal, chat_id)
    with ctx.db.session() as s:
        a = assistants.get(s, principal=principal, assistant_id_or_name=chat.id)
        try:
            sessions.rename(s, principal=principal, assistant=a, session_id=session_id, name=body.name.strip())
        except NotFoundError:
            fail(DATA_ERROR, "Session not found!")
    return RFResult(data=_session_out(ctx, principal, chat.id, session_id))


@router.patch("/chats/{chat_id}/sessions/{session_id}", summary="Rename a session")
def rename_session(chat_id: str, session_id: str, body: RFSessionRequest, ctx: ContextDep,
                   principal: PrincipalDep) -> RFResult[RFSession]:
    return _rename_session(chat_id, session_id, body, ctx, principal)


@router.put("/chats/{chat_id}/sessions/{session_id}", summary="Rename a session (RAGFlow's deprecated alias)")
def rename_session_put(chat_id: str, session_id: str, body: RFSessionRequest, ctx: ContextDep,
                       principal: PrincipalDep) -> RFResult[RFSession]:
    return _rename_session(chat_id, session_id, body, ctx, principal)


@router.delete("/chats/{chat_id}/sessions", summary="Delete sessions")
def delete_sessions(chat_id: str, ctx: ContextDep, principal: PrincipalDep,
                    body: Annotated[RFDeleteRequest | None, Body()] = None) -> RFResult[Any]:
    req = body or RFDeleteRequest()
    chat = _view(ctx, principal, chat_id)
    errors, done = [], 0
    with ctx.db.session() as s:
        a = assistants.get(s, principal=principal, assistant_id_or_name=chat.id)
        if req.delete_all:
            ids = [r.id for r in sessions.list_sessions(s, principal=principal, assistant=a, offset=0,
                                                        limit=100_000)[0]]
        elif req.ids:
            ids = list(dict.fromkeys(req.ids))
        else:
            return RFResult(data={})
        for i in ids:
            try:
                sessions.delete(s, principal=principal, assistant=a, session_id=i)
                done += 1
            except NotFoundError:
                errors.append(f"The chat doesn't own the session {i}")
    if errors and not done:
        fail(DATA_ERROR, "; ".join(errors))
    if errors:
        return RFResult(data={"success_count": done, "errors": errors}, message=f"Partially deleted {done} sessions")
    return RFResult(data=True)


def _session_messages(ctx: Context, principal: Principal, chat_id: str, session_id: str) -> list[Any]:
    """The session's messages; RAGFlow's "Session not found!" when it is not one of the chat's."""
    with ctx.db.session() as s:
        a = assistants.get(s, principal=principal, assistant_id_or_name=chat_id)
        try:
            return sessions.messages(s, sessions.get(s, principal=principal, assistant=a, session_id=session_id))
        except NotFoundError:
            fail(DATA_ERROR, "Session not found!")


@router.delete("/chats/{chat_id}/sessions/{session_id}/messages/{msg_id}",
               summary="Delete a question and its answer")
def delete_message(chat_id: str, session_id: str, msg_id: str, ctx: ContextDep,
                   principal: PrincipalDep) -> RFResult[RFSession]:
    """Either message's id deletes the pair (RAGFlow gives both one id); an id the session does not have
    changes nothing. The session is answered as it is now."""
    chat = _view(ctx, principal, chat_id)
    if any(m.id == msg_id for m in _session_messages(ctx, principal, chat.id, session_id)):
        with ctx.db.session() as s:
            a = assistants.get(s, principal=principal, assistant_id_or_name=chat.id)
            sessions.delete_pair(s, principal=principal, assistant=a, session_id=session_id, message_id=msg_id)
    return RFResult(data=_session_out(ctx, principal, chat.id, session_id))


@router.put("/chats/{chat_id}/sessions/{session_id}/messages/{msg_id}/feedback", summary="Rate an answer")
def message_feedback(chat_id: str, session_id: str, msg_id: str, body: RFFeedback, ctx: ContextDep,
                     principal: PrincipalDep) -> RFResult[RFSession]:
    """``thumbup`` true or false (with false, ``feedback`` says why) rates the answer; the question's id
    rates its answer (RAGFlow gives both one id). ragloom keeps the rating on the answer, as its own
    feedback route does; an id the session does not have changes nothing."""
    if not isinstance(body.thumbup, bool):
        fail(DATA_ERROR, "thumbup must be a boolean")
    chat = _view(ctx, principal, chat_id)
    rows = _session_messages(ctx, principal, chat.id, session_id)
    asked = next((m for m in rows if m.id == msg_id), None)
    answer = next((m for m in rows if asked is not None and m.turn == asked.turn
                   and m.role == MessageRole.ASSISTANT), None)
    if answer is not None:
        spec = FeedbackSet(rating="up" if body.thumbup else "down", comment="" if body.thumbup else body.feedback)
        with ctx.db.session() as s:
            a = assistants.get(s, principal=principal, assistant_id_or_name=chat.id)
            sessions.set_feedback(s, principal=principal, assistant=a, session_id=session_id,
                                  message_id=answer.id, spec=spec)
    return RFResult(data=_session_out(ctx, principal, chat.id, session_id))


# ---- completions

ANSWER: dict[int | str, dict[str, Any]] = {200: {
    "model": RFResult[RFCompletion],
    "description": "the answer (application/json); with stream (text/event-stream): 'data:' events of the same "
                   "envelope, the answer's deltas, then the final one (answer '', final true, the reference), then "
                   "{\"code\": 0, \"data\": true}"}}

_MARKER = re.compile(r"\[ID:(\d+)\]")


def _answer(reply: ChatReply, chat_id: str, *, final: bool | None = None,
            numbers: Renumber | None = None) -> RFCompletion:
    """The reply in RAGFlow's shape: ``[ID:n]`` renumbered to index ``reference.chunks`` (as ``numbers``
    numbered a stream's deltas)."""
    if numbers is None:
        text, chunks = _renumbered(reply.answer, reply.references)
    else:
        text, chunks = reply.answer, numbers.chunks(reply.references)
    refs = reply.references
    counts = Counter(r.doc_id for r in refs)
    names = {r.doc_id: r.document_name for r in refs}
    aggs = [RFDocAgg(doc_name=names[d], doc_id=d, count=n) for d, n in counts.most_common()]
    return RFCompletion(answer=text,
                        reference=RFAnswerReference(total=len(chunks), chunks=chunks, doc_aggs=aggs),
                        created_at=time.time(), id=reply.message_id, session_id=reply.session_id, chat_id=chat_id,
                        final=final)


def _event(data: Any) -> str:
    return "data:" + json.dumps({"code": 0, "message": "", "data": data}, ensure_ascii=False) + "\n\n"


def _delta(text: str, chat_id: str, session_id: str) -> str:
    return _event({"answer": text, "reference": {"chunks": []}, "audio_binary": None, "prompt": "",
                   "created_at": time.time(), "final": False, "id": "", "session_id": session_id,
                   "chat_id": chat_id})


def _stream(first: str | ChatReply, rest: Iterator[str | ChatReply], chat_id: str,
            session_id: str) -> Iterator[str]:
    """RAGFlow's events: the answer's deltas as the model writes them (markers renumbered), the final
    event (answer '', the reference), then ``data: true``; a failure is RAGFlow's error event."""
    numbers = Renumber()
    try:
        for item in _chain(first, rest):
            if isinstance(item, str):
                if text := numbers.feed(item):
                    yield _delta(text, chat_id, session_id)
                continue
            if tail := numbers.flush():
                yield _delta(tail, chat_id, item.session_id)
            out = _answer(item, chat_id, final=True, numbers=numbers)
            yield _event({**out.model_dump(mode="json"), "answer": ""})
    except RagloomError as exc:
        yield "data:" + json.dumps({"code": 500, "message": exc.message,
                                    "data": {"answer": f"**ERROR**: {exc.message}", "reference": []}}) + "\n\n"
    yield _event(True)


def _chain(first: str | ChatReply, rest: Iterator[str | ChatReply]) -> Iterator[str | ChatReply]:
    yield first
    yield from rest


def _complete(chat_id: str, body: RFCompletionRequest, ctx: Context,
              principal: Principal) -> RFResult[RFCompletion] | StreamingResponse:
    question = body.question
    if question is None and body.messages:
        last = body.messages[-1]
        question = str(last.get("content", "")) if last.get("role") == "user" else None
    if not question or not question.strip():
        fail(ARGUMENT_ERROR, "required argument are missing: question or messages")
    chat = _view(ctx, principal, chat_id)
    request = CompletionRequest(question=question.strip()[:4000], session_id=body.session_id or None)
    try:
        prepared = completion.prepare(ctx, principal=principal, assistant_id=chat.id, request=request)
    except NotFoundError as exc:
        if body.session_id and "session" in exc.message:
            fail(DATA_ERROR, "Session not found!")
        raise
    if body.stream:
        events = completion.complete_stream(ctx, principal=principal, prepared=prepared)
        first = next(events)  # the answer starts before the response: a failing chat model gets its error reply
        return StreamingResponse(_stream(first, events, chat.id, body.session_id or ""),
                                 media_type="text/event-stream; charset=utf-8",
                                 headers={"Cache-control": "no-cache", "X-Accel-Buffering": "no"})
    return RFResult(data=_answer(completion.complete(ctx, principal=principal, prepared=prepared), chat.id))


@router.post("/chats/{chat_id}/completions", summary="Ask a chat assistant",
             dependencies=[rate_limited("answer")], response_model=None, responses=ANSWER)
def chat_completions(chat_id: str, body: RFCompletionRequest, ctx: ContextDep,
                     principal: PrincipalDep) -> RFResult[RFCompletion] | StreamingResponse:
    """A question (or ``messages``, the last one the user's) in ``session_id`` (a new session without
    one); the answer and its question are stored in the session. ``stream`` (RAGFlow's default: true)
    streams the answer's deltas, then the final event with the reference."""
    return _complete(chat_id, body, ctx, principal)


@router.post("/chat/completions", summary="Ask a chat assistant (chat_id in the body)",
             dependencies=[rate_limited("answer")], response_model=None, responses=ANSWER)
def completions(body: RFCompletionRequest, ctx: ContextDep,
                principal: PrincipalDep) -> RFResult[RFCompletion] | StreamingResponse:
    if not body.chat_id:
        fail(ARGUMENT_ERROR, "required argument are missing: chat_id")
    return _complete(body.chat_id, body, ctx, principal)


# ---- the per-chat OpenAI-compatible endpoint


class Renumber:
    """ragloom's ``[ID:n]`` (evidence numbers) as RAGFlow's (indexes of ``reference.chunks``), in the order
    they first appear; fed a stream's deltas, it holds back a marker cut between two deltas."""

    def __init__(self) -> None:
        self.number: dict[int, int] = {}
        self.pending = ""

    def _sub(self, m: re.Match[str]) -> str:
        n = int(m.group(1))
        return f"[ID:{self.number.setdefault(n, len(self.number))}]"

    def feed(self, delta: str) -> str:
        text = self.pending + delta
        cut = text.rfind("[")
        if cut >= 0 and "]" not in text[cut:] and re.fullmatch(r"\[(I(D(:\d*)?)?)?", text[cut:]):
            text, self.pending = text[:cut], text[cut:]
        else:
            self.pending = ""
        return _MARKER.sub(self._sub, text)

    def flush(self) -> str:
        text, self.pending = self.pending, ""
        return _MARKER.sub(self._sub, text)

    def chunks(self, refs: list[ChatReference]) -> list[RFReferenceChunk]:
        """The references in the order of their numbers; those never cited in the text after them."""
        for r in sorted(refs, key=lambda r: r.id):
            self.number.setdefault(r.id, len(self.number))
        ordered = sorted(refs, key=lambda r: self.number[r.id])
        return [RFReferenceChunk(id=r.chunk_id, content=r.content, document_id=r.doc_id,
                                 document_name=r.document_name, dataset_id=r.kb_id,
                                 positions=[[float(x) for x in p] for p in r.positions], url=r.source_url,
                                 similarity=r.similarity, vector_similarity=r.vector_similarity,
                                 term_similarity=r.term_similarity)
                for r in ordered]


def _renumbered(text: str, refs: list[ChatReference]) -> tuple[str, list[RFReferenceChunk]]:
    r = Renumber()
    out = r.feed(text) + r.flush()
    return out, r.chunks(refs)


def _openai(chat_id: str, body: dict[str, Any], ctx: Context, principal: Principal) -> Any:
    from ragloom.api import openai_compat
    from ragloom.schemas.openai import ChatCompletion, ChatCompletionRequest

    missing = [k for k in ("model", "messages") if k not in body]
    if missing:
        fail(ARGUMENT_ERROR, "required argument are missing: " + "".join(f"{k}; " for k in missing))
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        fail(DATA_ERROR, "You have to provide messages.")
    if not isinstance(messages[-1], dict) or messages[-1].get("role") != "user":
        fail(DATA_ERROR, "The last content of this conversation is not from user.")
    with ctx.db.session() as s:
        try:
            chat = assistants.get(s, principal=principal, assistant_id_or_name=chat_id).id
        except NotFoundError:
            fail(DATA_ERROR, f"You don't own the chat {chat_id}")
    extra_body = body.get("extra_body")
    extra: dict[str, Any] = extra_body if isinstance(extra_body, dict) else {}
    fields = {k: body[k] for k in ("stream", "temperature", "top_p", "presence_penalty", "frequency_penalty",
                                   "max_tokens", "max_completion_tokens") if body.get(k) is not None}
    try:
        request = ChatCompletionRequest.model_validate(
            {**fields, "model": chat, "messages": [{"role": m.get("role"), "content": m.get("content")}
                                                   for m in messages if isinstance(m, dict)]})
    except ValidationError as exc:
        fail(ARGUMENT_ERROR, _field_errors(exc))
    reply = openai_compat.chat_completions(request, ctx, principal)
    if not isinstance(reply, ChatCompletion):
        return reply  # a stream: OpenAI's chunks, ragloom's reference on the finish chunk
    out = reply.model_dump(mode="json", exclude_none=True)
    out["model"] = body.get("model") or "model"
    message = out["choices"][0]["message"]
    answer = reply.choices[0].message.reference
    message.pop("reference", None)
    message["content"], chunks = _renumbered(answer.answer, answer.references)
    if extra.get("reference"):
        message["reference"] = [c.model_dump(mode="json") for c in chunks]
    return JSONResponse(out)


OPENAI_NOTE = ("RAGFlow's per-chat OpenAI-compatible endpoint: OpenAI's chat.completion (no envelope), the chat's "
               "answer to the last user message with the earlier ones as its history; nothing is stored. With "
               "extra_body.reference, message.reference lists the cited chunks ([ID:n] index it). stream: OpenAI's "
               "chunks, the reference (ragloom's shape) on the finish chunk.")


@router.post("/openai/{chat_id}/chat/completions", summary="OpenAI-compatible completion of a chat",
             description=OPENAI_NOTE, dependencies=[rate_limited("answer")], response_model=None)
def openai_chat(chat_id: str, ctx: ContextDep, principal: PrincipalDep,
                body: Annotated[dict[str, Any], Body()]) -> Any:
    return _openai(chat_id, body, ctx, principal)


@router.post("/chats_openai/{chat_id}/chat/completions", summary="OpenAI-compatible completion (RAGFlow's "
             "deprecated alias)", description=OPENAI_NOTE, dependencies=[rate_limited("answer")], response_model=None)
def openai_chat_alias(chat_id: str, ctx: ContextDep, principal: PrincipalDep,
                      body: Annotated[dict[str, Any], Body()]) -> Any:
    return _openai(chat_id, body, ctx, principal)
