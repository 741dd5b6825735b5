"""A table of contents built by the chat model, for a document whose parser found no headings.

REFERENCE §10 (build). Enabled per knowledge base or document by
``parser_config.toc_extraction``; used only when :func:`ragloom.knowledge.toc.build_toc`
found nothing. Two kinds of calls:

1. **Titles.** The chunks, in reading order, are packed into batches of at most
   ``budget`` tokens (a chunk is never split over two batches; a chunk larger than
   the budget goes alone, its text cut to the budget). Each batch is shown with
   the chunks numbered and the model answers ``[{"chunk_id": "3", "title": "..."}]``,
   ``"-1"`` as the title of a chunk that starts no section. Titles ``"-1"``,
   numeric-only titles, titles longer than 22 tokens (12 when there are more than
   512 titles) and ids outside the batch are dropped; a chunk keeps its first title.
2. **Levels.** The kept titles (in groups of :data:`LEVEL_BATCH`) are shown in
   order and the model answers ``[{"index": 0, "level": 1}, ...]`` (a bare list
   of numbers is accepted too). With more than 512 entries the deepest level is
   dropped until they fit or one level is left.

An entry's ``ids`` are its chunk through the chunk before the next entry's (the
last entry runs to the end of the document).

Malformed replies: code fences and prose around the JSON are ignored and
trailing commas / single quotes repaired; a batch whose titles stay unreadable
is skipped with a warning, and unreadable levels make the group flat (level 1),
also with a warning. A :class:`~ragloom.errors.ModelError` (the model cannot be
reached) is not caught here: the caller decides (the pipeline records it and
indexes the document without a TOC).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragloom.knowledge.toc import TocEntry
from ragloom.models.chat import ChatModel

log = logging.getLogger(__name__)

MAX_BATCH_TOKENS = 1024
PROMPT_TOKENS = 300  # room kept for the instructions around a batch
MAX_TITLE_TOKENS = 22
MAX_TITLE_TOKENS_MANY = 12
MANY_TITLES = 512
LEVEL_BATCH = 100
MAX_LEVEL = 6
NO_TITLE = "-1"

_NUMERIC = re.compile(r"[\d\s.,:;()\[\]\-–—/%#]+")
_TRAILING_COMMA = re.compile(r",\s*([\]}])")

TITLES_PROMPT = """The numbered chunks below are consecutive parts of one document, in reading order.
For each chunk, decide whether it begins a new section of the document and, if it does, give the section's
title exactly as it appears in the chunk (a heading line, a numbered clause, a bold lead-in, a topic sentence
that names the section). When a chunk continues the previous section, its title is "-1".

{chunks}

Reply with a JSON array only, one object per chunk, e.g.
[{{"chunk_id": "0", "title": "Installation"}}, {{"chunk_id": "1", "title": "-1"}}]"""

LEVELS_PROMPT = """These are the section titles of one document, in reading order:

{titles}

Give each title its heading level: 1 for a top-level section, 2 for a subsection of the level-1 section
before it, 3 for a subsection of a level-2 section, and so on.
Reply with a JSON array only, one object per title, e.g. [{{"index": 0, "level": 1}}, {{"index": 1, "level": 2}}]"""


@dataclass(slots=True)
class LlmToc:
    """What the model produced: the entries, and a one-line note on how it went (for the task message)."""

    entries: list[TocEntry]
    batches: int = 0
    skipped_batches: int = 0
    flat_groups: int = 0
    dropped_titles: int = 0
    warnings: list[str] = field(default_factory=list)

    @property
    def note(self) -> str:
        if not self.entries:
            what = "TOC: the chat model found no section titles"
        else:
            what = f"TOC: {len(self.entries)} entries built by the chat model"
        problems = []
        if self.skipped_batches:
            problems.append(f"{self.skipped_batches} of {self.batches} batches skipped (unreadable replies)")
        if self.flat_groups:
            problems.append("levels unreadable, kept flat")
        return what + (f" ({'; '.join(problems)})" if problems else "")


def batch_budget(max_context_tokens: int) -> int:
    """Tokens of chunk text per call: ``min(1024, max_context / 2 - prompt)`` and at least 64."""
    return max(64, min(MAX_BATCH_TOKENS, max_context_tokens // 2 - PROMPT_TOKENS))


def make_batches(texts: Sequence[str], count_tokens: Callable[[str], int], budget: int) -> list[list[int]]:
    """Chunk indices in reading order, packed into consecutive batches of at most ``budget`` tokens.
    A chunk is never split; one over the budget forms a batch of its own."""
    batches: list[list[int]] = []
    current: list[int] = []
    used = 0
    for i, text in enumerate(texts):
        n = count_tokens(text)
        if current and used + n > budget:
            batches.append(current)
            current, used = [], 0
        current.append(i)
        used += n
    if current:
        batches.append(current)
    return batches


def parse_json_reply(reply: str) -> Any | None:
    """The JSON value in a model's reply, or None. Code fences and text around the outermost
    ``[...]`` (else ``{...}``) are ignored; trailing commas and single-quoted strings are repaired."""
    text = reply.strip()
    for opener, closer in (("[", "]"), ("{", "}")):
        start, end = text.find(opener), text.rfind(closer)
        if start == -1 or end <= start:
            continue
        candidate = text[start : end + 1]
        for attempt in (candidate, _TRAILING_COMMA.sub(r"\1", candidate),
                        _TRAILING_COMMA.sub(r"\1", candidate).replace("'", '"')):
            try:
                return json.loads(attempt)
            except ValueError:
                continue
    return None


def _clip(text: str, count_tokens: Callable[[str], int], budget: int) -> str:
    n = count_tokens(text)
    return text if n <= budget else text[: max(1, len(text) * budget // n)]


def _titles_of_batch(chat: ChatModel, texts: Sequence[str], batch: list[int],
                     count_tokens: Callable[[str], int], budget: int) -> dict[int, str] | None:
    """``{chunk index: raw title}`` for one batch, or None when the reply is unreadable."""
    shown = "\n\n".join(f"### chunk {i}\n{_clip(texts[i], count_tokens, budget)}" for i in batch)
    reply = chat.chat([{"role": "user", "content": TITLES_PROMPT.format(chunks=shown)}], temperature=0.0)
    data = parse_json_reply(reply)
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        return None
    allowed = set(batch)
    found: dict[int, str] = {}
    for item in data:
        if not isinstance(item, dict):
            continue
        try:
            idx = int(str(item.get("chunk_id", "")).strip())
        except ValueError:
            continue
        title = " ".join(str(item.get("title", "")).split())
        if idx in allowed and idx not in found:
            found[idx] = title
    return found


def keep_title(title: str, count_tokens: Callable[[str], int], max_tokens: int) -> bool:
    """False for "-1"/empty, numeric-only ("3.2", "(12)") and over-long titles."""
    if not title or title == NO_TITLE or _NUMERIC.fullmatch(title):
        return False
    return count_tokens(title) <= max_tokens


def _levels_of_group(chat: ChatModel, titles: Sequence[str]) -> list[int] | None:
    listing = "\n".join(f"{i}. {t}" for i, t in enumerate(titles))
    reply = chat.chat([{"role": "user", "content": LEVELS_PROMPT.format(titles=listing)}], temperature=0.0)
    data = parse_json_reply(reply)
    if not isinstance(data, list) or not data:
        return None
    levels: dict[int, int] = {}
    for pos, item in enumerate(data):
        idx, value = (item.get("index", pos), item.get("level")) if isinstance(item, dict) else (pos, item)
        if value is None:  # no level given
            continue
        try:
            levels.setdefault(int(idx), int(value))
        except (TypeError, ValueError):
            continue
    if not levels:
        return None
    out, previous = [], 1
    for i in range(len(titles)):
        previous = min(MAX_LEVEL, max(1, levels.get(i, previous)))
        out.append(previous)
    return out


def build_toc_with_llm(chat: ChatModel, chunks: Sequence[tuple[str, str]], count_tokens: Callable[[str], int],
                       *, budget: int = MAX_BATCH_TOKENS) -> LlmToc:
    """TOC entries for ``chunks`` (``(chunk_id, text)`` in reading order); see the module docstring.
    Raises :class:`~ragloom.errors.ModelError` when the model cannot be reached."""
    texts = [t for _, t in chunks]
    result = LlmToc(entries=[])
    raw: dict[int, str] = {}
    batches = make_batches(texts, count_tokens, budget)
    result.batches = len(batches)
    for n, batch in enumerate(batches):
        found = _titles_of_batch(chat, texts, batch, count_tokens, budget)
        if found is None:
            result.skipped_batches += 1
            result.warnings.append(f"batch {n + 1}/{len(batches)}: unreadable reply, skipped")
            log.warning("TOC: the chat model's reply for batch %d/%d was not readable JSON; batch skipped",
                        n + 1, len(batches))
            continue
        raw.update(found)
    limit = MAX_TITLE_TOKENS_MANY if len(raw) > MANY_TITLES else MAX_TITLE_TOKENS
    anchors = sorted((i, t) for i, t in raw.items() if keep_title(t, count_tokens, limit))
    result.dropped_titles = sum(1 for t in raw.values() if t and t != NO_TITLE) - len(anchors)
    if not anchors:
        return result
    levels = _assign_levels(chat, [t for _, t in anchors], result)
    result.entries = _entries([c for c, _ in chunks], anchors, levels)
    return result


def _assign_levels(chat: ChatModel, titles: list[str], result: LlmToc) -> list[int]:
    levels: list[int] = []
    for start in range(0, len(titles), LEVEL_BATCH):
        group = titles[start : start + LEVEL_BATCH]
        got = _levels_of_group(chat, group)
        if got is None:
            result.flat_groups += 1
            log.warning("TOC: the chat model's levels for titles %d-%d were not readable; kept flat",
                        start, start + len(group) - 1)
            got = [1] * len(group)
        levels.extend(got)
    return levels


def _entries(ids: Sequence[str], anchors: list[tuple[int, str]], levels: list[int]) -> list[TocEntry]:
    kept = list(zip(anchors, levels, strict=True))
    while len(kept) > MANY_TITLES and len({lv for _, lv in kept}) > 1:
        deepest = max(lv for _, lv in kept)
        kept = [k for k in kept if k[1] != deepest]
    entries = []
    for k, ((j, title), level) in enumerate(kept):
        end = kept[k + 1][0][0] if k + 1 < len(kept) else len(ids)
        entries.append(TocEntry(level=level, title=title, ids=tuple(ids[j : max(j + 1, end)])))
    return entries
