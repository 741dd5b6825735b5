"""/retrieval and /answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from ragloom.api.deps import ContextDep, PrincipalDep, rate_limited
from ragloom.api.schemas import AnswerRequest, RetrievalRequest
from ragloom.errors import InvalidRequestError, RagloomError
from ragloom.service import answers
from ragloom.service.search import SearchOptions, search
from ragloom.service.views import retrieval_view

router = APIRouter(tags=["retrieval"])


@router.post("/retrieval", dependencies=[rate_limited("retrieval")])
def retrieval(body: RetrievalRequest, ctx: ContextDep, principal: PrincipalDep) -> dict[str, Any]:
    opts = SearchOptions(page=body.page, page_size=body.page_size, similarity_threshold=body.similarity_threshold,
                         vector_similarity_weight=body.vector_similarity_weight, doc_ids=body.document_ids,
                         mode=body.mode, explain=body.explain, metadata_filter=body.metadata_filter,
                         toc_enhance=body.toc_enhance, route=body.route, fusion=body.fusion)
    _need_datasets(body.dataset_ids, body.route)
    result = search(ctx, principal=principal, kb_ids=body.dataset_ids, question=body.question, options=opts)
    return retrieval_view(result)


@router.post("/answer", response_model=None, dependencies=[rate_limited("answer")])
def answer(body: AnswerRequest, ctx: ContextDep, principal: PrincipalDep) -> dict[str, Any] | StreamingResponse:
    opts = SearchOptions(page=1, page_size=body.top_n, similarity_threshold=body.similarity_threshold,
                         vector_similarity_weight=body.vector_similarity_weight, doc_ids=body.document_ids,
                         metadata_filter=body.metadata_filter, toc_enhance=body.toc_enhance, route=body.route)
    _need_datasets(body.dataset_ids, body.route)
    if not body.stream:
        result = answers.answer(ctx, principal=principal, kb_ids=body.dataset_ids, question=body.question,
                                options=opts)
        return result.to_dict()
    # Resolve scope and errors before the stream starts, so they still get a proper status code.
    events = answers.answer_stream(ctx, principal=principal, kb_ids=body.dataset_ids, question=body.question,
                                   options=opts)
    first = next(events)
    return StreamingResponse(_sse(first, events), media_type="text/event-stream")


def _need_datasets(dataset_ids: list[str], route: bool) -> None:
    if not dataset_ids and not route:
        raise InvalidRequestError("dataset_ids: give at least one dataset, or set route to true")


def _sse(first: object, rest: Iterator[object]) -> Iterator[str]:
    try:
        for item in _chain(first, rest):
            if isinstance(item, str):
                yield f"data: {json.dumps({'delta': item}, ensure_ascii=False)}\n\n"
            else:
                yield f"data: {json.dumps({'answer': item.to_dict()}, ensure_ascii=False)}\n\n"  # type: ignore[attr-defined]
    except RagloomError as exc:
        yield f"data: {json.dumps({'error': type(exc).__name__, 'message': exc.message})}\n\n"
    yield "data: [DONE]\n\n"


def _chain(first: object, rest: Iterator[object]) -> Iterator[object]:
    yield first
    yield from rest
