"""Sources of a knowledge base (a folder of the server's disk, a web site, ...) kept in sync with it:
a source's settings, filters and schedule as a request gives them; a source and its syncs (with their
counts and per-item errors) as the API shows them. Credentials go in, never out (``has_credentials``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from ragloom.schemas.base import Number, Request, Timestamp, View

MAX_SCHEDULE_MINUTES = 60 * 24 * 366
MAX_PATTERNS = 100


class SourceFilters(Request):
    """What of a source becomes documents: an item is kept when its path matches one of ``include`` (or
    ``include`` is empty), none of ``exclude``, its extension is one of ``file_types`` (or that is empty) and
    its size is at most ``max_size_mb``. An item filtered out whose document exists loses it."""

    include: list[str] = Field(default_factory=list, max_length=MAX_PATTERNS,
                               description="glob patterns of item paths to keep (e.g. docs/**, *.md); empty: all")
    exclude: list[str] = Field(default_factory=list, max_length=MAX_PATTERNS,
                               description="glob patterns of item paths to leave out (e.g. drafts/**)")
    file_types: list[str] = Field(default_factory=list, max_length=MAX_PATTERNS,
                                  description="file extensions to keep, without the dot (pdf, md); empty: all")
    max_size_mb: Number | None = Field(None, gt=0, description="largest item kept, in MiB (default: the server's "
                                       "upload limit, RAGLOOM_MAX_UPLOAD_MB)")

    @field_validator("include", "exclude")
    @classmethod
    def _patterns(cls, value: list[str]) -> list[str]:
        for p in value:
            if not p.strip() or len(p) > 500:
                raise ValueError("a pattern is 1 to 500 characters")
        return [p.strip() for p in value]

    @field_validator("file_types")
    @classmethod
    def _types(cls, value: list[str]) -> list[str]:
        out = []
        for t in value:
            t = t.strip().lower().lstrip(".")
            if not t or len(t) > 16 or not t.replace("-", "").replace("_", "").isalnum():
                raise ValueError(f"{t!r} is not a file extension")
            out.append(t)
        return out


READERS = ("who may read the source's items when its connector does not say (a knowledge base with source "
           "permissions shows them to these only): user:<e-mail> or group:<name>; []: everyone")


class SourceCreate(Request):
    """A new source of a knowledge base."""

    name: str = Field(min_length=1, max_length=128, description="unique in the knowledge base")
    type: str = Field(min_length=1, max_length=32, description="the connector: folder, web, s3, git, webdav, imap, "
                      "confluence, notion, or a plugin's (ragloom.connectors)")
    settings: dict[str, Any] = Field(default_factory=dict, description="the connector's settings: folder "
                                     "{path, hidden, owner_email_domain}; web {urls, max_depth, max_pages, "
                                     "sitemap, robots, documents}; "
                                     "s3 {bucket, prefix, endpoint_url, region}; git {repository, branch, paths}; "
                                     "webdav {url, paths, max_depth}; imap {host, port, ssl, folders}; confluence "
                                     "{url, spaces, cloud, attachments}; notion {database_ids, page_ids, api_url}")
    credentials: dict[str, str] | None = Field(None, description="secrets the connector needs (stored encrypted, "
                                               "never returned): s3 {access_key_id, secret_access_key}; git "
                                               "{token}; webdav and imap {username, password}; confluence {email, "
                                               "api_token} (Cloud) or {token} (Data Center); notion {token}")
    filters: SourceFilters = Field(default_factory=SourceFilters)
    readers: list[str] = Field(default_factory=list, max_length=1000, description=READERS)
    schedule_minutes: int | None = Field(None, ge=1, le=MAX_SCHEDULE_MINUTES,
                                         description="sync every this many minutes; null: only when asked")
    paused: bool = Field(False, description="scheduled syncs are not run while paused")


class SourceUpdate(Request):
    """Changes to a source; what is not given stays (``schedule_minutes: null`` makes it manual;
    ``credentials: {}`` removes them)."""

    name: str | None = Field(None, min_length=1, max_length=128)
    settings: dict[str, Any] | None = None
    credentials: dict[str, str] | None = None
    filters: SourceFilters | None = None
    readers: list[str] | None = Field(None, max_length=1000, description=READERS)
    schedule_minutes: int | None = Field(None, ge=1, le=MAX_SCHEDULE_MINUTES)
    paused: bool | None = None


class SyncStats(View):
    """What a sync did with the items of its source."""

    listed: int = Field(0, description="items the source listed")
    new: int = Field(0, description="documents made of new items")
    changed: int = Field(0, description="documents given a new version (their item changed)")
    deleted: int = Field(0, description="documents deleted (their item is gone, or now filtered out)")
    unchanged: int = Field(0, description="items whose change token is the same: nothing read")
    skipped: int = Field(0, description="items the filters leave out")
    failed: int = Field(0, description="items that could not be read or stored (see errors); tried again next sync")


class SyncError(View):
    item: str = Field(description="the item's id at the source (a path, a URL)")
    message: str


class Sync(View):
    """A sync of a source: a job of the workers."""

    id: str
    source_id: str
    dataset_id: str
    trigger: str = Field(description="user or schedule")
    status: str = Field(description="queued, running, done, failed or cancelled")
    stage: str = Field(description="listing, deleting or done")
    progress: Number
    message: str
    stats: SyncStats
    errors: list[SyncError] = Field(description="the first per-item errors (RAGLOOM_SOURCE_SYNC_ERRORS_KEPT)")
    attempts: int
    created_at: Timestamp
    started_at: Timestamp | None
    finished_at: Timestamp | None


class SyncList(View):
    syncs: list[Sync]
    total: int


class Source(View):
    """A source of a knowledge base."""

    id: str
    dataset_id: str
    name: str
    type: str
    settings: dict[str, Any]
    has_credentials: bool = Field(description="credentials are stored (they are never shown)")
    filters: SourceFilters
    readers: list[str] = Field(description=READERS)
    schedule_minutes: int | None = Field(description="sync every this many minutes; null: only when asked")
    paused: bool
    next_run_at: Timestamp | None = Field(description="when the workers queue its next scheduled sync")
    last_synced_at: Timestamp | None = Field(description="when its last sync finished")
    last_sync: Sync | None = Field(description="its latest sync")
    documents: int = Field(description="documents it made that exist now")
    created_at: Timestamp
    updated_at: Timestamp


class SourceList(View):
    sources: list[Source]
    total: int


class SourceCheck(View):
    """A test of a source's connection (reach it, list a little)."""

    ok: bool
    message: str
