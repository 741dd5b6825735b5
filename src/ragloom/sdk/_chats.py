"""Chat assistants (``/chats``), their sessions and messages, and questions to them (completions)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal, TypedDict, Unpack

from ragloom.schemas.assistants import (
    AssistantCreate,
    AssistantList,
    AssistantUpdate,
    AssistantView,
    LLMSettings,
    PromptSettings,
)
from ragloom.schemas.chats import ChatReply, CompletionRequest
from ragloom.schemas.scope import ScopeSettings
from ragloom.schemas.sessions import (
    DeletedMessages,
    FeedbackSet,
    Message,
    MessageList,
    SessionCreate,
    SessionDetail,
    SessionList,
    SessionRename,
    SessionView,
)
from ragloom.sdk._base import Base, Route, body, operation
from ragloom.sdk._knowledge import SearchFields
from ragloom.sdk.events import ChatEvent, chat_event

Rating = Literal["up", "down"]


class _AssistantCommon(TypedDict, total=False):
    name: str
    description: str
    dataset_ids: Sequence[str]
    top_n: int
    rerank: bool
    permission: Literal["me", "team"]
    scope: ScopeSettings | Mapping[str, Any]


class AssistantFields(TypedDict, total=False):
    """What ``create_assistant`` may set besides its name and knowledge bases (``AssistantCreate``)."""

    description: str
    llm: LLMSettings | Mapping[str, Any]
    prompt: PromptSettings | Mapping[str, Any]
    retrieval: SearchFields
    top_n: int
    rerank: bool
    permission: Literal["me", "team"]
    scope: ScopeSettings | Mapping[str, Any]


class AssistantChanges(_AssistantCommon, total=False):
    """What ``update_assistant`` may change (``AssistantUpdate``); ``llm``, ``prompt`` and ``retrieval``
    are merged key by key into the assistant's."""

    llm: Mapping[str, Any]
    prompt: Mapping[str, Any]
    retrieval: SearchFields


class ChatAPI(Base):
    # --- assistants ---

    @operation("GET", "/chats")
    def list_assistants(self, op: Route, /) -> AssistantList:
        """The chat assistants you may use."""
        return self._model(AssistantList, op)

    @operation("POST", "/chats")
    def create_assistant(self, op: Route, /, name: str, dataset_ids: str | Sequence[str],
                         **fields: Unpack[AssistantFields]) -> AssistantView:
        """A new assistant answering from the knowledge bases (ids or names)."""
        ids = [dataset_ids] if isinstance(dataset_ids, str) else list(dataset_ids)
        return self._model(AssistantView, op, json=body(AssistantCreate, {"name": name, "dataset_ids": ids,
                                                                             **fields}))

    @operation("GET", "/chats/{chat_id}")
    def get_assistant(self, op: Route, /, chat_id: str) -> AssistantView:
        """An assistant by id or name."""
        return self._model(AssistantView, op, path={"chat_id": chat_id})

    @operation("PATCH", "/chats/{chat_id}")
    def update_assistant(self, op: Route, /, chat_id: str, **changes: Unpack[AssistantChanges]) -> AssistantView:
        """Change an assistant; what is not given stays."""
        return self._model(AssistantView, op, path={"chat_id": chat_id}, json=body(AssistantUpdate, changes))

    @operation("DELETE", "/chats/{chat_id}")
    def delete_assistant(self, op: Route, /, chat_id: str) -> None:
        """Delete an assistant with its sessions and messages."""
        self._empty(op, path={"chat_id": chat_id})

    # --- sessions and messages ---

    @operation("POST", "/chats/{chat_id}/sessions")
    def create_session(self, op: Route, /, chat_id: str, name: str | None = None) -> SessionView:
        """A new session (a question without ``session_id`` starts one too)."""
        return self._model(SessionView, op, path={"chat_id": chat_id}, json=body(SessionCreate, {"name": name}))

    @operation("GET", "/chats/{chat_id}/sessions")
    def list_sessions(self, op: Route, /, chat_id: str, *, page: int = 1, page_size: int = 30) -> SessionList:
        """Your sessions with this assistant, newest first."""
        return self._model(SessionList, op, path={"chat_id": chat_id},
                           params={"page": page, "page_size": page_size})

    @operation("GET", "/chats/{chat_id}/sessions/{session_id}")
    def get_session(self, op: Route, /, chat_id: str, session_id: str) -> SessionDetail:
        """A session with its messages."""
        return self._model(SessionDetail, op, path={"chat_id": chat_id, "session_id": session_id})

    @operation("PATCH", "/chats/{chat_id}/sessions/{session_id}")
    def rename_session(self, op: Route, /, chat_id: str, session_id: str, name: str) -> SessionView:
        return self._model(SessionView, op, path={"chat_id": chat_id, "session_id": session_id},
                           json=body(SessionRename, {"name": name}))

    @operation("DELETE", "/chats/{chat_id}/sessions/{session_id}")
    def delete_session(self, op: Route, /, chat_id: str, session_id: str) -> None:
        self._empty(op, path={"chat_id": chat_id, "session_id": session_id})

    @operation("GET", "/chats/{chat_id}/sessions/{session_id}/messages")
    def list_messages(self, op: Route, /, chat_id: str, session_id: str) -> MessageList:
        """A session's questions and answers, with references, citations, explain and feedback."""
        return self._model(MessageList, op, path={"chat_id": chat_id, "session_id": session_id})

    @operation("PUT", "/chats/{chat_id}/sessions/{session_id}/messages/{message_id}/feedback")
    def set_feedback(self, op: Route, /, chat_id: str, session_id: str, message_id: str,
                     rating: Rating | None, comment: str = "") -> Message:
        """Rate an answer; ``rating=None`` removes the rating."""
        return self._model(Message, op, path={"chat_id": chat_id, "session_id": session_id,
                                                 "message_id": message_id},
                           json=body(FeedbackSet, {"rating": rating, "comment": comment}, keep_none=True))

    @operation("DELETE", "/chats/{chat_id}/sessions/{session_id}/messages/{message_id}")
    def delete_message_pair(self, op: Route, /, chat_id: str, session_id: str, message_id: str) -> DeletedMessages:
        """Delete a question and its answer (either one's id)."""
        return self._model(DeletedMessages, op, path={"chat_id": chat_id, "session_id": session_id,
                                                         "message_id": message_id})

    # --- questions ---

    @operation("POST", "/chats/{chat_id}/completions")
    def chat(self, op: Route, /, chat_id: str, question: str, *, session_id: str | None = None,
             explain: bool = False, variables: Mapping[str, str] | None = None) -> ChatReply:
        """Ask an assistant (by id or name) in a session — a new one without ``session_id`` (the reply
        names it): the stored reply with its references."""
        return self._model(ChatReply, op, path={"chat_id": chat_id}, json=_completion(
            question, session_id, explain, variables, stream=False))

    @operation("POST", "/chats/{chat_id}/completions")
    def chat_stream(self, op: Route, /, chat_id: str, question: str, *, session_id: str | None = None,
                    explain: bool = False, variables: Mapping[str, str] | None = None) -> Iterator[ChatEvent]:
        """The reply as it is written: :class:`~ragloom.sdk.Delta` events, then one
        :class:`~ragloom.sdk.ChatFinal` with the stored reply. The request is sent when iteration starts;
        an error, before or during the stream, raises from the iterator."""
        payload = _completion(question, session_id, explain, variables, stream=True)
        return (chat_event(e) for e in self._events(op, path={"chat_id": chat_id}, json=payload))


def _completion(question: str, session_id: str | None, explain: bool, variables: Mapping[str, str] | None, *,
                stream: bool) -> dict[str, Any]:
    return body(CompletionRequest, {"question": question, "session_id": session_id, "explain": explain or None,
                                    "variables": dict(variables) if variables else None,
                                    "stream": stream or None})
