"""Share links of an assistant (issue 33): what its owner creates, changes and sees, and what a visitor
without an account sends and gets back."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from ragloom.schemas.base import Timestamp, View
from ragloom.schemas.chats import ChatReference, CitationView
from ragloom.schemas.names import OptionalName

MAX_ORIGINS = 50
MAX_PER_MINUTE = 600
MAX_PER_DAY = 100_000
SHARE_TOKEN = r"^[A-Za-z0-9_-]{16,64}$"  # what a link's token looks like (secrets.token_urlsafe's alphabet)
VISITOR_ID = r"^[A-Za-z0-9_-]{16,64}$"
_ORIGIN = re.compile(r"^https?://(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::\d{1,5})?$")


def _origin(value: str) -> str:
    """An origin as a browser sends it: ``scheme://host[:port]``, lower-cased, no path or trailing slash."""
    origin = value.strip().rstrip("/").lower()
    if not _ORIGIN.match(origin):
        raise ValueError(f"{value!r} is not an origin (scheme://host[:port], e.g. https://help.example.com)")
    return origin


Origin = Annotated[str, AfterValidator(_origin)]

ShareState = Literal["active", "expired", "revoked"]
ShareKind = Literal["chat", "search"]


class _ShareFields(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: OptionalName | None = Field(None, max_length=128, description="the owner's label for the link")
    title: OptionalName | None = Field(None, max_length=128, description="the chat page's title (default: the "
                                                                          "assistant's name)")
    welcome: str | None = Field(None, max_length=2000, description="the text a visitor sees first (default: the "
                                                                    "assistant's opening)")
    allowed_origins: list[Origin] | None = Field(None, max_length=MAX_ORIGINS, description=(
        "the web sites that may embed the link (its chat page in an iframe, its script tag, the visitor API "
        "from their pages): scheme://host[:port]; [] = only this server's own page"))
    per_minute: int | None = Field(None, ge=1, le=MAX_PER_MINUTE, description="questions a minute, all visitors")
    per_day: int | None = Field(None, ge=1, le=MAX_PER_DAY, description="questions a day, all visitors")
    show_pages: bool | None = Field(None, description="whether visitors see the cited pages' images")
    expires_at: datetime | None = Field(None, description="the link stops working at this time (ISO 8601)")


class ShareCreate(_ShareFields):
    """A new share link (defaults: a chat, 10 questions a minute, 500 a day, cited pages shown, no expiry)."""

    kind: ShareKind = Field("chat", description="chat: a conversation; search: a search page (the results with "
                                                "their snippets, the answer above them)")
    expires_in_days: int | None = Field(None, ge=1, le=3650, description="instead of expires_at: days from now")


class ShareUpdate(_ShareFields):
    """Changes to a share link; a field left out keeps its value (``expires_at: null`` too: send ``never_expires``
    to remove the expiry)."""

    never_expires: bool = Field(False, description="remove the expiry")


class EmbedSnippets(View):
    script: str = Field(description="a script tag that adds a chat bubble to a page of an allowed origin")
    iframe: str = Field(description="an iframe showing the chat page")


class ShareView(View):
    id: str
    assistant_id: str
    kind: ShareKind
    name: str
    title: str
    welcome: str
    token: str = Field(description="the link's secret part: whoever has it may ask the assistant")
    url: str = Field(description="the chat page, relative to this server (/share/{token})")
    embed: EmbedSnippets
    allowed_origins: list[str]
    per_minute: int
    per_day: int
    show_pages: bool
    expires_at: Timestamp | None
    revoked_at: Timestamp | None
    state: ShareState
    questions: int = Field(description="questions answered through the link")
    refused: int = Field(description="requests refused by the link's limits")
    sessions: int = Field(description="visitors' sessions kept")
    last_used_at: Timestamp | None
    created_by: str
    created_at: Timestamp | None


class ShareList(View):
    shares: list[ShareView]
    total: int


class ShareInfo(View):
    """What a visitor's page shows before the first question."""

    kind: ShareKind
    title: str
    welcome: str
    show_pages: bool
    extractive: bool = Field(description="answers are extractive (no chat model is configured)")


class VisitorQuestion(BaseModel):
    """A visitor's question; a new session without ``session_id``."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=4000)
    session_id: str | None = Field(None, max_length=32, description="continue one of this visitor's sessions")
    visitor_id: str | None = Field(None, pattern=VISITOR_ID, description=(
        "the visitor, chosen by the client (16-64 letters, digits, '-' or '_'; keep it secret: it opens the "
        "visitor's sessions); default: the visitor cookie, set by the first reply"))
    stream: bool = Field(False, description="server-sent events: answer deltas, then the reply, then [DONE]")


class VisitorReply(View):
    """An answer to a visitor (the JSON reply, and the final event of a stream)."""

    session_id: str
    visitor_id: str
    message_id: str
    answer: str = Field(description="the answer text with [ID:n] citation markers")
    insufficient: bool
    references: list[ChatReference]
    citations: list[CitationView]


class VisitorMessage(View):
    id: str
    role: Literal["user", "assistant"]
    content: str
    references: list[ChatReference]
    citations: list[CitationView]
    feedback: Literal["up", "down"] | None


class VisitorSession(View):
    id: str
    name: str
    messages: list[VisitorMessage]


class VisitorSessionList(View):
    """A visitor's sessions with a link, newest first."""

    sessions: list[VisitorSession]


class VisitorFeedback(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rating: Literal["up", "down"] | None
    comment: str = Field("", max_length=2000)
    visitor_id: str | None = Field(None, pattern=VISITOR_ID)


class SearchQuestion(BaseModel):
    """A search page's question."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=4000)


class SearchHit(View):
    """One result of a search page: a chunk, its document and where the question's terms are in it."""

    chunk_id: str
    doc_id: str
    document_name: str
    content: str
    highlights: list[list[int]] = Field(description="[[start, end], ...]: character spans of content that state "
                                                    "the question's terms")
    positions: list[list[float]]
    pages: str | None = Field(description="the document's page sizes and images (null: none to show)")
    similarity: float
    relevance: float | None


class SearchResults(View):
    """A search page's answer: the answer with its citations, above the results."""

    answer: str = Field(description="the answer text with [ID:n] citation markers")
    insufficient: bool
    model: str
    references: list[ChatReference]
    citations: list[CitationView]
    results: list[SearchHit]
