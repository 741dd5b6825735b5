"""Ranking metrics over one query's ranked list of corpus ids.

``ranked`` is the system's answer, best first, without repeats (``None`` marks a
result that is not a corpus item); ``relevant`` the labelled ids. Gains for nDCG
come from a ``gain(id)`` function (linear gain, log2 discount, as trec_eval).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence

Ranked = Sequence[str | None]


def hit_at(ranked: Ranked, relevant: Collection[str], k: int) -> float:
    """1.0 when a relevant id is among the first ``k``, else 0.0."""
    return 1.0 if any(r in relevant for r in ranked[:k] if r is not None) else 0.0


def mrr_at(ranked: Ranked, relevant: Collection[str], k: int) -> float:
    """Reciprocal rank of the first relevant id within the first ``k`` (0.0 when none)."""
    for i, r in enumerate(ranked[:k], 1):
        if r is not None and r in relevant:
            return 1.0 / i
    return 0.0


def recall_at(ranked: Ranked, relevant: Collection[str], k: int) -> float:
    """Share of the relevant ids found within the first ``k``."""
    if not relevant:
        return 0.0
    found = {r for r in ranked[:k] if r is not None and r in relevant}
    return len(found) / len(relevant)


def dcg(gains: Sequence[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def ndcg_at(ranked: Ranked, relevant: Collection[str], k: int,
            gain: Callable[[str], float] | None = None) -> float:
    """nDCG@k; ``gain`` defaults to binary (1 for a relevant id). 0.0 when no id has a positive gain."""
    g = gain or (lambda d: 1.0 if d in relevant else 0.0)
    ideal = dcg(sorted((g(d) for d in relevant), reverse=True)[:k])
    if ideal <= 0:
        return 0.0
    got = dcg([g(r) if r is not None else 0.0 for r in ranked[:k]])
    return got / ideal


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0-100) with linear interpolation; 0.0 for no values."""
    if not values:
        return 0.0
    xs = sorted(values)
    pos = (len(xs) - 1) * p / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)
