"""Request bodies of the API (responses are the models of ``ragloom.service.views`` and ``ragloom.api.responses``).

Creating a dataset takes ``ragloom.service.knowledgebases.KBCreate`` itself; the retrieval and answer
bodies are the use cases' options (``ragloom.schemas.options``) plus the question and the datasets."""

from __future__ import annotations

from datetime import datetime

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from ragloom.schemas.options import MAX_DOCUMENT_IDS, EvidenceOptions, RetrievalOptions
from ragloom.schemas.scope import ScopeRequest
from ragloom.service.filenames import DisplayName, OptionalName
from ragloom.states import KeyScope

MAX_DATASETS = 100  # knowledge bases searched by one request


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DocumentIds(_Strict):
    ids: list[str] = Field(min_length=1, max_length=MAX_DOCUMENT_IDS)


class _Question(_Strict):
    """The question and where to look: the first fields of the retrieval and answer bodies."""

    question: str = Field(min_length=1, max_length=4000)
    dataset_ids: list[str] = Field(default_factory=list, max_length=MAX_DATASETS,
                                   description="required unless route is true")


class RetrievalRequest(RetrievalOptions, _Question):
    """A question, the datasets to search, and how to search them."""

    scope: ScopeRequest | None = Field(None, description="the applicability scope, decided before retrieval: "
                                       "the documents whose metadata match the values (given, or read from the "
                                       "question); a missing value (clarify) or one no document carries (gap) "
                                       "retrieves nothing — the response's scope says which and why")


class AnswerRequest(EvidenceOptions, _Question):
    """A question, the datasets to answer from, which of their chunks may serve as evidence, and how many."""

    top_n: int = Field(6, ge=1, le=64, description="evidence chunks; at most RAGLOOM_MAX_RESULT_WINDOW too")
    stream: bool = False
    scope: ScopeRequest | None = Field(None, description="the applicability scope, as the retrieval's: a missing "
                                       "value is asked for and a value no document carries is named, with nothing "
                                       "retrieved; the answer's scope says what was decided")


class MetadataUpdate(_Strict):
    """Keys to set (scalars or lists of scalars); ``null`` removes a key."""

    metadata: dict[str, str | int | float | bool | list[str | int | float | bool] | None]


class DocumentUpdate(_Strict):
    """A document's own chunk method (``null`` = follow the dataset); changing it re-parses the document."""

    chunk_method: str | None
    parser_config: dict[str, object] | None = None


MAX_CHUNK_TEXT = 100_000  # characters of a chunk a caller writes


class ChunkUpdate(_Strict):
    """A chunk's new text and/or whether it may be retrieved (``false`` disables it); kept as an
    override of the document that a re-parse re-applies to the chunk when it still exists."""

    content: str | None = Field(None, min_length=1, max_length=MAX_CHUNK_TEXT)
    available: bool | None = Field(None, description="false: disabled, never retrieved; true: enabled again")


class ChunkCreate(_Strict):
    """A chunk of the caller's own text, added after the document's last chunk (kept over re-parses)."""

    content: str = Field(min_length=1, max_length=MAX_CHUNK_TEXT)


class KeyCreate(_Strict):
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


class SignUp(_Strict):
    """A new account: it gets a workspace of its own, and joins the invitation's too when one is given."""

    email: str = Field(min_length=3, max_length=255)
    password: str = Field(min_length=1, max_length=1024)
    name: OptionalName = Field("", max_length=128)
    invitation: str = Field("", max_length=200, description="an invitation token: lets you sign up when "
                            "sign-up is closed, and joins its workspace")


class LogIn(_Strict):
    email: str = Field(min_length=1, max_length=255)
    password: str = Field(min_length=1, max_length=1024)


class PasswordChange(_Strict):
    current_password: str = Field(min_length=1, max_length=1024)
    new_password: str = Field(min_length=1, max_length=1024)


class WorkspaceSwitch(_Strict):
    workspace_id: str = Field(min_length=1, max_length=64)


class WorkspaceName(_Strict):
    name: DisplayName = Field(min_length=1, max_length=128)


class RoleChange(_Strict):
    role: str = Field(description="admin or member")


class OwnerChange(_Strict):
    user_id: str = Field(min_length=1, max_length=64, description="the member who becomes the owner")


class InvitationCreate(_Strict):
    role: str = Field("member", description="admin or member (only the owner invites admins)")
    email: str = Field("", max_length=255, description="only this address may accept it; empty: whoever has the "
                       "token")
    expires_in_hours: float = Field(72.0, gt=0, le=720)


class InvitationAccept(_Strict):
    token: str = Field(min_length=1, max_length=200)


class SignupSetting(_Strict):
    open: bool
