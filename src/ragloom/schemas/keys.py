"""API keys: a new key's request, a key as listed (never its secret) and a new key (its secret shown once)."""

from __future__ import annotations

from datetime import datetime

from pydantic import AwareDatetime, Field, model_validator

from ragloom.schemas.base import Request, View
from ragloom.schemas.names import OptionalName
from ragloom.states import KeyScope


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


class KeyCreate(Request):
    """A new API key: a label, what it may do, and when it stops working (never, by default)."""

    name: OptionalName = Field("", max_length=128)
    scope: KeyScope = Field(KeyScope.READ_WRITE, description="read: list, search and ask only")
    expires_at: AwareDatetime | None = Field(None, description="ISO 8601 with a time zone")
    expires_in_days: int | None = Field(None, ge=1, le=3650)
    workspace_id: str | None = Field(None, max_length=64, description="another of your workspaces to create "
                                     "the key in (default: the one you act in)")

    @model_validator(mode="after")
    def _one_expiry(self) -> KeyCreate:
        if self.expires_at is not None and self.expires_in_days is not None:
            raise ValueError("give expires_at or expires_in_days, not both")
        return self

    def expiry(self, now: datetime) -> datetime | None:
        from datetime import timedelta

        if self.expires_in_days is not None:
            return now + timedelta(days=self.expires_in_days)
        return self.expires_at
