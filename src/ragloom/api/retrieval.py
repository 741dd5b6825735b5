"""/retrieval and /answer."""

from __future__ import annotations

import json
from collections.abc import Iterator

from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from ragloom.api.deps import READS, ContextDep, PrincipalDep, rate_limited
from ragloom.api.responses import ANSWER_STREAM, CALLER_ERRORS, error_responses
from ragloom.dataflow import Answer
from ragloom.errors import InvalidRequestError, RagloomError
from ragloom.schemas.answers import AnswerRequest, CitedAnswer
from ragloom.schemas.retrieval import Retrieval, RetrievalRequest, ScopeView
from ragloom.service.search import answers
from ragloom.service.search import scope as scoping
from ragloom.service.search.retrieval import check_documents, search
from ragloom.service.search.views import answer_view, retrieval_view, scope_view

router = APIRouter(tags=["retrieval"], responses=CALLER_ERRORS)


@router.post("/retrieval", dependencies=[rate_limited("retrieval")], openapi_extra=READS,
             responses=error_responses(429, 502))
def retrieval(body: RetrievalRequest, ctx: ContextDep, principal: PrincipalDep) -> Retrieval:
    _need_datasets(body.dataset_ids, body.route)
    with ctx.db.session() as s:
        check_documents(s, principal=principal, doc_ids=body.document_ids)
    if body.scope is None:
        return retrieval_view(search(ctx, principal=principal, kb_ids=body.dataset_ids, question=body.question,
                                     options=body))
    if body.route:
        raise InvalidRequestError("scope: give the dataset_ids the scope's documents are in (not route)")
    options, decision = scoping.for_request(ctx, principal=principal, kb_ids=body.dataset_ids,
                                            question=body.question, request=body.scope, options=body)
    if decision.status in ("clarify", "gap"):  # nothing is retrieved: never a search of everything
        return Retrieval(chunks=[], total=0, scope=scope_view(decision.as_json()))
    result = search(ctx, principal=principal, kb_ids=body.dataset_ids, question=body.question, options=options)
    result.scope = decision.as_json()
    return retrieval_view(result)


@router.post("/answer", response_model=CitedAnswer, dependencies=[rate_limited("answer")],
             openapi_extra=READS,
             responses={**ANSWER_STREAM, **error_responses(429, 502)})
def answer(body: AnswerRequest, ctx: ContextDep, principal: PrincipalDep) -> CitedAnswer | StreamingResponse:
    _need_datasets(body.dataset_ids, body.route)
    with ctx.db.session() as s:
        check_documents(s, principal=principal, doc_ids=body.document_ids)
    options, question, scope = body, body.question, None
    if body.scope is not None:
        if body.route:
            raise InvalidRequestError("scope: give the dataset_ids the scope's documents are in (not route)")
        options, decision = scoping.for_request(ctx, principal=principal, kb_ids=body.dataset_ids,
                                                question=body.question, request=body.scope, options=body)
        scope = scope_view(decision.as_json())
        if decision.status in ("clarify", "gap"):  # ask, or name the gap: nothing is retrieved
            asked = scoping.unretrieved_answer(ctx, principal, decision)
            if not body.stream:
                return answer_view(asked).model_copy(update={"scope": scope})
            return StreamingResponse(_sse(asked.text, iter([asked]), scope), media_type="text/event-stream")
        question = scoping.answer_question(ctx, principal, body.scope, decision, body.question)
    if not body.stream:
        result = answers.answer(ctx, principal=principal, kb_ids=body.dataset_ids, question=question,
                                top_n=body.top_n, options=options)
        view = answer_view(result)
        return view.model_copy(update={"scope": scope}) if scope is not None else view
    # Resolve scope and errors before the stream starts, so they still get a proper status code.
    events = answers.answer_stream(ctx, principal=principal, kb_ids=body.dataset_ids, question=question,
                                   top_n=body.top_n, options=options)
    first = next(events)
    return StreamingResponse(_sse(first, events, scope), media_type="text/event-stream")


def _need_datasets(dataset_ids: list[str], route: bool) -> None:
    if not dataset_ids and not route:
        raise InvalidRequestError("dataset_ids: give at least one dataset, or set route to true")


def _sse(first: object, rest: Iterator[object], scope: ScopeView | None = None) -> Iterator[str]:
    try:
        for item in _chain(first, rest):
            if isinstance(item, str):
                yield f"data: {json.dumps({'delta': item}, ensure_ascii=False)}\n\n"
            elif isinstance(item, Answer):
                final = answer_view(item).model_copy(update={"scope": scope}).model_dump(mode="json")
                yield f"data: {json.dumps({'answer': final}, ensure_ascii=False)}\n\n"
    except RagloomError as exc:
        yield f"data: {json.dumps({'error': type(exc).__name__, 'message': exc.message})}\n\n"
    yield "data: [DONE]\n\n"


def _chain(first: object, rest: Iterator[object]) -> Iterator[object]:
    yield first
    yield from rest
