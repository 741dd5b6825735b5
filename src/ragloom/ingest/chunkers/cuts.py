"""Minimum-count grouping of a sequence under a capacity, shared by the chunkers.

Kept apart from ``naive`` so that ``tables`` and ``sectioned`` can use it without
importing the naive chunker (which itself imports ``tables``).
"""

from __future__ import annotations

from collections.abc import Sequence


def min_cuts(sizes: Sequence[float], qualities: Sequence[int], capacity: float) -> list[int]:
    """End indices (inclusive) of the fewest contiguous groups with sums ≤ ``capacity``.

    An item larger than the capacity forms a group alone. Among the cuts that
    keep the minimum count, each group ends at the best-quality cut (the latest
    on ties); the end of the sequence beats any cut.
    """
    n = len(sizes)
    far, total, j = [0] * n, 0.0, 0
    for i in range(n):  # far[i]: the last index a group starting at i can reach
        if j <= i:
            j, total = i, 0.0
        while j < n and (j == i or total + sizes[j] <= capacity + 1e-9):
            total += sizes[j]
            j += 1
        far[i] = j - 1
        total -= sizes[i]
    rest = [0] * (n + 1)  # rest[i]: the fewest groups covering items i..n-1 (non-increasing)
    for i in range(n - 1, -1, -1):
        rest[i] = 1 + rest[far[i] + 1]
    ends: list[int] = []
    start = 0
    while start < n:
        best = far[start]
        for e in range(far[start], start - 1, -1):
            if rest[e + 1] > rest[start] - 1 or e == n - 1:
                break
            if qualities[e] > qualities[best]:
                best = e
        ends.append(best)
        start = best + 1
    return ends
