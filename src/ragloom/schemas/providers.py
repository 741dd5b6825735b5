"""Model providers of a workspace: setting one (the key is never shown back), listing them and
testing a connection."""

from __future__ import annotations

from typing import Literal

import httpx
from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from pydantic.json_schema import SkipJsonSchema

from ragloom.schemas.base import Number, Timestamp, View, absent_unless


class ProviderSet(BaseModel):
    """A workspace's provider of one kind: an OpenAI-compatible API (the ``PUT`` body)."""

    model_config = ConfigDict(extra="forbid")

    base_url: str = Field(min_length=1, max_length=500, examples=["https://api.openai.com/v1"],
                          description="the API's base URL, e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1 "
                                      "(chat: POST {base_url}/chat/completions; embedding: /embeddings; rerank: "
                                      "/rerank, Jina/Cohere-shaped)")
    model: str = Field(min_length=1, max_length=100, description="the model name sent to the API")
    api_key: SecretStr | None = Field(
        None, description="the API key: stored encrypted, never shown again. Left out (or null): keep the stored "
        "key, which needs the same base_url; \"\": no key")

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        return check_base_url(value)

    @field_validator("model")
    @classmethod
    def _model(cls, value: str) -> str:
        value = value.strip()
        if not value or not value.isprintable():
            raise ValueError("a model name is one line of printable text")
        return value


class ProviderInfo(View):
    """A workspace's provider as shown: never its API key."""

    kind: str
    base_url: str
    model: str
    has_api_key: bool
    api_key_hint: str | None = Field(description="the key's last four characters ('...abcd'), shown to owners and "
                                                 "admins; null for members, without a key or for a short one")
    updated_by: str | None
    updated_at: Timestamp | None


class ModelInUse(View):
    kind: str
    source: Literal["workspace", "server", "none"] = Field(
        description="workspace: the workspace's own provider; server: the server's default (its environment); "
                    "none: no such model (chat: answers are extractive; rerank: no reranking)")
    model: str | None = Field(description="chat and rerank: the model name; embedding: the name new knowledge "
                                          "bases record")


class ProviderList(View):
    providers: list[ProviderInfo]
    total: int
    in_use: list[ModelInUse] = Field(description="for each kind, the model this workspace's answers, searches and "
                                                 "new knowledge bases use")


class ConnectionTest(View):
    """The result of one minimal call to a provider (a failure is a result too, never an error status)."""

    kind: str
    model: str
    ok: bool
    latency_ms: Number
    message: str
    dimension: int | SkipJsonSchema[None] = absent_unless("an embedding provider answered: its vectors' length")


def check_base_url(value: str) -> str:
    """An http(s) URL without credentials, query or fragment (the key goes in ``api_key``), without its
    trailing slash; ``ValueError`` otherwise."""
    value = value.strip()
    try:
        url = httpx.URL(value)
    except (httpx.InvalidURL, ValueError) as exc:
        raise ValueError(f"not a URL: {exc}") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ValueError("an http:// or https:// URL, e.g. https://api.openai.com/v1")
    if url.userinfo or url.query or url.fragment:
        raise ValueError("no user, password, query or fragment in the URL: the API key goes in api_key")
    return value.rstrip("/")
