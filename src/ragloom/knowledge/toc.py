"""A document's table of contents, built from its headings, and the title scorers of TOC enhancement.

Build (no LLM needed when the structure exists): every heading the parser found
is an entry ``{level, title, ids}`` whose ``ids`` are the chunks of that section
(its own and its subsections', see :func:`build_toc`). The TOC is stored
as a hidden row (``kind="toc"``, never matched) of the version; a page-range
task stores the TOC of its pages. A document without headings gets its TOC from
the chat model when ``parser_config.toc_extraction`` is on (:mod:`.toc_llm`).

Query time (REFERENCE §10): take the document with the highest summed
similarity among the candidates, score each of its titles against the question
(the chat model when one is configured, rating 5/3/1/0/-1 as the reference does;
else term + vector similarity of question and title), give each chunk of a
title the mean of its titles' scores, keep chunks scoring ≥ 0.3, add the score
to a candidate's similarity or fetch the chunk as a new candidate. That stage is
:func:`ragloom.retrieval.toc.enhance`; this module provides the entries and the title scorers.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ragloom.models.chat import ChatModel

log = logging.getLogger(__name__)

MAX_TITLE_LEN = 200


@dataclass(frozen=True, slots=True)
class TocEntry:
    level: int
    title: str
    ids: tuple[str, ...]


def build_toc(titles: Sequence[tuple[int, str]], chunks: Sequence[tuple[str, str]]) -> list[TocEntry]:
    """Entries from the document's headings ``(level, title)`` in reading order and its chunks
    ``(chunk_id, text)`` in order. A title is anchored at the first chunk (from the previous
    title's on) whose text holds it; its section runs to the chunk of the next title of the
    same or a higher level, that chunk included (a section may end inside it)."""
    anchors: list[tuple[int, str, int]] = []
    pos = 0
    for level, title in titles:
        title = title.strip()[:MAX_TITLE_LEN]
        if not title:
            continue
        j = next((i for i in range(pos, len(chunks)) if title in chunks[i][1]), None)
        if j is None:
            continue
        anchors.append((level, title, j))
        pos = j
    entries = []
    for k, (level, title, j) in enumerate(anchors):
        end = next((a[2] for a in anchors[k + 1:] if a[0] <= level), len(chunks) - 1)
        entries.append(TocEntry(level=level, title=title, ids=tuple(c[0] for c in chunks[j : max(j, end) + 1])))
    return entries


def dump_toc(entries: Sequence[TocEntry]) -> str:
    return json.dumps([{"level": e.level, "title": e.title, "ids": list(e.ids)} for e in entries], ensure_ascii=False)


def load_toc(text: str) -> list[TocEntry]:
    try:
        raw = json.loads(text)
        return [TocEntry(level=int(e["level"]), title=str(e["title"]), ids=tuple(e["ids"])) for e in raw]
    except (ValueError, KeyError, TypeError):
        log.warning("an unreadable TOC row was ignored")
        return []


TitleScorer = Callable[[str, list[str]], list[float]]  # (question, titles) -> scores in [0, 1]


def similarity_title_scorer(embed_query: Callable[[str], np.ndarray], embed_passages: Callable[[list[str]], np.ndarray],
                            term_similarity: Callable[[str, str], float]) -> TitleScorer:
    """Offline title scoring: half term overlap, half cosine rescaled from e5's usual 0.75..0.95 band."""

    def score(question: str, titles: list[str]) -> list[float]:
        q = embed_query(question)
        vecs = embed_passages(titles)
        cos = np.clip((vecs @ q - 0.75) / 0.2, 0.0, 1.0)
        return [0.5 * term_similarity(question, t) + 0.5 * float(c) for t, c in zip(titles, cos, strict=True)]

    return score


_RATING = re.compile(r"^\s*(\d+)\s*[:.)\]-]\s*(-?\d)\b", re.MULTILINE)


def llm_title_scorer(chat: ChatModel) -> TitleScorer:
    """Titles rated by the chat model: 5 (directly answers) / 3 / 1 / 0 / -1 (unrelated), scaled to [0, 1]."""

    def score(question: str, titles: list[str]) -> list[float]:
        listing = "\n".join(f"{i}. {t}" for i, t in enumerate(titles))
        prompt = (f"Question: {question}\n\nSections of a document:\n{listing}\n\n"
                  "Rate how likely each section answers the question: 5 = directly, 3 = probably, 1 = maybe, "
                  "0 = unlikely, -1 = unrelated. Reply with one line per section: `<number>: <rating>`.")
        reply = chat.chat([{"role": "user", "content": prompt}], temperature=0.0, max_tokens=8 * len(titles) + 16)
        ratings = dict.fromkeys(range(len(titles)), 0.0)
        for idx, value in _RATING.findall(reply):
            if int(idx) in ratings:
                ratings[int(idx)] = max(-1.0, min(5.0, float(value))) / 5.0
        return [max(0.0, ratings[i]) for i in range(len(titles))]

    return score
