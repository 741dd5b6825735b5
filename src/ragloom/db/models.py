"""SQLAlchemy models of the metadata DB (the truth; the search store is a projection).

Portable SQL only: the same models and migrations serve SQLite and PostgreSQL.
Ids are 32-hex uuid4 strings; times are timezone-aware UTC.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy import false as sa_false
from sqlalchemy import true as sa_true
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from ragloom.states import DocumentStatus, KeyScope, TaskStatus, VersionReason, VersionStatus


def new_id() -> str:
    return uuid.uuid4().hex


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON}


class Tenant(Base):
    __tablename__ = "tenant"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # whether a member may share the assistants they created by link (owners and admins always may)
    members_share: Mapped[bool] = mapped_column(Boolean, default=False, server_default=sa_false())


class User(Base):
    __tablename__ = "user_account"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    email: Mapped[str] = mapped_column(String(255), unique=True)
    name: Mapped[str] = mapped_column(String(128), default="")
    is_superuser: Mapped[bool] = mapped_column(Boolean, default=False)
    password_hash: Mapped[str | None] = mapped_column(String(255), nullable=True)  # argon2id; None: no sign-in
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class LoginSession(Base):
    """A signed-in browser: the cookie holds a random token of which only the hash is kept; the
    session acts in one workspace at a time (``tenant_id``, switched by the user) and carries the
    CSRF token its state-changing requests must echo."""

    __tablename__ = "login_session"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"), index=True)
    tenant_id: Mapped[str | None] = mapped_column(ForeignKey("tenant.id", ondelete="SET NULL"), nullable=True)
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_seen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Invitation(Base):
    """A one-time, expiring invitation into a workspace with a role (only the token's hash is kept)."""

    __tablename__ = "invitation"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenant.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    role: Mapped[str] = mapped_column(String(16))
    email: Mapped[str] = mapped_column(String(255), default="")  # "" = whoever holds the token
    created_by: Mapped[str | None] = mapped_column(String(32), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    accepted_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    accepted_by: Mapped[str | None] = mapped_column(String(32), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class ModelProvider(Base):
    """A workspace's own chat, embedding or rerank model (an OpenAI-compatible API); the API key is
    encrypted with the server's secret key (``ragloom.service.accounts.secrets``) and never returned."""

    __tablename__ = "model_provider"
    __table_args__ = (UniqueConstraint("tenant_id", "kind"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenant.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(16))  # chat | embedding | rerank
    base_url: Mapped[str] = mapped_column(String(500))
    model: Mapped[str] = mapped_column(String(200))
    secret: Mapped[str] = mapped_column(Text, default="")  # Fernet token of the API key, "" when none
    updated_by: Mapped[str | None] = mapped_column(String(32), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


class SiteSetting(Base):
    """A server-wide setting changed at run time by an administrator (``signup``: open or closed)."""

    __tablename__ = "site_setting"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text, default="")


class Membership(Base):
    __tablename__ = "membership"
    __table_args__ = (UniqueConstraint("tenant_id", "user_id"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenant.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"), index=True)
    role: Mapped[str] = mapped_column(String(16))  # owner | admin | member


class ApiKey(Base):
    __tablename__ = "api_key"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenant.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)  # sha256 hex of the key
    prefix: Mapped[str] = mapped_column(String(16))  # first characters, for display
    name: Mapped[str] = mapped_column(String(128), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    scope: Mapped[str] = mapped_column(String(16), default=KeyScope.READ_WRITE, server_default="read-write")
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class AuditEvent(Base):
    """Who did what, when, from where: sign-ins, keys, members, deletions (``ragloom.service.accounts.audit``)."""

    __tablename__ = "audit_event"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    tenant_id: Mapped[str | None] = mapped_column(ForeignKey("tenant.id", ondelete="CASCADE"), nullable=True,
                                                  index=True)
    user_id: Mapped[str | None] = mapped_column(String(32), nullable=True)  # kept when the user is gone
    action: Mapped[str] = mapped_column(String(48), index=True)
    target: Mapped[str] = mapped_column(String(200), default="")  # "kb:<id>", "key:<id>", ...
    detail: Mapped[str] = mapped_column(Text, default="")  # never a secret
    origin: Mapped[str] = mapped_column(String(80), default="")  # the client's address, or "cli"
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)


class KnowledgeBase(Base):
    __tablename__ = "knowledgebase"
    __table_args__ = (UniqueConstraint("tenant_id", "name"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenant.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(128))
    description: Mapped[str] = mapped_column(Text, default="")
    language: Mapped[str] = mapped_column(String(8), default="en")
    permission: Mapped[str] = mapped_column(String(8), default="me")  # me | team
    created_by: Mapped[str | None] = mapped_column(String(32), nullable=True)
    embedding_model: Mapped[str] = mapped_column(String(255))  # "provider:<workspace id>:<model>" too
    embedding_dim: Mapped[int] = mapped_column(Integer)
    chunk_method: Mapped[str] = mapped_column(String(32), default="naive")
    parser_config: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    similarity_threshold: Mapped[float] = mapped_column(Float, default=0.2)
    vector_similarity_weight: Mapped[float] = mapped_column(Float, default=0.3)
    # chunks whose calibrated relevance is lower are dropped (ragloom.retrieval.relevance); None: the server's
    min_relevance: Mapped[float | None] = mapped_column(Float, nullable=True, default=None)
    # new versions of its documents wait, built, for a reviewer to publish them (ragloom.service.documents.versions)
    review_versions: Mapped[bool] = mapped_column(Boolean, default=False, server_default=sa_false())
    # 0..100: a rank feature; when several knowledge bases are searched together, higher ranks first
    pagerank: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # the knowledge base's own synonym groups (added to the built-in dictionary at query time)
    synonyms: Mapped[list[list[str]]] = mapped_column(JSON, default=list, server_default="[]")
    # tag sets (knowledge bases of chunk method "tag") whose tags this knowledge base's chunks get
    tag_kb_ids: Mapped[list[str]] = mapped_column(JSON, default=list, server_default="[]")
    topn_tags: Mapped[int] = mapped_column(Integer, default=3, server_default="3")  # tags kept per chunk
    # settings of the knowledge built over the documents, by build kind: {"raptor": {...}} (validated by
    # ragloom.service.build_settings; the API also takes them inside parser_config, as the reference keeps them)
    build_config: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict, server_default="{}")
    # source permissions (ragloom.service.documents.access): a caller finds only the documents whose readers
    # include them (or that have no readers: everyone with access to the knowledge base reads those);
    # the workspace's owners and admins see every document only when ``admins_see_all``
    source_permissions: Mapped[bool] = mapped_column(Boolean, default=False, server_default=sa_false())
    admins_see_all: Mapped[bool] = mapped_column(Boolean, default=False, server_default=sa_false())
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


class Document(Base):
    __tablename__ = "document"
    __table_args__ = (UniqueConstraint("kb_id", "name"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    kb_id: Mapped[str] = mapped_column(ForeignKey("knowledgebase.id", ondelete="CASCADE"), index=True)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenant.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(512))
    active_version_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    latest_version_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    # status of the latest version's processing: queued | running | done | failed | cancelled
    status: Mapped[str] = mapped_column(String(16), default=DocumentStatus.QUEUED)
    progress: Mapped[float] = mapped_column(Float, default=0.0)
    message: Mapped[str] = mapped_column(Text, default="")
    chunk_count: Mapped[int] = mapped_column(Integer, default=0)
    token_count: Mapped[int] = mapped_column(Integer, default=0)
    coverage: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # the active version's
    # user-set and extracted metadata (title, author, date, ...): filterable at retrieval
    meta: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict, server_default="{}")
    # per-document override of the knowledge base's chunk method and its parameters
    chunk_method: Mapped[str | None] = mapped_column(String(32), nullable=True)
    parser_config: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # who may read it at its source (:class:`DocumentReader` rows); False: no list, everyone with access to
    # the knowledge base may
    restricted: Mapped[bool] = mapped_column(Boolean, default=False, server_default=sa_false())
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


class DocumentReader(Base):
    """One who may read a document at its source: a user (``user:<e-mail>``) or a group (``group:<name>``),
    as its source's connector (or the source's settings) said at the last sync. Applied when the knowledge
    base uses source permissions (``ragloom.service.documents.access``)."""

    __tablename__ = "document_reader"
    document_id: Mapped[str] = mapped_column(ForeignKey("document.id", ondelete="CASCADE"), primary_key=True)
    principal: Mapped[str] = mapped_column(String(400), primary_key=True, index=True)


class MemberGroup(Base):
    """A workspace's group of people, by e-mail (``ragloom.service.accounts.groups``): made by hand, or
    kept by a source that knows its groups (``source_id``). Documents name it as ``group:<name>``."""

    __tablename__ = "member_group"
    __table_args__ = (UniqueConstraint("tenant_id", "name"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenant.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    source_id: Mapped[str | None] = mapped_column(ForeignKey("source.id", ondelete="SET NULL"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class GroupMember(Base):
    """A member of a :class:`MemberGroup`, by lower-cased e-mail (a source's group may name people who have
    no account yet: they read as members once they sign up with that address)."""

    __tablename__ = "group_member"
    group_id: Mapped[str] = mapped_column(ForeignKey("member_group.id", ondelete="CASCADE"), primary_key=True)
    email: Mapped[str] = mapped_column(String(320), primary_key=True, index=True)


class DocumentVersion(Base):
    __tablename__ = "document_version"
    __table_args__ = (UniqueConstraint("document_id", "number"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    document_id: Mapped[str] = mapped_column(ForeignKey("document.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    content_hash: Mapped[str] = mapped_column(String(64))  # sha256 of the file
    # object store key of the file ("<tenant id>/<sha256>"); NULL in versions stored before keys had a
    # tenant, whose key is the bare content_hash (see file_key)
    object_key: Mapped[str | None] = mapped_column(String(160), nullable=True)
    size: Mapped[int] = mapped_column(BigInteger)
    content_type: Mapped[str] = mapped_column(String(128), default="")
    chunk_method: Mapped[str] = mapped_column(String(32), default="naive")
    parser_config: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # building | ready | failed | superseded | cancelled
    status: Mapped[str] = mapped_column(String(16), default=VersionStatus.BUILDING)
    chunk_count: Mapped[int] = mapped_column(Integer, default=0)
    page_count: Mapped[int | None] = mapped_column(Integer, nullable=True)
    error: Mapped[str] = mapped_column(Text, default="")
    coverage: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # its tasks' summed
    # object key of the HTML view of a flowing format (ragloom.ingest.preview.render_html); NULL for paged ones
    view_key: Mapped[str | None] = mapped_column(String(160), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    published_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # why it was made (a VersionReason) and by whom (a user id; NULL: the system)
    reason: Mapped[str] = mapped_column(String(16), default=VersionReason.UPLOAD, server_default="upload")
    created_by: Mapped[str | None] = mapped_column(String(32), nullable=True)
    published_by: Mapped[str | None] = mapped_column(String(32), nullable=True)  # who made it live by hand
    # its chunks are in the search store (the last RAGLOOM_KEEP_VERSIONS versions of a document keep theirs)
    indexed: Mapped[bool] = mapped_column(Boolean, default=True, server_default=sa_true())
    # made to wait for review: when built it stays ready (not live) until published or discarded
    staged: Mapped[bool] = mapped_column(Boolean, default=False, server_default=sa_false())
    # the knowledge base's embedding model when it was made (NULL: made before this was recorded)
    embedding_model: Mapped[str | None] = mapped_column(String(255), nullable=True)
    # while it is kept but not the version readers see: ids of its rows that were matchable (they are hidden)
    parked: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)

    @property
    def file_key(self) -> str:
        """The object store key of this version's file."""
        return self.object_key or self.content_hash


class VersionPage(Base):
    """A page of a paginated version: its size in PDF points and its rendered preview image."""

    __tablename__ = "version_page"
    version_id: Mapped[str] = mapped_column(ForeignKey("document_version.id", ondelete="CASCADE"), primary_key=True)
    page: Mapped[int] = mapped_column(Integer, primary_key=True)
    width: Mapped[float] = mapped_column(Float)
    height: Mapped[float] = mapped_column(Float)
    image_key: Mapped[str | None] = mapped_column(String(160), nullable=True)  # object store key of a PNG


class VersionFigure(Base):
    """The picture of a figure chunk of a version (issue 34): cropped from its page (PDF) or taken from the
    file (DOCX, PPTX, an HTML data: URI), as a PNG in the object store; ``described_by`` names the vision model
    that wrote its description ("" when none did)."""

    __tablename__ = "version_figure"
    version_id: Mapped[str] = mapped_column(ForeignKey("document_version.id", ondelete="CASCADE"), primary_key=True)
    chunk_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    image_key: Mapped[str] = mapped_column(String(160))
    width: Mapped[int] = mapped_column(Integer)
    height: Mapped[int] = mapped_column(Integer)
    page: Mapped[int | None] = mapped_column(Integer, nullable=True)
    described_by: Mapped[str] = mapped_column(String(200), default="")


class ChunkOverride(Base):
    """A manual edit of one of a document's chunks, kept beside the document so that a re-parse re-applies it
    (DESIGN §3): ``edit`` (new ``content``, ``available``, ``keywords`` and/or ``questions``), ``delete``, or
    ``add`` (a chunk of its own ``content``, ``keywords`` and ``questions``). An edit or a deletion names the
    chunk it changes by ``anchor``, a hash of the chunk's parsed text
    (:func:`ragloom.service.documents.chunk_edits.anchor_of`): a new version's chunk with that text gets it
    again; when no chunk has it any more, it waits unapplied. An added chunk's anchor is ``add:`` + its own id.
    ``applied`` maps each version it was applied to -> the search-store row it changed there (how the chunk list
    marks edits)."""

    __tablename__ = "chunk_override"
    __table_args__ = (UniqueConstraint("document_id", "anchor"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    document_id: Mapped[str] = mapped_column(ForeignKey("document.id", ondelete="CASCADE"), index=True)
    anchor: Mapped[str] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(8))  # edit | delete | add
    content: Mapped[str | None] = mapped_column(Text, nullable=True)
    available: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    keywords: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)  # None: the parsed chunk's own
    questions: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)  # None: the parsed chunk's own
    applied: Mapped[dict[str, str]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


class Task(Base):
    __tablename__ = "task"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenant.id", ondelete="CASCADE"), index=True)
    kb_id: Mapped[str] = mapped_column(ForeignKey("knowledgebase.id", ondelete="CASCADE"))
    document_id: Mapped[str] = mapped_column(ForeignKey("document.id", ondelete="CASCADE"), index=True)
    version_id: Mapped[str] = mapped_column(ForeignKey("document_version.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(16), default="parse")
    # queued | running | done | failed | cancelled
    status: Mapped[str] = mapped_column(String(16), default=TaskStatus.QUEUED, index=True)
    progress: Mapped[float] = mapped_column(Float, default=0.0)
    message: Mapped[str] = mapped_column(Text, default="")
    from_page: Mapped[int] = mapped_column(Integer, default=0)
    to_page: Mapped[int] = mapped_column(Integer, default=100_000_000)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    chunk_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # words of the range's parsed text its chunks keep (ragloom.ingest.coverage.Coverage.as_dict)
    coverage: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    claimed_by: Mapped[str | None] = mapped_column(String(255), nullable=True)  # a worker id
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)  # last claim
    not_before: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class KnowledgeBuild(Base):
    """A job that builds knowledge over a knowledge base's documents (``kind``: raptor; graph and
    enrich to come), run by the workers like an ingestion task but queued here, not in ``task``: a
    build belongs to a knowledge base (``document_id`` NULL: all of its documents) rather than to one
    version of one document, reports per stage, and records what it cost (``stats``). The queue
    columns (status ... finished_at) mean what they mean on :class:`Task` (``ragloom.db.builds``)."""

    __tablename__ = "knowledge_build"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenant.id", ondelete="CASCADE"), index=True)
    kb_id: Mapped[str] = mapped_column(ForeignKey("knowledgebase.id", ondelete="CASCADE"), index=True)
    document_id: Mapped[str | None] = mapped_column(ForeignKey("document.id", ondelete="CASCADE"), nullable=True)
    kind: Mapped[str] = mapped_column(String(16))  # raptor | graph | enrich
    trigger: Mapped[str] = mapped_column(String(16), default="user")  # user | publish | delete
    created_by: Mapped[str | None] = mapped_column(String(32), nullable=True)
    # queued | running | done | failed | cancelled
    status: Mapped[str] = mapped_column(String(16), default=TaskStatus.QUEUED, index=True)
    stage: Mapped[str] = mapped_column(String(32), default="")
    progress: Mapped[float] = mapped_column(Float, default=0.0)
    message: Mapped[str] = mapped_column(Text, default="")
    estimate: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # before it started
    stats: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  # LLM calls, cache hits, tokens, rows
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    claimed_by: Mapped[str | None] = mapped_column(String(255), nullable=True)  # a worker id
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    not_before: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class KnowledgePart(Base):
    """What a finished build made for one document (``scope`` = its id) or for the whole knowledge base
    (``scope`` = ``"kb"``, ``document_id`` NULL), per kind: the document version it was made from, the
    ``recipe`` (a hash of the settings and model that shaped it: another recipe means rebuild), its
    top rows (``root_ids``: a RAPTOR branch's roots, the leaves of the knowledge base's tree) and counts.
    The rows themselves are in the search store; this is how a build knows what is up to date."""

    __tablename__ = "knowledge_part"
    __table_args__ = (UniqueConstraint("kb_id", "kind", "scope"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    kb_id: Mapped[str] = mapped_column(ForeignKey("knowledgebase.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(16))
    scope: Mapped[str] = mapped_column(String(32))  # a document id, or "kb"
    document_id: Mapped[str | None] = mapped_column(ForeignKey("document.id", ondelete="CASCADE"), nullable=True)
    version_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    recipe: Mapped[str] = mapped_column(String(64))
    root_ids: Mapped[list[str]] = mapped_column(JSON, default=list)
    rows: Mapped[int] = mapped_column(Integer, default=0)
    layers: Mapped[int] = mapped_column(Integer, default=0)
    build_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    built_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Source(Base):
    """Where a knowledge base's documents come from and are kept in sync with (``ragloom.service.sources``):
    a folder of the server's disk, a web site, ... (``type``, a connector of ``ragloom.ingest.connectors``)
    with its ``settings``; its credentials encrypted with the server's secret key like a provider's API key
    (never returned); what to take (``filters``); when to sync (``schedule_minutes``, None: by hand only;
    ``next_run_at``: when the workers queue its next sync) unless ``paused``."""

    __tablename__ = "source"
    __table_args__ = (UniqueConstraint("kb_id", "name"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenant.id", ondelete="CASCADE"), index=True)
    kb_id: Mapped[str] = mapped_column(ForeignKey("knowledgebase.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(128))
    type: Mapped[str] = mapped_column(String(32))
    settings: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    secret: Mapped[str] = mapped_column(Text, default="")  # Fernet token of the credentials' JSON, "" when none
    filters: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # who may read its items when its connector does not say (``user:<e-mail>``, ``group:<name>``); []: everyone
    readers: Mapped[list[str]] = mapped_column(JSON, default=list, server_default="[]")
    schedule_minutes: Mapped[int | None] = mapped_column(Integer, nullable=True)
    paused: Mapped[bool] = mapped_column(Boolean, default=False)
    next_run_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True, index=True)
    last_sync_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    last_synced_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_by: Mapped[str | None] = mapped_column(String(32), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


class SourceItem(Base):
    """An item of a source that a sync made a document of: the item's stable id at the source (kept
    whole in ``item_id``, unique per source by its sha256 ``item_key``), the change token it had then
    (an ETag, mtime and size, a revision: equal token, unchanged item, nothing downloaded), and where it
    is. Written in the transaction that creates its document, so a sync killed midway duplicates nothing."""

    __tablename__ = "source_item"
    __table_args__ = (UniqueConstraint("source_id", "item_key"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    source_id: Mapped[str] = mapped_column(ForeignKey("source.id", ondelete="CASCADE"), index=True)
    item_key: Mapped[str] = mapped_column(String(64))
    item_id: Mapped[str] = mapped_column(Text)
    document_id: Mapped[str] = mapped_column(ForeignKey("document.id", ondelete="CASCADE"), index=True)
    change_token: Mapped[str] = mapped_column(String(255), default="")
    # the sha256 of the readers its document was given (a change of readers alone costs no download)
    readers_digest: Mapped[str] = mapped_column(String(64), default="", server_default="")
    path: Mapped[str] = mapped_column(Text, default="")
    title: Mapped[str] = mapped_column(Text, default="")
    url: Mapped[str] = mapped_column(Text, default="")
    synced_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class SourceSync(Base):
    """A sync of a source, a job of the queue like a knowledge build (``ragloom.db.syncs``): one at a time
    per source; ``stats`` counts the items (listed, new, changed, deleted, unchanged, skipped, failed),
    ``errors`` keeps the first per-item errors. The queue columns mean what they mean on :class:`Task`."""

    __tablename__ = "source_sync"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenant.id", ondelete="CASCADE"), index=True)
    kb_id: Mapped[str] = mapped_column(ForeignKey("knowledgebase.id", ondelete="CASCADE"))
    source_id: Mapped[str] = mapped_column(ForeignKey("source.id", ondelete="CASCADE"), index=True)
    trigger: Mapped[str] = mapped_column(String(16), default="user")  # user | schedule
    created_by: Mapped[str | None] = mapped_column(String(32), nullable=True)
    # queued | running | done | failed | cancelled
    status: Mapped[str] = mapped_column(String(16), default=TaskStatus.QUEUED, index=True)
    stage: Mapped[str] = mapped_column(String(32), default="")
    progress: Mapped[float] = mapped_column(Float, default=0.0)
    message: Mapped[str] = mapped_column(Text, default="")
    stats: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    errors: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    claimed_by: Mapped[str | None] = mapped_column(String(255), nullable=True)  # a worker id
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    not_before: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class LlmCacheEntry(Base):
    """A chat model's reply, kept by a hash of (model identity, messages, parameters) so that a re-run
    or a rebuild does not pay for the same call twice (``ragloom.service.builds.llm_cache``); per workspace."""

    __tablename__ = "llm_cache"
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenant.id", ondelete="CASCADE"), primary_key=True)
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    model: Mapped[str] = mapped_column(String(200), default="")
    reply: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Worker(Base):
    """A worker process that is (or was) alive: it beats every ``worker_heartbeat_seconds``.

    ``id`` is the ``claimed_by`` it writes on the tasks it runs (``host:pid:index``);
    ``supervisor`` the ``host:pid`` of the process that started it, if any. Rows of
    workers that stopped are removed by them or by their supervisor; a row whose
    ``last_seen`` is old belongs to a dead worker, whose task is re-queued.
    """

    __tablename__ = "worker"
    id: Mapped[str] = mapped_column(String(255), primary_key=True)
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int] = mapped_column(Integer)
    supervisor: Mapped[str | None] = mapped_column(String(255), nullable=True)
    task_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    rss_mb: Mapped[float] = mapped_column(Float, default=0.0)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    last_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)


class Assistant(Base):
    """A chat assistant: knowledge bases to answer from, and how to retrieve and write answers.

    ``llm``, ``prompt`` and ``retrieval`` hold the JSON of the service's settings models
    (``ragloom.service.chat.assistants``); ``retrieval`` is a ``RetrievalOptions`` (the retrieval API's
    options type). ``knowledge_bases`` is ``[{"id", "name"}]``: the name is kept so an assistant
    whose knowledge base was deleted can still say which one.
    """

    __tablename__ = "assistant"
    __table_args__ = (UniqueConstraint("tenant_id", "name"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenant.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(128))
    description: Mapped[str] = mapped_column(Text, default="")
    created_by: Mapped[str | None] = mapped_column(String(32), nullable=True)
    permission: Mapped[str] = mapped_column(String(8), default="me")  # me | team
    knowledge_bases: Mapped[list[dict[str, str]]] = mapped_column(JSON, default=list)
    llm: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    prompt: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    retrieval: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    top_n: Mapped[int] = mapped_column(Integer, default=6)
    rerank: Mapped[bool] = mapped_column(Boolean, default=True)
    # the applicability scope: a ScopeSettings (ragloom.retrieval.scope) — required metadata keys
    scope: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict, server_default="{}")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


class ChatSession(Base):
    """A conversation of one user with one assistant."""

    __tablename__ = "chat_session"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenant.id", ondelete="CASCADE"), index=True)
    assistant_id: Mapped[str] = mapped_column(ForeignKey("assistant.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[str] = mapped_column(String(32), index=True)
    name: Mapped[str] = mapped_column(String(255), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)
    # a visitor's session through a share link: the link, and the visitor's id (a cookie's or the client's);
    # ``user_id`` is then the link's creator, who sees it among their sessions, marked as a visitor's
    share_id: Mapped[str | None] = mapped_column(ForeignKey("share_link.id", ondelete="SET NULL"), nullable=True,
                                                 index=True)
    visitor_id: Mapped[str | None] = mapped_column(String(64), nullable=True)


class ShareLink(Base):
    """A share link of an assistant: visitors without an account ask it questions through
    ``/share/{token}`` (``ragloom.service.chat.shares``). ``token`` is the link's secret part, kept as
    given out so its owner can copy the link again (it opens one assistant's questions, nothing else)."""

    __tablename__ = "share_link"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenant.id", ondelete="CASCADE"), index=True)
    assistant_id: Mapped[str] = mapped_column(ForeignKey("assistant.id", ondelete="CASCADE"), index=True)
    created_by: Mapped[str] = mapped_column(String(32))
    kind: Mapped[str] = mapped_column(String(8), default="chat")  # chat | search
    token: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(128), default="")
    title: Mapped[str] = mapped_column(String(128), default="")
    welcome: Mapped[str] = mapped_column(Text, default="")
    allowed_origins: Mapped[list[str]] = mapped_column(JSON, default=list)
    per_minute: Mapped[int] = mapped_column(Integer, default=10)
    per_day: Mapped[int] = mapped_column(Integer, default=500)
    show_pages: Mapped[bool] = mapped_column(Boolean, default=True)
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    questions: Mapped[int] = mapped_column(Integer, default=0)
    refused: Mapped[int] = mapped_column(Integer, default=0)
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


class ChatMessage(Base):
    """One message of a session. A question and its answer share ``turn``; ``seq`` orders messages.

    ``refs``, an answer's references (``references`` is an SQL keyword), are version-locked:
    ``[{"id", "chunk_id", "doc_id", "kb_id", "version_id", "document_name", "content", "positions"}]``
    with ``content`` the cited text as it was, so the message shows what it cited after its document
    changed or went away.
    """

    __tablename__ = "chat_message"
    __table_args__ = (UniqueConstraint("session_id", "seq"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    session_id: Mapped[str] = mapped_column(ForeignKey("chat_session.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(Integer)
    turn: Mapped[int] = mapped_column(Integer)
    role: Mapped[str] = mapped_column(String(16))  # user | assistant (states.MessageRole)
    content: Mapped[str] = mapped_column(Text, default="")
    model: Mapped[str | None] = mapped_column(String(255), nullable=True)
    insufficient: Mapped[bool] = mapped_column(Boolean, default=False)
    refs: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    citations: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    explain: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    feedback: Mapped[str | None] = mapped_column(String(8), nullable=True)  # up | down (states.Feedback)
    feedback_comment: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
