"""The kinds of knowledge build (:data:`BUILD_KINDS`), and the document life-cycle events they hear.

A kind is a :class:`~ragloom.service.builds.jobs.BuildKind` registered here by name: ``raptor``
(:mod:`ragloom.service.builds.raptor`); the knowledge graph and chunk enrichment are added the same way.
Documents call :func:`on_published` and :func:`on_deleted`, so this module imports nothing that shows
resources (no cycle back to them).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session

from ragloom.context import Context
from ragloom.db.models import KnowledgeBase
from ragloom.errors import InvalidRequestError
from ragloom.service.builds.jobs import BuildKind


def _builtin() -> dict[str, BuildKind]:
    from ragloom.service.builds.graph import GraphKind
    from ragloom.service.builds.raptor import RaptorKind

    return {"raptor": RaptorKind(), "graph": GraphKind()}


BUILD_KINDS: dict[str, BuildKind] = {}
"""The kinds of build by name; filled with the built-in ones on first use (:func:`kinds`)."""


def kinds() -> dict[str, BuildKind]:
    if not BUILD_KINDS:
        BUILD_KINDS.update(_builtin())
    return BUILD_KINDS


def kind_of(name: str) -> BuildKind:
    found = kinds().get(name)
    if found is None:
        raise InvalidRequestError(f"kind: unknown build kind {name!r}; one of {', '.join(sorted(kinds()))}")
    return found


def on_published(ctx: Context, kb_id: str, doc_id: str) -> None:
    """A document's new version was published: every kind keeps its part in step."""
    with ctx.db.session() as s:
        kb = s.get(KnowledgeBase, kb_id)
    if kb is None:
        return
    for kind in kinds().values():
        kind.on_published(ctx, kb, doc_id)


def on_deleted(ctx: Context, session: Session, kb: KnowledgeBase, doc_ids: Sequence[str]) -> None:
    """Documents were deleted in ``session`` (their rows are gone from the search store): every kind drops
    what it built over them, in the same session."""
    for kind in kinds().values():
        kind.on_deleted(ctx, session, kb, doc_ids)
