"""Dataclasses carried through answer generation: evidence in, answer out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragloom.dataflow import Position


@dataclass(slots=True)
class Evidence:
    """One retrieved chunk offered to the answer generator.

    ``index`` is the number shown to the model (``ID: index``) and cited as
    ``[ID:index]``; indices must be unique within one answer. ``vector`` is the
    chunk's passage embedding when the caller already has it (otherwise it is
    computed on demand with the answer's embedder).
    """

    index: int
    chunk_id: str
    doc_id: str
    document_name: str
    content: str
    positions: list[Position] = field(default_factory=list)
    version_id: str = ""
    similarity: float = 0.0
    vector: np.ndarray | None = None

    def to_reference(self) -> dict[str, Any]:
        """The JSON form stored with an answer (no vector)."""
        return {
            "id": self.index,
            "chunk_id": self.chunk_id,
            "doc_id": self.doc_id,
            "version_id": self.version_id,
            "document_name": self.document_name,
            "content": self.content,
            "positions": [list(p) for p in self.positions],
        }


@dataclass(slots=True)
class Citation:
    """One ``[ID:index]`` marker attached to sentence ``sentence`` of the answer.

    ``support`` is the verification score (``None`` when not verified);
    ``supported`` is False for a citation that verification rejected — such a
    citation is no longer in the answer text. ``inserted`` is True when the
    marker was added by similarity rather than written by the model.
    """

    sentence: int
    index: int
    support: float | None = None
    supported: bool = True
    inserted: bool = False


@dataclass(slots=True)
class Answer:
    """A generated answer with its evidence.

    ``references`` holds only the evidence cited in ``text`` (ordered by index).
    ``sentences`` are the answer's sentences without markers, in order; each
    :class:`Citation` points into it. ``insufficient`` is True when the evidence
    does not support the answer (or nothing answered the question).
    """

    text: str
    model: str
    references: list[Evidence] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    sentences: list[str] = field(default_factory=list)
    insufficient: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "answer": self.text,
            "model": self.model,
            "insufficient": self.insufficient,
            "references": [ev.to_reference() for ev in self.references],
        }
