"""The Python SDK: a typed client of a ragloom server's whole public API (``/api/v1``).

::

    from ragloom.sdk import Ragloom

    with Ragloom("http://127.0.0.1:9380", api_key="rl-...") as rag:
        kb = rag.create_dataset("manuals")
        rag.upload_documents(kb.id, ["orion-manual.pdf"])
        rag.wait_for_documents(kb.id)
        print(rag.answer("How often is the pump serviced?", kb.id).answer)

One method per API operation (each declares the route it calls: :data:`OPERATIONS`), with typed
parameters; results are the API's own response models (``Dataset``, ``DocumentList``, ``ChatReply``...,
from :mod:`ragloom.schemas`, the only part of ragloom besides :mod:`ragloom.errors` the SDK loads).
Request bodies are checked by the API's request models before they are sent. ``answer_stream`` and ``chat_stream`` yield
:class:`Delta` events, then the finished result (:class:`AnswerFinal`, :class:`ChatFinal`).

Errors are the :mod:`ragloom.errors` classes, read from the API's error body: the class the server
names, else the one of the status (401 ``AuthenticationError``, 403 ``PermissionDeniedError``, 404
``NotFoundError``, 409 ``ConflictError``, 400/422 ``InvalidRequestError``, 413
``PayloadTooLargeError``, 429 ``RateLimitedError`` with ``retry_after``, 502 ``ModelError``, 503
``StoreError``), with the server's message as ``message`` and the status as ``status``. A server that
cannot be reached raises ``RagloomError``.

Besides an API key, a client may act as a signed-in user (``Ragloom.login``): the HTTP client keeps
the session cookie and every request that changes data sends the session's CSRF token.
"""

from __future__ import annotations

import httpx

from ragloom.errors import (
    AuthenticationError,
    ConflictError,
    InvalidRequestError,
    ModelError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    RagloomError,
    RateLimitedError,
)
from ragloom.sdk._accounts import AccountsAPI, KeyScopeName
from ragloom.sdk._base import DEFAULT_TIMEOUT, OPERATIONS, FileInput, HttpSession, Response, Route
from ragloom.sdk._builds import BuildsAPI
from ragloom.sdk._chats import AssistantChanges, AssistantFields, ChatAPI, Rating
from ragloom.sdk._groups import GroupsAPI
from ragloom.sdk._knowledge import (
    DatasetChanges,
    DatasetFields,
    DownloadedFile,
    EvidenceFields,
    FusionName,
    KnowledgeAPI,
    SearchFields,
    SearchMode,
)
from ragloom.sdk._shares import ShareFields, SharesAPI
from ragloom.sdk._sources import SourcesAPI
from ragloom.sdk._workspaces import ProviderKindName, WorkspacesAPI
from ragloom.sdk.events import AnswerEvent, AnswerFinal, ChatEvent, ChatFinal, Delta

__all__ = [
    "OPERATIONS", "AnswerEvent", "AnswerFinal", "AssistantChanges", "AssistantFields", "AuthenticationError",
    "ChatEvent", "ChatFinal", "ConflictError", "DatasetChanges", "DatasetFields", "Delta", "DownloadedFile",
    "EvidenceFields", "FileInput", "FusionName", "HttpSession", "InvalidRequestError", "KeyScopeName", "ModelError",
    "NotFoundError", "PayloadTooLargeError", "PermissionDeniedError", "ProviderKindName", "Ragloom", "RagloomError",
    "RateLimitedError", "Rating", "Response", "Route", "SearchFields", "SearchMode", "ShareFields",
]


class Ragloom(KnowledgeAPI, SourcesAPI, BuildsAPI, ChatAPI, SharesAPI, AccountsAPI, WorkspacesAPI, GroupsAPI):
    """A client of the ragloom server at ``url`` (e.g. ``http://127.0.0.1:9380``), with an API key or,
    after :meth:`log_in` / :meth:`sign_up` (or :meth:`login`), a web session. ``transport`` (an httpx
    transport) or ``http`` (a ready HTTP client whose base URL is the server's ``/api/v1``, not closed by
    this client) replace the default ``httpx.Client``. Use it as a context manager, or call
    :meth:`close`."""

    def __init__(self, url: str, api_key: str | None = None, *, timeout: float = DEFAULT_TIMEOUT,
                 transport: httpx.BaseTransport | None = None, http: HttpSession | None = None) -> None:
        super().__init__(url, api_key, timeout=timeout, transport=transport, http=http)

    @classmethod
    def login(cls, url: str, email: str, password: str, *, timeout: float = DEFAULT_TIMEOUT,
              transport: httpx.BaseTransport | None = None) -> Ragloom:
        """A client signed in as a user (a web session: its cookie and CSRF token)."""
        client = cls(url, timeout=timeout, transport=transport)
        try:
            client.log_in(email, password)
        except BaseException:
            client.close()
            raise
        return client

    @classmethod
    def signup(cls, url: str, email: str, password: str, *, name: str = "", invitation: str = "",
               timeout: float = DEFAULT_TIMEOUT, transport: httpx.BaseTransport | None = None) -> Ragloom:
        """A new account (with a workspace of its own), and a client signed in as it."""
        client = cls(url, timeout=timeout, transport=transport)
        try:
            client.sign_up(email, password, name=name, invitation=invitation)
        except BaseException:
            client.close()
            raise
        return client
