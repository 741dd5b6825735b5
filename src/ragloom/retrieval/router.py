"""Knowledge-base routing: pick the knowledge bases whose description fits the question.

Each candidate knowledge base is described by its name and description; the
question is scored against each (half cosine of the embeddings, rescaled from
e5's usual 0.75..0.95 band, half term overlap). The best one is kept, with any
other within ``margin`` of it, at most ``limit``. A knowledge base with no
description is judged by its name alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class RouteChoice:
    kb_id: str
    score: float
    chosen: bool


def route(question: str, kbs: Sequence[tuple[str, str]], *, embed_query: Callable[[str], np.ndarray],
          embed_passages: Callable[[list[str]], np.ndarray], term_similarity: Callable[[str, str], float],
          margin: float = 0.1, limit: int = 3) -> list[RouteChoice]:
    """Scores of ``(kb_id, description)`` pairs for ``question``, best first, the kept ones marked."""
    if not kbs:
        return []
    q = embed_query(question)
    vecs = embed_passages([d for _, d in kbs])
    cos = np.clip((vecs @ q - 0.75) / 0.2, 0.0, 1.0)
    scored = sorted(((kb_id, 0.5 * float(c) + 0.5 * term_similarity(question, desc))
                     for (kb_id, desc), c in zip(kbs, cos, strict=True)), key=lambda x: -x[1])
    best = scored[0][1]
    return [RouteChoice(kb_id, s, i < limit and s >= best - margin) for i, (kb_id, s) in enumerate(scored)]
