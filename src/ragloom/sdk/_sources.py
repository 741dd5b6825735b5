"""Sources of a dataset kept in sync (a folder of the server's disk, a web site, ...): add, list, change,
pause and resume, remove, test, sync now, and the syncs with their counts and errors."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from ragloom.errors import RagloomError
from ragloom.schemas.sources import (
    Source,
    SourceCheck,
    SourceCreate,
    SourceList,
    SourceUpdate,
    Sync,
    SyncList,
)
from ragloom.sdk._base import Base, Route, body, operation

SYNC_TERMINAL = ("done", "failed", "cancelled")


class SourcesAPI(Base):
    @operation("POST", "/datasets/{dataset_id}/sources")
    def add_source(self, op: Route, /, dataset_id: str, name: str, type: str, *,  # noqa: A002 - the API's field
                   settings: Mapping[str, Any] | None = None, credentials: Mapping[str, str] | None = None,
                   include: Sequence[str] | None = None, exclude: Sequence[str] | None = None,
                   file_types: Sequence[str] | None = None, max_size_mb: float | None = None,
                   schedule_minutes: int | None = None, paused: bool = False,
                   readers: Sequence[str] = ()) -> Source:
        """A new source of the dataset (``type``: folder, web, s3, git, webdav, imap, confluence, notion, or a
        plugin's), with its connector's ``settings`` (folder: ``{"path"}``; web: ``{"urls", "max_depth",
        "max_pages", ...}``; confluence: ``{"url", "spaces"}``...; each type's in ``SourceCreate``) and
        ``credentials``, its filters and its schedule (every ``schedule_minutes``; None: only when asked).
        ``readers``: who may read its items when the connector does not say (``user:<e-mail>``,
        ``group:<name>``; a dataset with source permissions shows them to these only)."""
        filters = {k: v for k, v in {"include": include, "exclude": exclude, "file_types": file_types,
                                      "max_size_mb": max_size_mb}.items() if v is not None}
        request = {"name": name, "type": type, "settings": dict(settings or {}),
                   "credentials": dict(credentials) if credentials is not None else None, "filters": filters,
                   "schedule_minutes": schedule_minutes, "paused": paused, "readers": list(readers)}
        return self._model(Source, op, path={"dataset_id": dataset_id}, json=body(SourceCreate, request))

    @operation("GET", "/datasets/{dataset_id}/sources")
    def list_sources(self, op: Route, /, dataset_id: str) -> SourceList:
        """The dataset's sources, each with its latest sync."""
        return self._model(SourceList, op, path={"dataset_id": dataset_id})

    @operation("GET", "/datasets/{dataset_id}/sources/{source_id}")
    def get_source(self, op: Route, /, dataset_id: str, source_id: str) -> Source:
        """One source (by id or name)."""
        return self._model(Source, op, path={"dataset_id": dataset_id, "source_id": source_id})

    @operation("PATCH", "/datasets/{dataset_id}/sources/{source_id}")
    def update_source(self, op: Route, /, dataset_id: str, source_id: str, changes: Mapping[str, Any]) -> Source:
        """Change a source: the fields of ``changes`` (``SourceUpdate``: name, settings, credentials, filters,
        schedule_minutes — None makes it manual —, paused)."""
        return self._model(Source, op, path={"dataset_id": dataset_id, "source_id": source_id},
                           json=body(SourceUpdate, changes, keep_none=True))

    def pause_source(self, dataset_id: str, source_id: str) -> Source:
        """Pause the source's schedule."""
        return self.update_source(dataset_id, source_id, {"paused": True})

    def resume_source(self, dataset_id: str, source_id: str) -> Source:
        """Resume the source's schedule (a sync due meanwhile is queued at once)."""
        return self.update_source(dataset_id, source_id, {"paused": False})

    @operation("DELETE", "/datasets/{dataset_id}/sources/{source_id}")
    def remove_source(self, op: Route, /, dataset_id: str, source_id: str, *, keep_documents: bool = False) -> None:
        """Remove a source and, unless ``keep_documents``, the documents it made."""
        self._empty(op, path={"dataset_id": dataset_id, "source_id": source_id},
                    params={"keep_documents": "true" if keep_documents else None})

    @operation("POST", "/datasets/{dataset_id}/sources/{source_id}/check")
    def check_source(self, op: Route, /, dataset_id: str, source_id: str) -> SourceCheck:
        """Test the source's connection."""
        return self._model(SourceCheck, op, path={"dataset_id": dataset_id, "source_id": source_id})

    @operation("POST", "/datasets/{dataset_id}/sources/{source_id}/sync")
    def sync_source(self, op: Route, /, dataset_id: str, source_id: str) -> Sync:
        """Queue a sync of the source now (or get the one already waiting)."""
        return self._model(Sync, op, path={"dataset_id": dataset_id, "source_id": source_id})

    @operation("GET", "/datasets/{dataset_id}/sources/{source_id}/syncs")
    def list_syncs(self, op: Route, /, dataset_id: str, source_id: str, *, page: int = 1,
                   page_size: int = 20) -> SyncList:
        """The source's syncs, newest first."""
        return self._model(SyncList, op, path={"dataset_id": dataset_id, "source_id": source_id},
                           params={"page": page, "page_size": page_size})

    @operation("GET", "/datasets/{dataset_id}/sources/{source_id}/syncs/{sync_id}")
    def get_sync(self, op: Route, /, dataset_id: str, source_id: str, sync_id: str) -> Sync:
        """One sync with its counts and errors."""
        return self._model(Sync, op, path={"dataset_id": dataset_id, "source_id": source_id, "sync_id": sync_id})

    @operation("POST", "/datasets/{dataset_id}/sources/{source_id}/syncs/{sync_id}/cancel")
    def cancel_sync(self, op: Route, /, dataset_id: str, source_id: str, sync_id: str) -> Sync:
        """Cancel a sync (a running one stops after its current item)."""
        return self._model(Sync, op, path={"dataset_id": dataset_id, "source_id": source_id, "sync_id": sync_id})

    def wait_for_sync(self, dataset_id: str, source_id: str, sync_id: str, *, timeout: float = 3600.0,
                      poll: float = 0.3) -> Sync:
        """The sync once it is done, failed or cancelled; ``RagloomError`` after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            job = self.get_sync(dataset_id, source_id, sync_id)
            if job.status in SYNC_TERMINAL:
                return job
            if time.monotonic() > deadline:
                raise RagloomError(f"sync {sync_id} still {job.status} after {timeout:g} s: {job.message}")
            time.sleep(poll)
