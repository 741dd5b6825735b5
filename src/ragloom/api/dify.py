"""Dify's external-knowledge API: ``POST /api/v1/dify/retrieval``.

Dify appends ``/retrieval`` to the endpoint it is given, so a Dify "External Knowledge API" whose
endpoint is ``http://<ragloom>/api/v1/dify`` and whose API key is a ragloom key searches the
dataset named by the request's ``knowledge_id`` (a dataset id or name the key may read).
The request and response follow Dify's specification
(https://docs.dify.ai/en/use-dify/knowledge/external-knowledge-api); the search is the retrieval use
case :func:`ragloom.service.search.retrieval.search`, the same as ``POST /retrieval``.

Errors use Dify's body, ``{"error_code": int, "error_msg": str}``, not the API's
``{"error", "message"}``: 1001 (no ``Authorization: Bearer <key>`` header) and 1002 (an unknown key)
with HTTP 403, as Dify's AccessDeniedException; 2001 (the dataset does not exist or the key may not
read it — the two are not told apart) with 404. Any other error carries its HTTP status as its code
(400, 422, 429 with Retry-After, 500, 502, 503). Only the body-limit middleware's refusals (413, and
400 for JSON nested too deeply) come before routing and keep the API's body.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Coroutine
from typing import Annotated, Any, cast, get_args

from fastapi import APIRouter, Depends, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException

from ragloom.api.deps import READS, BearerDep, ContextDep, rate_bucket
from ragloom.api.ratelimit import charge, refund_charge
from ragloom.context import Caller, Principal
from ragloom.errors import (
    AuthenticationError,
    InvalidRequestError,
    NotFoundError,
    RagloomError,
    RateLimitedError,
    http_status,
)
from ragloom.schemas.dify import (
    UNSUPPORTED_OPERATORS,
    ComparisonOperator,
    DifyError,
    DifyMetadataCondition,
    DifyMetadataConditions,
    DifyRecord,
    DifyRecords,
    DifyRetrievalRequest,
)
from ragloom.schemas.options import MAX_PAGE_SIZE, RetrievalOptions
from ragloom.schemas.system import ErrorBody
from ragloom.service.accounts import identity
from ragloom.service.search.retrieval import search
from ragloom.service.search.views import retrieval_view

log = logging.getLogger(__name__)

INVALID_AUTHORIZATION = 1001
AUTHORIZATION_FAILED = 1002
KNOWLEDGE_NOT_FOUND = 2001


# --- the bodies -----------------------------------------------------------------------------------


class DifyFailure(Exception):
    """An error answered with Dify's body: ``code`` (error_code) and the HTTP ``status``."""

    def __init__(self, code: int, status: int, message: str) -> None:
        super().__init__(message)
        self.code, self.status, self.message = code, status, message


_ERRORS: dict[int, str] = {
    400: "invalid request, e.g. an unsupported comparison operator (error_code 400)",
    403: "1001: no 'Authorization: Bearer <key>' header; 1002: the key is not known",
    404: "2001: the knowledge base does not exist, or the key may not read it",
    422: "the request does not match its schema (error_code 422)",
    429: "rate limit of the key's retrieval calls reached (error_code 429); Retry-After says when to try again",
    500: "internal error (error_code 500)",
    502: "a model failed or is unreachable (error_code 502)",
    503: "the search store failed (error_code 503)",
}
DIFY_ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": DifyError, "description": text}
                                                for code, text in _ERRORS.items()}
DIFY_ERRORS[413] = {"model": ErrorBody, "description": "the request body is over RAGLOOM_MAX_BODY_KB: refused "
                                                       "before routing, with the API's own error body"}


def _reply(code: int, status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    body = DifyError(error_code=code, error_msg=message).model_dump()
    return JSONResponse(body, status_code=status, headers=headers)


class DifyRoute(APIRoute):
    """Answers every error of its routes with Dify's body (the app's handlers use the API's)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            try:
                return await handler(request)
            except DifyFailure as exc:
                return _reply(exc.code, exc.status, exc.message)
            except NotFoundError as exc:
                return _reply(KNOWLEDGE_NOT_FOUND, 404, f"The knowledge does not exist: {exc.message}")
            except RateLimitedError as exc:
                return _reply(429, 429, exc.message, {"Retry-After": str(max(1, math.ceil(exc.retry_after)))})
            except RagloomError as exc:
                status = http_status(exc)
                if status >= 500:
                    log.error("%s: %s", type(exc).__name__, exc.message)
                return _reply(status, status, exc.message)
            except RequestValidationError as exc:
                refund_charge(request.scope)
                parts = []
                for err in exc.errors():
                    loc = ".".join(str(x) for x in err.get("loc", ()) if x != "body")
                    parts.append(f"{loc}: {err.get('msg')}" if loc else str(err.get("msg")))
                return _reply(422, 422, "; ".join(parts) or "invalid request")
            except StarletteHTTPException as exc:
                return _reply(exc.status_code, exc.status_code, str(exc.detail))

        return route


router = APIRouter(prefix="/dify", tags=["dify"], route_class=DifyRoute, responses=DIFY_ERRORS)


def dify_principal(request: Request, ctx: ContextDep, _bearer: BearerDep) -> Principal:
    """The caller of a Dify request (Dify sends the key configured for the external knowledge API as a
    Bearer token); its key's retrieval calls are rate limited as ``POST /retrieval``'s are (the same
    bucket), and a call refused as malformed (422) gives its token back."""
    header = request.headers.get("authorization", "")
    local = getattr(request.app.state, "local_principal", None)
    if local is not None and not header:  # the CLI's in-process app (never served on a port)
        return cast(Principal, local)
    scheme, _, key = header.partition(" ")
    key = key.strip()
    if scheme.lower() != "bearer" or not key or " " in key:
        raise DifyFailure(INVALID_AUTHORIZATION, 403,
                          "Invalid Authorization header format. Expected 'Bearer <api-key>' format.")
    try:
        with ctx.db.session() as s:
            principal = identity.authenticate(s, key)
    except AuthenticationError as exc:
        raise DifyFailure(AUTHORIZATION_FAILED, 403, f"Authorization failed: {exc.message}") from exc
    bucket, per = rate_bucket(Caller(principal.user_id, principal.tenant_id, principal.role), header)
    charge(request.scope, request.app.state.rate_limiter, bucket, "retrieval", per=per)
    return principal


DifyPrincipalDep = Annotated[Principal, Depends(dify_principal)]


@router.post("/retrieval", summary="Dify external knowledge retrieval", openapi_extra=READS)
def dify_retrieval(body: DifyRetrievalRequest, ctx: ContextDep, principal: DifyPrincipalDep) -> DifyRecords:
    """The chunks of the dataset ``knowledge_id`` that best match ``query``, as Dify's records."""
    setting = body.retrieval_setting
    top_k = min(setting.top_k, MAX_PAGE_SIZE, ctx.settings.max_result_window)
    options = RetrievalOptions(
        # the scores are rounded to 6 places: a score_threshold equal to one keeps it (the exact cut is below)
        page=1, page_size=top_k, similarity_threshold=max(0.0, setting.score_threshold - 1e-6),
        metadata_filter=metadata_filter(body.metadata_condition) if body.metadata_condition else None)
    result = retrieval_view(search(ctx, principal=principal, kb_ids=[body.knowledge_id], question=body.query,
                                   options=options))
    records = []
    relative = ctx.settings.fusion != "weighted"  # the normalized fusion's similarity is relative: relevance is not
    for c in result.chunks:
        # Dify's score: the calibrated relevance (absolute: score_threshold means the same for every question),
        # the weighted similarity under the weighted fusion (as before); rank features may lift it over 1
        raw = c.relevance if relative and c.relevance is not None else c.similarity
        score = min(1.0, max(0.0, float(raw)))
        if score < setting.score_threshold:
            continue
        pages = sorted({int(p[0]) for p in c.positions if int(p[0]) > 0})  # 0: the HTML view
        records.append(DifyRecord(content=c.content, score=score, title=c.document_name, metadata={
            "document_id": c.doc_id, "dataset_id": c.kb_id, "chunk_id": c.chunk_id, "version_id": c.version_id,
            "pages": pages}))
    return DifyRecords(records=records)


# --- Dify's metadata_condition as ragloom's metadata filter (ragloom.retrieval.metadata) ----------

_SAME_OP = {"contains": "contains", "is": "=", "=": "=", "is not": "!=", "≠": "!=", "!=": "!=", "in": "in",
            "not in": "not in", ">": ">", "after": ">", "<": "<", "before": "<", "≥": ">=", ">=": ">=",
            "≤": "<=", "<=": "<="}
_SUPPORTED = [o for o in get_args(ComparisonOperator) if o not in UNSUPPORTED_OPERATORS]


def _on_key(key: str, cond: DifyMetadataCondition) -> dict[str, Any]:
    op, value = cond.comparison_operator, cond.value
    if op in UNSUPPORTED_OPERATORS:
        raise InvalidRequestError(f"metadata_condition: comparison_operator {op!r} is not supported by ragloom "
                                   f"(supported: {', '.join(_SUPPORTED)})")
    if op in ("empty", "null"):  # missing, null or ""
        return {"or": [{"not": {"key": key, "op": "exists"}}, {"key": key, "op": "=", "value": ""}]}
    if op in ("not empty", "not null"):
        return {"and": [{"key": key, "op": "exists"}, {"key": key, "op": "!=", "value": ""}]}
    if value is None:
        raise InvalidRequestError(f"metadata_condition: {key!r} {op!r} needs a value")
    if op == "not contains":
        return {"not": {"key": key, "op": "contains", "value": value}}
    target = _SAME_OP[op]
    if target in ("in", "not in") and not isinstance(value, list):
        value = [value]
    elif target not in ("in", "not in") and isinstance(value, list):
        raise InvalidRequestError(f"metadata_condition: {key!r} {op!r} takes one value, not a list")
    return {"key": key, "op": target, "value": value}


def metadata_filter(condition: DifyMetadataConditions) -> dict[str, Any]:
    """``{"and"|"or": [...]}`` of the conditions; a condition on several keys holds for any of them."""
    parts = []
    for cond in condition.conditions:
        keys = [cond.name] if isinstance(cond.name, str) else cond.name
        if not keys or not all(keys):
            raise InvalidRequestError("metadata_condition: every condition needs a non-empty name")
        on_keys = [_on_key(k, cond) for k in keys]
        parts.append(on_keys[0] if len(on_keys) == 1 else {"or": on_keys})
    return {condition.logical_operator: parts}
