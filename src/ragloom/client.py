"""The CLI's client: the HTTP API of a server (``--url``), or the same application in-process.

:class:`HttpClient` calls the API through the Python SDK (:mod:`ragloom.sdk`) and hands the CLI the
API's own response models (:mod:`ragloom.schemas`: ``Dataset``, ``Document``, ``Retrieval``...), which
the CLI prints as their JSON (``model_dump(mode="json")``, see ``ragloom.cli._app.emit``).
:class:`LocalClient` runs the application in this process through an ASGI transport, so every command
takes one code path — the API's — with or without a server, and the CLI knows no service internals.

Only :class:`LocalClient` needs the server's packages (the ``server`` extra: FastAPI, the stores, the
pipeline); the rest of this module needs what the SDK needs (the base install). Code that works on a
data directory runs under :func:`server_packages`, so a missing package of the extra is a
:class:`~ragloom.errors.MissingDependencyError` naming ``pip install 'ragloom[server]'``, not a traceback.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol, cast

import httpx

from ragloom.errors import MissingDependencyError, RagloomError
from ragloom.schemas.answers import CitedAnswer
from ragloom.schemas.assistants import AssistantView
from ragloom.schemas.audit import AuditLog
from ragloom.schemas.chats import ChatReply
from ragloom.schemas.chunks import StoredChunk
from ragloom.schemas.datasets import Dataset, DatasetTags
from ragloom.schemas.documents import Document, VersionDiff, VersionList
from ragloom.schemas.keys import ApiKeyInfo, NewApiKey
from ragloom.schemas.providers import ConnectionTest, ProviderInfo, ProviderList
from ragloom.schemas.retrieval import Retrieval
from ragloom.schemas.sessions import DeletedMessages, Message, SessionDetail, SessionList, SessionView
from ragloom.schemas.shares import ShareList, ShareView
from ragloom.sdk import (
    AssistantChanges,
    AssistantFields,
    ChatEvent,
    DatasetChanges,
    DatasetFields,
    FusionName,
    HttpSession,
    KeyScopeName,
    ProviderKindName,
    Ragloom,
    Rating,
    Response,
    SearchFields,
    SearchMode,
    ShareFields,
)

if TYPE_CHECKING:
    from ragloom.context import Context, Principal

TERMINAL = ("done", "failed", "cancelled")


def server_extra_missing(exc: ModuleNotFoundError) -> MissingDependencyError | None:
    """The error to show for ``exc`` when a package outside ragloom is missing: a package of the server
    extra (the base install has every package the client needs); None when ragloom's own module is."""
    top = (exc.name or "").partition(".")[0]
    if not top or top == "ragloom":
        return None
    missing = MissingDependencyError(top, "server")  # the extra with every package that serves, stores, parses
    missing.message += (" (the base install is the client alone: the Python SDK and `ragloom --url`; a data "
                        "directory, `ragloom serve`, the workers and the MCP server need the server extra)")
    missing.args = (missing.message,)
    return missing


@contextmanager
def server_packages() -> Iterator[None]:
    """Run code that needs the server extra: a package of it that is not installed raises
    :func:`server_extra_missing`'s error (a RagloomError naming ``pip install 'ragloom[server]'``)."""
    try:
        yield
    except ModuleNotFoundError as exc:
        missing = server_extra_missing(exc)
        if missing is None:
            raise
        raise missing from exc


class Client(Protocol):
    def kb_create(self, name: str, *, language: str = "en", description: str = "", chunk_method: str = "naive",
                  parser_config: dict[str, Any] | None = None, tag_kb_ids: list[str] | None = None,
                  topn_tags: int | None = None, review_versions: bool = False) -> Dataset: ...
    def kb_update(self, kb: str, changes: DatasetChanges) -> Dataset:
        """Change a knowledge base's settings (``KBUpdate``); what is not given stays."""
        ...
    def kb_list(self) -> list[Dataset]: ...
    def kb_tags(self, kb: str) -> DatasetTags: ...
    def kb_delete(self, kb: str) -> None: ...
    def upload(self, kb: str, files: Sequence[tuple[str, bytes]], *, chunk_method: str | None = None,
               parser_config: dict[str, Any] | None = None, stage: bool = False) -> list[Document]: ...
    def documents(self, kb: str, *, status: str | None = None) -> list[Document]: ...
    def chunks(self, kb: str, doc: str) -> list[StoredChunk]:
        """Every chunk of the document's active version, in reading order."""
        ...
    def versions(self, kb: str, doc: str) -> VersionList: ...
    def version_diff(self, kb: str, doc: str, *, from_version: str | None = None,
                     to_version: str | None = None) -> VersionDiff: ...
    def rollback(self, kb: str, doc: str, version: str) -> Document: ...
    def set_metadata(self, kb: str, doc: str, changes: Mapping[str, Any]) -> Document: ...
    def discard(self, kb: str, doc: str, version: str) -> Document: ...
    def search(self, kb: str | Sequence[str], question: str, *, top_n: int = 6, mode: str = "hybrid",
               explain: bool = False, toc_enhance: bool = False, route: bool = False,
               fusion: str | None = None) -> Retrieval:
        """Retrieval over ``kb`` (one or several; with ``route``, the candidates for the router,
        ``[]`` = every readable one). With ``route`` the result has ``routing``."""
        ...
    def ask(self, kb: str | Sequence[str], question: str, *, top_n: int = 6) -> CitedAnswer:
        """A cited answer from ``kb`` (one knowledge base or several)."""
        ...
    def assistant_create(self, name: str, dataset_ids: Sequence[str], fields: AssistantFields) -> AssistantView: ...
    def assistant_list(self) -> list[AssistantView]: ...
    def assistant_get(self, assistant: str) -> AssistantView: ...
    def assistant_update(self, assistant: str, changes: AssistantChanges) -> AssistantView: ...
    def assistant_delete(self, assistant: str) -> None: ...
    def share_create(self, assistant: str, fields: ShareFields) -> ShareView: ...
    def share_list(self, assistant: str) -> ShareList: ...
    def share_update(self, assistant: str, share: str, changes: ShareFields) -> ShareView: ...
    def share_revoke(self, assistant: str, share: str) -> ShareView: ...
    def session_list(self, assistant: str, *, page: int = 1, page_size: int = 30) -> SessionList: ...
    def session_get(self, assistant: str, session: str) -> SessionDetail: ...
    def session_rename(self, assistant: str, session: str, name: str) -> SessionView: ...
    def session_delete(self, assistant: str, session: str) -> None: ...
    def message_feedback(self, assistant: str, session: str, message: str, rating: str | None,
                         comment: str = "") -> Message: ...
    def message_delete(self, assistant: str, session: str, message: str) -> DeletedMessages: ...
    def chat(self, assistant: str, question: str, *, session: str | None = None,
             explain: bool = False) -> ChatReply:
        """One question to an assistant (a new session when ``session`` is None): the stored reply."""
        ...
    def chat_stream(self, assistant: str, question: str, *, session: str | None = None,
                    explain: bool = False) -> Iterator[ChatEvent]:
        """The reply's events: :class:`ragloom.sdk.Delta`..., then one :class:`ragloom.sdk.ChatFinal`; an
        error, before the stream or during it, raises from the iterator."""
        ...
    def key_create(self, *, name: str = "", scope: str = "read-write",
                   expires_in_days: int | None = None) -> NewApiKey:
        """A new API key for the caller; the secret (``key``) is in this result only."""
        ...
    def key_list(self) -> list[ApiKeyInfo]: ...
    def key_revoke(self, key_id: str) -> ApiKeyInfo: ...
    def audit(self, *, action: str | None = None, limit: int = 100) -> AuditLog: ...
    def provider_list(self) -> ProviderList:
        """The workspace's model providers (never an API key) and the model in use for each kind."""
        ...
    def provider_set(self, kind: str, *, base_url: str, model: str, api_key: str | None = None) -> ProviderInfo:
        """Create or replace the provider of ``kind``; ``api_key`` None keeps the stored key, "" means none."""
        ...
    def provider_delete(self, kind: str) -> None: ...
    def provider_test(self, kind: str) -> ConnectionTest:
        """One minimal call with the stored provider: ``ok``, ``message``, ``latency_ms``..."""
        ...
    def start_processing(self) -> None: ...
    def stop_processing(self) -> None: ...


def _kb_list(kb: str | Sequence[str]) -> list[str]:
    return [kb] if isinstance(kb, str) else list(kb)


class _CliSdk(Ragloom):
    """The SDK as the CLI uses it: an error a server answered with shows its status first (``404: ...``)."""

    def _error(self, resp: Response) -> RagloomError:
        exc = super()._error(resp)
        exc.message = f"{resp.status_code}: {exc.message}"
        exc.args = (exc.message,)
        return exc


class HttpClient:
    """Talks to a ragloom server's ``/api/v1`` with an API key, through the SDK (:class:`ragloom.sdk.Ragloom`),
    and gives the CLI its results as the API's response models."""

    def __init__(self, url: str, api_key: str, *, timeout: float = 120.0,
                 transport: httpx.BaseTransport | None = None, http: HttpSession | None = None) -> None:
        self.api: Ragloom = _CliSdk(url, api_key, timeout=timeout, transport=transport, http=http)

    def kb_create(self, name: str, *, language: str = "en", description: str = "", chunk_method: str = "naive",
                  parser_config: dict[str, Any] | None = None, tag_kb_ids: list[str] | None = None,
                  topn_tags: int | None = None, review_versions: bool = False) -> Dataset:
        fields: DatasetFields = {"language": language, "description": description, "chunk_method": chunk_method,
                                 "parser_config": parser_config or {}, "review_versions": review_versions}
        if tag_kb_ids:  # unset tag options are left to the defaults
            fields["tag_kb_ids"] = list(tag_kb_ids)
        if topn_tags is not None:
            fields["topn_tags"] = topn_tags
        return self.api.create_dataset(name, **fields)

    def kb_update(self, kb: str, changes: DatasetChanges) -> Dataset:
        return self.api.update_dataset(kb, **changes)

    def kb_tags(self, kb: str) -> DatasetTags:
        return self.api.dataset_tags(kb)

    def kb_list(self) -> list[Dataset]:
        return list(self.api.iter_datasets())

    def kb_delete(self, kb: str) -> None:
        self.api.delete_dataset(kb)

    def upload(self, kb: str, files: Sequence[tuple[str, bytes]], *, chunk_method: str | None = None,
               parser_config: dict[str, Any] | None = None, stage: bool = False) -> list[Document]:
        # parameters without a method apply with the knowledge base's method (the service's rule)
        uploaded = self.api.upload_documents(kb, list(files), chunk_method=chunk_method or None,
                                             parser_config=(parser_config or {}) if chunk_method else parser_config,
                                             stage=stage)
        return uploaded.documents

    def chunks(self, kb: str, doc: str) -> list[StoredChunk]:
        return list(self.api.iter_chunks(kb, doc))

    def documents(self, kb: str, *, status: str | None = None) -> list[Document]:
        return list(self.api.iter_documents(kb, status=status))

    def versions(self, kb: str, doc: str) -> VersionList:
        return self.api.list_versions(kb, doc)

    def version_diff(self, kb: str, doc: str, *, from_version: str | None = None,
                     to_version: str | None = None) -> VersionDiff:
        return self.api.diff_versions(kb, doc, from_version=from_version, to_version=to_version)

    def rollback(self, kb: str, doc: str, version: str) -> Document:
        return self.api.activate_version(kb, doc, version)

    def set_metadata(self, kb: str, doc: str, changes: Mapping[str, Any]) -> Document:
        return self.api.update_metadata(kb, doc, changes)

    def discard(self, kb: str, doc: str, version: str) -> Document:
        return self.api.discard_version(kb, doc, version)

    def search(self, kb: str | Sequence[str], question: str, *, top_n: int = 6, mode: str = "hybrid",
               explain: bool = False, toc_enhance: bool = False, route: bool = False,
               fusion: str | None = None) -> Retrieval:
        options: SearchFields = {"page_size": top_n, "mode": cast(SearchMode, mode), "explain": explain,
                                 "toc_enhance": toc_enhance, "route": route}
        if fusion is not None:
            options["fusion"] = cast(FusionName, fusion)
        return self.api.retrieve(question, _kb_list(kb), **options)

    def ask(self, kb: str | Sequence[str], question: str, *, top_n: int = 6) -> CitedAnswer:
        return self.api.answer(question, _kb_list(kb), top_n=top_n)

    def assistant_create(self, name: str, dataset_ids: Sequence[str], fields: AssistantFields) -> AssistantView:
        return self.api.create_assistant(name, list(dataset_ids), **fields)

    def assistant_list(self) -> list[AssistantView]:
        return self.api.list_assistants().assistants

    def assistant_get(self, assistant: str) -> AssistantView:
        return self.api.get_assistant(assistant)

    def assistant_update(self, assistant: str, changes: AssistantChanges) -> AssistantView:
        return self.api.update_assistant(assistant, **changes)

    def assistant_delete(self, assistant: str) -> None:
        self.api.delete_assistant(assistant)

    def share_create(self, assistant: str, fields: ShareFields) -> ShareView:
        return self.api.create_share(assistant, **fields)

    def share_list(self, assistant: str) -> ShareList:
        return self.api.list_shares(assistant)

    def share_update(self, assistant: str, share: str, changes: ShareFields) -> ShareView:
        return self.api.update_share(assistant, share, **changes)

    def share_revoke(self, assistant: str, share: str) -> ShareView:
        return self.api.revoke_share(assistant, share)

    def session_list(self, assistant: str, *, page: int = 1, page_size: int = 30) -> SessionList:
        return self.api.list_sessions(assistant, page=page, page_size=page_size)

    def session_get(self, assistant: str, session: str) -> SessionDetail:
        return self.api.get_session(assistant, session)

    def session_rename(self, assistant: str, session: str, name: str) -> SessionView:
        return self.api.rename_session(assistant, session, name)

    def session_delete(self, assistant: str, session: str) -> None:
        self.api.delete_session(assistant, session)

    def message_feedback(self, assistant: str, session: str, message: str, rating: str | None,
                         comment: str = "") -> Message:
        return self.api.set_feedback(assistant, session, message, cast(Rating, rating), comment)

    def message_delete(self, assistant: str, session: str, message: str) -> DeletedMessages:
        return self.api.delete_message_pair(assistant, session, message)

    def chat(self, assistant: str, question: str, *, session: str | None = None,
             explain: bool = False) -> ChatReply:
        return self.api.chat(assistant, question, session_id=session, explain=explain)

    def chat_stream(self, assistant: str, question: str, *, session: str | None = None,
                    explain: bool = False) -> Iterator[ChatEvent]:
        return self.api.chat_stream(assistant, question, session_id=session, explain=explain)

    def key_create(self, *, name: str = "", scope: str = "read-write",
                   expires_in_days: int | None = None) -> NewApiKey:
        return self.api.create_key(name=name, scope=cast(KeyScopeName, scope), expires_in_days=expires_in_days)

    def key_list(self) -> list[ApiKeyInfo]:
        return self.api.list_keys().keys

    def key_revoke(self, key_id: str) -> ApiKeyInfo:
        return self.api.revoke_key(key_id)

    def audit(self, *, action: str | None = None, limit: int = 100) -> AuditLog:
        return self.api.audit_log(action=action, limit=limit)

    def provider_list(self) -> ProviderList:
        return self.api.list_providers()

    def provider_set(self, kind: str, *, base_url: str, model: str, api_key: str | None = None) -> ProviderInfo:
        return self.api.set_provider(cast(ProviderKindName, kind), base_url=base_url, model=model, api_key=api_key)

    def provider_delete(self, kind: str) -> None:
        self.api.delete_provider(cast(ProviderKindName, kind))

    def provider_test(self, kind: str) -> ConnectionTest:
        return self.api.test_provider(cast(ProviderKindName, kind))

    def start_processing(self) -> None:
        """The server's workers process uploads."""

    def stop_processing(self) -> None:
        """Nothing to stop."""


class LocalClient(HttpClient):
    """The application ``ragloom serve`` runs, run in-process on ``RAGLOOM_HOME`` (no port is opened):
    each command takes exactly the code path it takes against a server with ``--url``. Requests act
    as the data directory's owner (``principal``); ingestion tasks run in a background thread.
    ``ctx`` and ``principal`` stay reachable for the commands that only work on a data directory
    (``reindex``, ``eval``)."""

    def __init__(self, ctx: Context, principal: Principal) -> None:
        with server_packages():
            from fastapi.testclient import TestClient

            from ragloom.api.local import LocalApp

        self.ctx = ctx
        self.principal = principal
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        app = LocalApp(ctx, principal)  # builds only the part of the API each request needs
        super().__init__(LOCAL_URL, "", http=TestClient(app, base_url=LOCAL_URL + "/api/v1",
                                                      raise_server_exceptions=False, client=("cli", 0)))

    def start_processing(self) -> None:
        from ragloom.worker import run_until

        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(
                target=run_until, args=(self.ctx, self._stop.is_set), kwargs={"poll": 0.2}, daemon=True
            )
            self._thread.start()

    def stop_processing(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None


LOCAL_URL = "http://ragloom.local"
