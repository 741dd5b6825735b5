"""The OpenAI-compatible API: ``POST /api/v1/openai/v1/chat/completions`` and ``GET /api/v1/openai/v1/models``.

An OpenAI client whose ``base_url`` is ``http://<ragloom>/api/v1/openai/v1`` and whose API key is a
ragloom key talks to the caller's chat assistants: ``model`` is an assistant's id or name (of the
caller's tenant; any other is 404 ``model_not_found``), and ``/models`` lists them.

The request's ``messages`` are the conversation, kept by the caller: the last message must be the
user's question; the earlier user/assistant pairs are the history its follow-up is rewritten with
(the last turns, as a stored session's). System (and developer) messages are ignored: the
assistant's own system prompt, with its evidence, writes the answer. Nothing is stored — no session,
no message. The answer is the chat use case's (:mod:`ragloom.service.chat.completion`: :func:`prepare`, then
:func:`reply` or :func:`reply_stream`). ``temperature``, ``top_p``, ``presence_penalty``,
``frequency_penalty`` and ``max_tokens`` (or ``max_completion_tokens``) override the assistant's
chat model settings; ``finish_reason`` is ``"length"`` when the chat model stopped at that limit.

Replies follow OpenAI's schema: ``chat.completion``, or with ``stream: true`` ``chat.completion.chunk``
events (the role, the text deltas, a last chunk with ``finish_reason: "stop"``, a usage chunk when
``stream_options.include_usage``, then ``data: [DONE]``). The references ride in an extra field,
``reference`` — the chat completions reply's payload without the stored ids (:class:`ChatAnswer`):
on the message, and on the stream's ``finish_reason`` chunk. ``usage`` is counted with the searched
knowledge bases' embedding tokenizer (an estimate: the chat model's own counts are not reported).
When the final text is the streamed text plus more (notes), the rest is sent as a last delta; when
the assistant's rules replaced it (its empty response, markers removed), ``reference.answer`` is the
text to show.

Errors use OpenAI's body, ``{"error": {"message", "type", "param", "code"}}``, so the ``openai``
package raises its own exceptions (401 AuthenticationError, 404 NotFoundError, 429 RateLimitError...).
Only the body-limit middleware's refusals (413) come before routing and keep the API's body.
"""

from __future__ import annotations

import json
import logging
import math
import time
import uuid
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from ragloom.api.deps import READS, ContextDep, PrincipalDep, rate_limited
from ragloom.api.ratelimit import refund_charge
from ragloom.api.responses import REF
from ragloom.context import Context
from ragloom.errors import (
    AuthenticationError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    RagloomError,
    RateLimitedError,
    http_status,
)
from ragloom.schemas.chats import ChatAnswer, CompletionRequest
from ragloom.schemas.openai import (
    ChatChoice,
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionRequest,
    ChatMessageIn,
    ChatMessageOut,
    ChunkChoice,
    ChunkDelta,
    ModelCard,
    ModelList,
    OpenAIError,
    OpenAIErrorDetail,
    Usage,
)
from ragloom.schemas.system import ErrorBody
from ragloom.service.chat import assistants, completion

log = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 4000  # the chat completions' question limit
SKIPPED_ROLES = ("system", "developer", "tool", "function")


# --- errors -----------------------------------------------------------------------------------------

_ERRORS: dict[int, str] = {
    400: "invalid request, e.g. the last message is not the user's (type invalid_request_error)",
    401: "no 'Authorization: Bearer <key>' header, or an unknown key (code invalid_api_key)",
    403: "the key may not use the assistant (code permission_denied)",
    404: "the model is not an assistant of the caller's tenant (code model_not_found)",
    422: "the request does not match its schema (type invalid_request_error)",
    429: "rate limit of the key's answers reached (code rate_limit_exceeded); Retry-After says when to try again",
    500: "internal error (type server_error)",
    502: "the chat model failed or is unreachable (type server_error)",
    503: "the search store failed (type server_error)",
}
OPENAI_ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": OpenAIError, "description": text}
                                                  for code, text in _ERRORS.items()}
OPENAI_ERRORS[413] = {"model": ErrorBody, "description": "the request body is over RAGLOOM_MAX_BODY_KB: refused "
                                                         "before routing, with the API's own error body"}


def _error(status: int, message: str, *, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    kind = ("server_error" if status >= 500 else "requests" if status == 429 else "invalid_request_error")
    return OpenAIError(error=OpenAIErrorDetail(message=message, type=kind, param=param, code=code)).model_dump()


def _failure(exc: RagloomError) -> tuple[int, dict[str, Any], dict[str, str] | None]:
    status = http_status(exc)
    if status >= 500:
        log.error("%s: %s", type(exc).__name__, exc.message)
    if isinstance(exc, AuthenticationError):
        return status, _error(status, exc.message, code="invalid_api_key"), {"WWW-Authenticate": "Bearer"}
    if isinstance(exc, NotFoundError):
        return status, _error(status, exc.message, param="model", code="model_not_found"), None
    if isinstance(exc, PermissionDeniedError):
        return status, _error(status, exc.message, code="permission_denied"), None
    if isinstance(exc, InvalidRequestError):
        head = exc.message.partition(":")[0]
        param = head if head and " " not in head else None
        return status, _error(status, exc.message, param=param), None
    if isinstance(exc, RateLimitedError):
        return status, _error(status, exc.message, code="rate_limit_exceeded"), {
            "Retry-After": str(max(1, math.ceil(exc.retry_after)))}
    return status, _error(status, exc.message, code=type(exc).__name__), None


class OpenAIRoute(APIRoute):
    """Answers every error of its routes with OpenAI's body (the app's handlers use the API's)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            try:
                return await handler(request)
            except RagloomError as exc:
                status, body, headers = _failure(exc)
                return JSONResponse(body, status_code=status, headers=headers)
            except RequestValidationError as exc:
                refund_charge(request.scope)
                parts, param = [], None
                for err in exc.errors():
                    loc = ".".join(str(x) for x in err.get("loc", ()) if x != "body")
                    param = param or loc or None
                    parts.append(f"{loc}: {err.get('msg')}" if loc else str(err.get("msg")))
                return JSONResponse(_error(422, "; ".join(parts) or "invalid request", param=param), status_code=422)
            except StarletteHTTPException as exc:
                return JSONResponse(_error(exc.status_code, str(exc.detail)), status_code=exc.status_code)

        return route


router = APIRouter(prefix="/openai/v1", tags=["openai"], route_class=OpenAIRoute, responses=OPENAI_ERRORS)


# --- routes -----------------------------------------------------------------------------------------

@router.get("/models", summary="OpenAI: list models (the caller's assistants)")
def list_models(ctx: ContextDep, principal: PrincipalDep) -> ModelList:
    with ctx.db.session() as s:
        rows = assistants.list_all(s, principal=principal)
        cards = [ModelCard(id=a.id, object="model", created=int(a.created_at.timestamp()) if a.created_at else 0,
                           owned_by="ragloom", name=a.name) for a in rows]
    return ModelList(object="list", data=cards)


def _conversation(messages: list[ChatMessageIn]) -> tuple[str, list[tuple[str, str]]]:
    """The question (the last message, the user's) and the (question, answer) pairs before it."""
    *earlier, last = [m for m in messages if m.role not in SKIPPED_ROLES]
    question = last.text().strip() if last.role == "user" else ""
    if not question:
        raise InvalidRequestError("messages: the last message (but system ones) must be the user's, with text")
    if len(question) > MAX_QUESTION_CHARS:
        raise InvalidRequestError(f"messages: the question is over {MAX_QUESTION_CHARS} characters")
    history: list[tuple[str, str]] = []
    for m in earlier:
        if m.role == "user":
            history.append((m.text(), ""))
        elif history and not history[-1][1]:
            history[-1] = (history[-1][0], m.text())
    return question, [(q, a) for q, a in history if q.strip()]


def _inline_schema(model: type[BaseModel], shared: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON schema with the models it alone uses inlined; the ones ``shared`` (a route's
    response model) uses too are ``$ref``s to the components."""
    schema = model.model_json_schema(ref_template=REF)
    defs: dict[str, Any] = schema.pop("$defs", {})
    known = set(shared.model_json_schema(ref_template=REF).get("$defs", {}))
    prefix = REF.format(model="")

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            name = str(node.get("$ref", "")).removeprefix(prefix)
            if name in defs and name not in known:
                return walk(defs[name])
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return dict(walk(schema))


CHUNK_EVENTS: dict[str, Any] = {"oneOf": [
    _inline_schema(ChatCompletionChunk, ChatCompletion),
    {"$ref": REF.format(model=OpenAIError.__name__),
     "description": "the answer failed after the stream started (the last event before [DONE])"},
    {"type": "string", "const": "[DONE]", "description": "the end of the stream (not JSON)"},
]}
STREAM_RESPONSE: dict[int | str, dict[str, Any]] = {200: {
    "description": "chat.completion (application/json), or with stream: true chat.completion.chunk events "
                   "(text/event-stream), then 'data: [DONE]'",
    "content": {"text/event-stream": {
        "schema": {"type": "string", "description": "server-sent events; each data line is one of itemSchema's data"},
        "itemSchema": {"type": "object", "required": ["data"], "properties": {
            "data": {"type": "string", "contentMediaType": "application/json", "contentSchema": CHUNK_EVENTS}}},
    }},
}}


@router.post("/chat/completions", summary="OpenAI: create a chat completion", response_model=ChatCompletion,
             openapi_extra=READS,
             dependencies=[rate_limited("answer")], responses=STREAM_RESPONSE)
def chat_completions(body: ChatCompletionRequest, ctx: ContextDep,
                     principal: PrincipalDep) -> ChatCompletion | StreamingResponse:
    """The assistant ``model`` answers the conversation's last question; nothing is stored."""
    question, history = _conversation(body.messages)
    max_tokens = body.max_completion_tokens or body.max_tokens
    overrides: dict[str, float | int] = {
        k: v for k, v in (("temperature", body.temperature), ("top_p", body.top_p),
                          ("presence_penalty", body.presence_penalty), ("frequency_penalty", body.frequency_penalty),
                          ("max_tokens", None if max_tokens is None else max(16, max_tokens))) if v is not None}
    prepared = completion.prepare(ctx, principal=principal, assistant_id=body.model,
                            request=CompletionRequest(question=question), history=history,
                            llm_overrides=overrides)
    cid, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
    if not body.stream:
        answer = completion.reply(ctx, prepared=prepared)
        return ChatCompletion(
            id=cid, object="chat.completion", created=created, model=body.model,
            choices=[ChatChoice(index=0, message=ChatMessageOut(role="assistant", content=answer.answer,
                                                                reference=answer), finish_reason=_finish(answer))],
            usage=_usage(ctx, prepared, answer.answer))
    events = completion.reply_stream(ctx, prepared=prepared)
    first = next(events)  # the answer starts before the response: a failing chat model gets its status code
    include_usage = bool(body.stream_options and body.stream_options.include_usage)
    stream = _Stream(ctx, prepared, cid, created, body.model, include_usage)
    return StreamingResponse(stream.events(first, events), media_type="text/event-stream")


def _finish(answer: ChatAnswer) -> Literal["stop", "length"]:
    return "length" if answer.truncated else "stop"


def _usage(ctx: Context, prepared: completion.Prepared, text: str) -> Usage:
    prompt = completion.count_tokens(ctx, prepared, completion.prompt_text(prepared))
    answered = completion.count_tokens(ctx, prepared, text)
    return Usage(prompt_tokens=prompt, completion_tokens=answered, total_tokens=prompt + answered)


class _Stream:
    def __init__(self, ctx: Context, prepared: completion.Prepared, cid: str, created: int, model: str,
                 include_usage: bool) -> None:
        self.ctx, self.prepared, self.include_usage = ctx, prepared, include_usage
        self.head: dict[str, Any] = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model}

    def _chunk(self, choices: list[ChunkChoice], *, usage: Usage | None = None,
               reference: ChatAnswer | None = None) -> str:
        chunk = ChatCompletionChunk(**self.head, choices=choices, usage=usage, reference=reference)
        data = chunk.model_dump(mode="json", exclude_none=False)
        if not self.include_usage:
            data.pop("usage")
        if reference is None:
            data.pop("reference")
        for choice in data["choices"]:
            choice["delta"] = {k: v for k, v in choice["delta"].items() if v is not None}
        return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

    def _delta(self, text: str, role: Literal["assistant"] | None = None) -> str:
        return self._chunk([ChunkChoice(index=0, delta=ChunkDelta(role=role, content=text), finish_reason=None)])

    def events(self, first: str | ChatAnswer, rest: Iterator[str | ChatAnswer]) -> Iterator[str]:
        streamed = ""
        try:
            yield self._delta("", role="assistant")
            for item in _chain(first, rest):
                if isinstance(item, str):
                    if item:
                        streamed += item
                        yield self._delta(item)
                    continue
                if item.answer.startswith(streamed) and len(item.answer) > len(streamed):
                    yield self._delta(item.answer[len(streamed):])  # e.g. the notes after the answer
                yield self._chunk([ChunkChoice(index=0, delta=ChunkDelta(), finish_reason=_finish(item))],
                                  reference=item)
                if self.include_usage:
                    yield self._chunk([], usage=_usage(self.ctx, self.prepared, item.answer))
        except RagloomError as exc:
            _, body, _ = _failure(exc)
            yield f"data: {json.dumps(body, ensure_ascii=False)}\n\n"
        yield "data: [DONE]\n\n"


def _chain(first: str | ChatAnswer, rest: Iterator[str | ChatAnswer]) -> Iterator[str | ChatAnswer]:
    yield first
    yield from rest
