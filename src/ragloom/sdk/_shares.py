"""Share links of an assistant (``/chats/{chat_id}/shares``) and what a visitor holding one may do
(``/share/{token}``: no API key needed)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any, Literal, TypedDict, Unpack

from ragloom.schemas.documents import PageList
from ragloom.schemas.shares import (
    SearchQuestion,
    SearchResults,
    ShareCreate,
    ShareInfo,
    ShareList,
    ShareUpdate,
    ShareView,
    VisitorFeedback,
    VisitorMessage,
    VisitorQuestion,
    VisitorReply,
    VisitorSession,
    VisitorSessionList,
)
from ragloom.sdk._base import Base, Route, body, operation
from ragloom.sdk._chats import Rating


class ShareFields(TypedDict, total=False):
    """What a share link may set (``ShareCreate`` / ``ShareUpdate``; ``kind`` at creation only)."""

    kind: Literal["chat", "search"]
    name: str
    title: str
    welcome: str
    allowed_origins: Sequence[str]
    per_minute: int
    per_day: int
    show_pages: bool
    expires_at: datetime | str | None
    expires_in_days: int
    never_expires: bool


class SharesAPI(Base):
    # --- the owner's side ---

    @operation("POST", "/chats/{chat_id}/shares")
    def create_share(self, op: Route, /, chat_id: str, **fields: Unpack[ShareFields]) -> ShareView:
        """A share link of an assistant (its ``url`` opens the chat page; ``embed`` holds the snippets)."""
        return self._model(ShareView, op, path={"chat_id": chat_id}, json=body(ShareCreate, dict(fields)))

    @operation("GET", "/chats/{chat_id}/shares")
    def list_shares(self, op: Route, /, chat_id: str) -> ShareList:
        return self._model(ShareList, op, path={"chat_id": chat_id})

    @operation("GET", "/chats/{chat_id}/shares/{share_id}")
    def get_share(self, op: Route, /, chat_id: str, share_id: str) -> ShareView:
        return self._model(ShareView, op, path={"chat_id": chat_id, "share_id": share_id})

    @operation("PATCH", "/chats/{chat_id}/shares/{share_id}")
    def update_share(self, op: Route, /, chat_id: str, share_id: str, **changes: Unpack[ShareFields]) -> ShareView:
        """Change a link; what is not given stays."""
        return self._model(ShareView, op, path={"chat_id": chat_id, "share_id": share_id},
                           json=body(ShareUpdate, dict(changes)))

    @operation("DELETE", "/chats/{chat_id}/shares/{share_id}")
    def revoke_share(self, op: Route, /, chat_id: str, share_id: str) -> ShareView:
        """Revoke a link: refused from its next request on."""
        return self._model(ShareView, op, path={"chat_id": chat_id, "share_id": share_id})

    # --- a visitor's side (the token is the credential) ---

    @operation("GET", "/share/{token}")
    def share_info(self, op: Route, /, token: str) -> ShareInfo:
        return self._model(ShareInfo, op, path={"token": token})

    @operation("POST", "/share/{token}/completions")
    def share_ask(self, op: Route, /, token: str, question: str, *, visitor_id: str | None = None,
                  session_id: str | None = None) -> VisitorReply:
        """A visitor's question through a link (a new session without ``session_id``)."""
        return self._model(VisitorReply, op, path={"token": token}, json=body(VisitorQuestion, {
            "question": question, "visitor_id": visitor_id, "session_id": session_id}))

    @operation("POST", "/share/{token}/completions")
    def share_ask_stream(self, op: Route, /, token: str, question: str, *, visitor_id: str | None = None,
                         session_id: str | None = None) -> Iterator[dict[str, Any]]:
        """The visitor's answer as it is written: ``{"delta": ...}`` events, then ``{"reply": ...}``."""
        payload = body(VisitorQuestion, {"question": question, "visitor_id": visitor_id, "session_id": session_id,
                                         "stream": True})
        return self._events(op, path={"token": token}, json=payload)

    @operation("GET", "/share/{token}/sessions")
    def share_sessions(self, op: Route, /, token: str, *, visitor_id: str | None = None) -> VisitorSessionList:
        return self._model(VisitorSessionList, op, path={"token": token}, params={"visitor_id": visitor_id})

    @operation("GET", "/share/{token}/sessions/{session_id}")
    def share_session(self, op: Route, /, token: str, session_id: str, *,
                      visitor_id: str | None = None) -> VisitorSession:
        return self._model(VisitorSession, op, path={"token": token, "session_id": session_id},
                           params={"visitor_id": visitor_id})

    @operation("PUT", "/share/{token}/sessions/{session_id}/messages/{message_id}/feedback")
    def share_feedback(self, op: Route, /, token: str, session_id: str, message_id: str, rating: Rating | None, *,
                       comment: str = "", visitor_id: str | None = None) -> VisitorMessage:
        return self._model(VisitorMessage, op, path={"token": token, "session_id": session_id,
                                                     "message_id": message_id},
                           json=body(VisitorFeedback, {"rating": rating, "comment": comment, "visitor_id": visitor_id},
                                     keep_none=True))

    @operation("GET", "/share/{token}/documents/{document_id}/pages")
    def share_pages(self, op: Route, /, token: str, document_id: str, *, version_id: str | None = None) -> PageList:
        return self._model(PageList, op, path={"token": token, "document_id": document_id},
                           params={"version_id": version_id})

    @operation("GET", "/share/{token}/documents/{document_id}/pages/{page}.png")
    def share_page_image(self, op: Route, /, token: str, document_id: str, page: int, *,
                         version_id: str | None = None) -> bytes:
        return self._send(op, path={"token": token, "document_id": document_id, "page": page},
                          params={"version_id": version_id}).content

    @operation("GET", "/share/{token}/documents/{document_id}/figures/{chunk_id}.png")
    def share_figure_image(self, op: Route, /, token: str, document_id: str, chunk_id: str) -> bytes:
        return self._send(op, path={"token": token, "document_id": document_id, "chunk_id": chunk_id}).content

    @operation("GET", "/share/{token}/documents/{document_id}/preview")
    def share_preview(self, op: Route, /, token: str, document_id: str, *, version_id: str | None = None,
                      highlight: Sequence[int] = ()) -> str:
        return self._send(op, path={"token": token, "document_id": document_id},
                          params={"version_id": version_id, "highlight": ",".join(map(str, highlight)) or None}).text

    @operation("POST", "/share/{token}/search")
    def share_search(self, op: Route, /, token: str, question: str) -> SearchResults:
        """A search page's question through a link of kind search: the answer and the results."""
        return self._model(SearchResults, op, path={"token": token},
                           json=body(SearchQuestion, {"question": question}))

    @operation("POST", "/chats/{chat_id}/search")
    def search_assistant(self, op: Route, /, chat_id: str, question: str) -> SearchResults:
        """The assistant's search page: the answer with its citations and the results (nothing stored)."""
        return self._model(SearchResults, op, path={"chat_id": chat_id},
                           json=body(SearchQuestion, {"question": question}))
