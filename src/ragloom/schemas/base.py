"""What every model shares: :class:`View` (a response body: exactly the declared fields),
:class:`Request` (a request body: an unknown field is refused), the JSON number, timestamp and
positions types, and fields left out of the JSON when they do not apply (:func:`absent_unless`).

The models of :mod:`ragloom.schemas` are the API's response bodies (so ``/openapi.json`` describes
every body) and what the CLI prints (``model_dump(mode="json")``). They forbid unknown fields, so a
builder cannot add a key the schema does not describe; fields marked *absent unless ...* are left out
of the JSON (not ``null``) when they do not apply. Every timestamp is :func:`iso_utc` text.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from ragloom.errors import InvalidRequestError


def iso_utc(dt: datetime | None) -> str | None:
    """Every timestamp the API and the CLI show: ISO 8601 in UTC with an explicit offset
    (``2026-01-02T03:04:05.123456+00:00``). SQLite gives back naive datetimes (stored as UTC by
    :func:`ragloom.db.models.utcnow`), so a naive one is taken as UTC."""
    if dt is None:
        return None
    return (dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)).isoformat()


# A JSON number kept as given: an int stays an int (``3``, not ``3.0``), as the API always sent it.
Number = Annotated[int | float, WithJsonSchema({"type": "number"})]
# ISO 8601 in UTC with an explicit offset (iso_utc)
Timestamp = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]
# [[page, left, right, top, bottom], ...] in PDF points (page 1-based)
Positions = Annotated[list[list[Number]], Field(description="[[page, left, right, top, bottom], ...] in PDF points")]


def _is_none(value: object) -> bool:
    return value is None


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def absent_unless(description: str) -> Any:
    """A field left out of the JSON (rather than sent as ``null``) when it is None; the schema shows
    it as optional, never as nullable."""
    return Field(None, exclude_if=_is_none, description=f"absent unless {description}",
                 json_schema_extra=_no_default)


class View(BaseModel):
    """A response body: exactly the declared fields."""

    model_config = ConfigDict(extra="forbid")


class Request(BaseModel):
    """A request body: exactly the declared fields (an unknown one is refused, 422)."""

    model_config = ConfigDict(extra="forbid")


def parse_json_object(text: str, what: str = "parser_config") -> dict[str, Any]:
    """A JSON object given as text (a form field such as ``parser_config``, a CLI option such as
    ``--config``) -> a dict; else an ``InvalidRequestError`` naming ``what``. Here, not in the service,
    so that the API's forms and the client (which has no service) read them alike."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidRequestError(f"{what} is not valid JSON: {exc}") from exc
    except RecursionError as exc:
        raise InvalidRequestError(f"{what} is nested too deeply") from exc
    if not isinstance(value, dict):
        raise InvalidRequestError(f'{what} must be a JSON object, e.g. {{"chunk_token_num": 256}}')
    return value
