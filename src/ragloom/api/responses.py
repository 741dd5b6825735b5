"""How the API declares its responses: the error body under each status code, binary bodies, and
the answer's event stream.

Every body is a model of :mod:`ragloom.schemas` (the error body and /health's in
:mod:`ragloom.schemas.system`). :func:`error_responses` builds
the ``responses=`` declarations (routers and routes) that put the error body into ``/openapi.json``
for each status code :mod:`ragloom.api.errors` may answer with.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from ragloom.schemas.answers import CitedAnswer
from ragloom.schemas.system import ErrorBody

REF = "#/components/schemas/{model}"  # where FastAPI puts the models' schemas


def error_body(kind: str, message: str) -> dict[str, str]:
    """The JSON of an error response (the exception handlers' and the middleware's)."""
    return ErrorBody(error=kind, message=message).model_dump()


_ERRORS: dict[int, str] = {
    400: "invalid request (InvalidRequestError)",
    401: "missing or unknown API key (AuthenticationError); the response has WWW-Authenticate: Bearer",
    403: "the caller may not do this (PermissionDeniedError)",
    404: "not found, or not visible to the caller (NotFoundError)",
    409: "clashes with the current state, e.g. a duplicate name (ConflictError)",
    413: "the request body or an upload is over its configured size (PayloadTooLargeError)",
    422: "the request does not match its schema (InvalidRequestError)",
    429: "rate limit reached (RateLimitedError); Retry-After says when to try again",
    500: "internal error",
    502: "a model (embedding, chat, rerank) failed or is unreachable (ModelError)",
    503: "the object store or the search store failed (StoreError)",
}


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """``responses=`` entries: the error body under each status code."""
    return {code: {"model": ErrorBody, "description": _ERRORS.get(code) or HTTPStatus(code).phrase}
            for code in codes}


# Errors any route may answer with (the body limit applies to every request), and those of the
# routes that need an API key and name a dataset or document.
COMMON_ERRORS = error_responses(400, 413, 422, 500)
CALLER_ERRORS = error_responses(401, 403, 404, 503)


def binary_response(media_type: str, description: str) -> dict[int | str, dict[str, Any]]:
    """``responses=`` of a route that answers with a file's bytes."""
    return {200: {"description": description,
                  "content": {media_type: {"schema": {"type": "string", "format": "binary"}}}}}


# --- the answer as a stream (POST /answer with stream: true) ------------------------------------

def _event(title: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "title": title, "description": description, "properties": properties,
            "required": list(properties)}


ANSWER_EVENTS: dict[str, Any] = {"oneOf": [
    _event("AnswerDelta", "a piece of the answer text, as the model writes it", {"delta": {"type": "string"}}),
    _event("AnswerFinal", "the finished answer with its references (after the last delta)",
           {"answer": {"$ref": REF.format(model=CitedAnswer.__name__)}}),
    {"$ref": REF.format(model=ErrorBody.__name__),
     "description": "the answer failed after the stream started (the last event before [DONE])"},
    {"type": "string", "const": "[DONE]", "description": "the end of the stream (not JSON)"},
]}

ANSWER_STREAM: dict[int | str, dict[str, Any]] = {200: {
    "description": "the answer (application/json), or with stream: true its events (text/event-stream): "
                   "'data: {\"delta\": ...}' lines, then 'data: {\"answer\": ...}', then 'data: [DONE]'",
    "content": {"text/event-stream": {
        "schema": {"type": "string", "description": "server-sent events; each data line is one of itemSchema's "
                                                    "data"},
        "itemSchema": {"type": "object", "required": ["data"], "properties": {
            "data": {"type": "string", "contentMediaType": "application/json", "contentSchema": ANSWER_EVENTS}}},
    }},
}}
