"""The delimiter grammar of the naive chunker.

Each character outside backticks is a one-character delimiter; text between a
pair of backticks (`` `##` ``) is one multi-character delimiter. The escapes
``\\n`` and ``\\t`` typed as two characters stand for newline and tab; CRLF is
read as LF. Matching is case-sensitive, longest delimiter first. Any backtick
delimiter switches on *custom mode*: every delimited segment becomes its own
chunk (split further only when it exceeds the token budget).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Delimiters:
    single: tuple[str, ...]
    multi: tuple[str, ...]

    @property
    def custom(self) -> bool:
        return bool(self.multi)

    @property
    def pattern(self) -> re.Pattern[str] | None:
        items = sorted({*self.single, *self.multi}, key=len, reverse=True)
        return re.compile("|".join(re.escape(d) for d in items)) if items else None


def parse_delimiters(spec: str) -> Delimiters:
    """Parse a delimiter specification; ``ValueError`` on an unclosed backtick."""
    spec = spec.replace("\r\n", "\n").replace("\\n", "\n").replace("\\t", "\t")
    single: list[str] = []
    multi: list[str] = []
    i = 0
    while i < len(spec):
        ch = spec[i]
        if ch == "`":
            end = spec.find("`", i + 1)
            if end < 0:
                raise ValueError(f"unclosed backtick in delimiter {spec!r} at position {i}")
            token = spec[i + 1 : end]
            if token and token not in multi:
                multi.append(token)
            i = end + 1
            continue
        if ch not in single:
            single.append(ch)
        i += 1
    return Delimiters(tuple(single), tuple(multi))
