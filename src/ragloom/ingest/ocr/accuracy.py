"""How OCR output is compared with a reference: the edit distance behind the character error rate
(the int8 recogniser's acceptance check, ``benchmarks/parse.py``, the OCR tests)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence


def edit_distance(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Levenshtein distance: insertions, deletions and substitutions turning ``a`` into ``b``
    (characters of strings, or class indices of a recogniser's output)."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y))
        prev = cur
    return prev[-1]
