"""Knowledge builds of a dataset (RAPTOR summaries, the knowledge graph): estimate, start, follow, cancel,
and delete what they built."""

from __future__ import annotations

import time
from collections.abc import Sequence

from ragloom.errors import RagloomError
from ragloom.schemas.builds import Build, BuildList, BuildRequest, BuildsStarted, KnowledgeDropped
from ragloom.schemas.graph import GraphView
from ragloom.sdk._base import Base, Route, body, operation

BUILD_TERMINAL = ("done", "failed", "cancelled")


class BuildsAPI(Base):
    @operation("POST", "/datasets/{dataset_id}/builds")
    def start_build(self, op: Route, /, dataset_id: str, kind: str = "raptor", *,
                    document_ids: Sequence[str] | None = None, dry_run: bool = False) -> BuildsStarted:
        """Estimate a build (``dry_run``: only that) and queue it, for the dataset or for some documents."""
        request = {"kind": kind, "document_ids": None if document_ids is None else list(document_ids),
                   "dry_run": dry_run}
        return self._model(BuildsStarted, op, path={"dataset_id": dataset_id}, json=body(BuildRequest, request))

    def estimate_build(self, dataset_id: str, kind: str = "raptor", *,
                       document_ids: Sequence[str] | None = None) -> BuildsStarted:
        """What a build would cost, chat-model calls and tokens (a dry run of :meth:`start_build`)."""
        return self.start_build(dataset_id, kind, document_ids=document_ids, dry_run=True)

    @operation("GET", "/datasets/{dataset_id}/builds")
    def list_builds(self, op: Route, /, dataset_id: str, *, kind: str | None = None, status: str | None = None,
                    page: int = 1, page_size: int = 50) -> BuildList:
        """A dataset's builds, newest first."""
        params = {"kind": kind, "status": status, "page": page, "page_size": page_size}
        return self._model(BuildList, op, path={"dataset_id": dataset_id}, params=params)

    @operation("GET", "/datasets/{dataset_id}/builds/{build_id}")
    def get_build(self, op: Route, /, dataset_id: str, build_id: str) -> Build:
        """One build with its stage, progress and costs."""
        return self._model(Build, op, path={"dataset_id": dataset_id, "build_id": build_id})

    @operation("POST", "/datasets/{dataset_id}/builds/{build_id}/cancel")
    def cancel_build(self, op: Route, /, dataset_id: str, build_id: str) -> Build:
        """Cancel a build (a running one stops at its next step)."""
        return self._model(Build, op, path={"dataset_id": dataset_id, "build_id": build_id})

    @operation("DELETE", "/datasets/{dataset_id}/knowledge/{kind}")
    def delete_knowledge(self, op: Route, /, dataset_id: str, kind: str) -> KnowledgeDropped:
        """Delete all builds of ``kind`` (raptor or graph) made over the dataset; refused while one runs."""
        return self._model(KnowledgeDropped, op, path={"dataset_id": dataset_id, "kind": kind})

    @operation("GET", "/datasets/{dataset_id}/graph")
    def get_graph(self, op: Route, /, dataset_id: str, *, limit: int = 200) -> GraphView:
        """The dataset's knowledge graph: top entities by PageRank, their relations, the communities."""
        return self._model(GraphView, op, path={"dataset_id": dataset_id}, params={"limit": limit})

    def wait_for_build(self, dataset_id: str, build_id: str, *, timeout: float = 3600.0,
                       poll: float = 0.5) -> Build:
        """The build once it is done, failed or cancelled; ``RagloomError`` after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            build = self.get_build(dataset_id, build_id)
            if build.status in BUILD_TERMINAL:
                return build
            if time.monotonic() > deadline:
                raise RagloomError(f"build {build_id} still {build.status} after {timeout:g} s: {build.message}")
            time.sleep(poll)
