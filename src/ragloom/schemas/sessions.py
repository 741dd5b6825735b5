"""Chat sessions and their messages: a new session, a rename, feedback on an answer, and a session
with its messages as the API shows them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from ragloom.schemas.base import Timestamp, View, absent_unless
from ragloom.schemas.chats import ChatExplain, ChatReference, CitationView
from ragloom.schemas.names import DisplayName
from ragloom.states import MessageRole

NAME_CHARS = 255


class Feedback(View):
    rating: Literal["up", "down"]
    comment: str


class Message(View):
    """A question (role user) or an answer (role assistant) of a session."""

    id: str
    session_id: str
    turn: int = Field(description="a question and its answer share their turn")
    role: MessageRole
    content: str
    created_at: Timestamp | None
    model: str | SkipJsonSchema[None] = absent_unless("an answer: the chat model that wrote it, or 'extractive'")
    insufficient: bool | SkipJsonSchema[None] = absent_unless("an answer: true when the documents do not support "
                                                              "one")
    references: list[ChatReference] = Field(description="an answer's cited evidence; [] for a question")
    citations: list[CitationView]
    explain: ChatExplain | SkipJsonSchema[None] = absent_unless("an answer")
    feedback: Feedback | None = Field(description="the user's rating of an answer")


class MessageList(View):
    messages: list[Message]
    total: int


class DeletedMessages(View):
    deleted: list[str] = Field(description="ids of the messages deleted (a question and its answer)")


class SessionView(View):
    id: str
    assistant_id: str
    name: str
    opening: str = Field(description="the assistant's greeting")
    message_count: int
    created_at: Timestamp | None
    updated_at: Timestamp | None
    share_id: str | SkipJsonSchema[None] = absent_unless("a visitor's session through a share link: the link")
    visitor_id: str | SkipJsonSchema[None] = absent_unless("a visitor's session through a share link: the visitor")


class SessionList(View):
    """Newest first."""

    sessions: list[SessionView]
    total: int
    page: int
    page_size: int


class SessionDetail(SessionView):
    messages: list[Message]


class SessionCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: DisplayName | None = Field(None, min_length=1, max_length=NAME_CHARS, description="default: 'New session'")


class SessionRename(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: DisplayName = Field(min_length=1, max_length=NAME_CHARS)


class FeedbackSet(BaseModel):
    """A rating of an answer; ``rating: null`` removes it."""

    model_config = ConfigDict(extra="forbid")

    rating: Literal["up", "down"] | None
    comment: str = Field("", max_length=4000)
