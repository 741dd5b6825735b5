"""API keys as listed (never their secret) and a new key (its secret shown once)."""

from __future__ import annotations

from pydantic import Field

from ragloom.schemas.base import View


class ApiKeyInfo(View):
    """An API key as listed: never its secret."""

    id: str
    name: str
    prefix: str = Field(description="the key's first characters, to recognise it")
    scope: str
    state: str = Field(description="active, revoked or expired")
    user_id: str
    created_at: str | None
    last_used_at: str | None
    expires_at: str | None
    revoked_at: str | None


class ApiKeyList(View):
    keys: list[ApiKeyInfo]
    total: int


class NewApiKey(ApiKeyInfo):
    key: str = Field(description="the secret: shown this once, stored only as a hash")
