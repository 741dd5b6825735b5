"""What the builders of the resources ragloom shows have in common: how a chunk's positions, table rows
and summary fields are shown, and the link that opens a version's view at a chunk.

The builders themselves live beside the use cases of their domain, one ``views.py`` per sub-package
(:mod:`ragloom.service.documents.views`, :mod:`ragloom.service.search.views`,
:mod:`ragloom.service.chat.views`, :mod:`ragloom.service.builds.views`,
:mod:`ragloom.service.accounts.views`; a knowledge base's: :func:`ragloom.service.knowledgebases.kb_view`),
one builder per resource (``document_view(doc)``, ``retrieval_view(result)``, ...). The models they build
are the API's contracts, in :mod:`ragloom.schemas`: the API declares them as its response models and the
CLI prints the same JSON. Nothing else builds these resources. Every timestamp is
:func:`ragloom.schemas.base.iso_utc` text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragloom.dataflow import ChunkKind, ChunkRecord, Position
from ragloom.schemas.chunks import TableRows


def view_link(base: str, version_id: str, positions: Sequence[Sequence[float]]) -> str | None:
    """The link that opens a version's HTML view at the blocks of ``positions`` (positions on page 0,
    :mod:`ragloom.ingest.preview`), those blocks marked; None when no position is in the view.
    ``base`` is the document's URL."""
    from ragloom.ingest.preview import anchors

    blocks = anchors(positions)
    if not blocks:
        return None
    return f"{base}/preview?version_id={version_id}&highlight={','.join(map(str, blocks))}#b{blocks[0]}"


def positions_view(record: ChunkRecord) -> list[list[float]]:
    return rounded_positions(record.positions)


def rounded_positions(positions: Sequence[Position]) -> list[list[float]]:
    """``[[page, left, right, top, bottom], ...]`` in PDF points, to 2 decimals."""
    return [[int(p[0]), round(p[1], 2), round(p[2], 2), round(p[3], 2), round(p[4], 2)] for p in positions]


def table_rows_view(table: dict[str, Any] | None) -> TableRows | None:
    return TableRows.model_validate(table) if table is not None else None


def summary_fields(record: ChunkRecord) -> dict[str, Any]:
    """``layer``, ``source_ids`` and ``built_by`` of a summary row; nothing for any other row."""
    if record.kind != ChunkKind.SUMMARY:
        return {}
    return {"layer": record.layer, "source_ids": list(record.source_ids), "built_by": record.built_by}


def figure_link(kb_id: str, doc_id: str, chunk_id: str) -> str:
    """Where a figure chunk's picture is served."""
    return f"/api/v1/datasets/{kb_id}/documents/{doc_id}/chunks/{chunk_id}/figure.png"
