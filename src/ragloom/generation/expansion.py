"""Widen what a chat question searches, with the chat model (REFERENCE §7 step 2): the question in
other languages (``cross_languages``) and its keywords (``keyword``). Without a chat model both give
nothing, and the question is searched as asked."""

from __future__ import annotations

import re

from ragloom.models.chat import ChatModel

MAX_KEYWORDS = 8
_LIST_MARK = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")

TRANSLATE_PROMPT = """\
Translate the user's question into each of these languages: {languages}.
Write one translation per line, in the order given, with nothing else: no language names, no \
numbering, no quotes. Keep names, numbers and technical terms exact."""

KEYWORDS_PROMPT = """\
Extract the {limit} most important keywords or short phrases a search engine needs to find \
documents answering the user's question. Write them on one line, separated by commas, in the \
language of the question, with nothing else."""


def _lines(text: str) -> list[str]:
    return [s for s in (_LIST_MARK.sub("", line).strip().strip('"') for line in text.splitlines()) if s]


def translate_question(question: str, languages: list[str], chat_model: ChatModel | None) -> list[str]:
    """``question`` in each of ``languages`` (as many lines as the model gave, at most one per
    language); ``[]`` without a chat model or languages. Raises ModelError when the model fails."""
    if chat_model is None or not languages:
        return []
    reply = chat_model.chat([{"role": "system", "content": TRANSLATE_PROMPT.format(languages=", ".join(languages))},
                             {"role": "user", "content": question}], temperature=0.2, max_tokens=512)
    return [t for t in _lines(reply)[: len(languages)] if t != question]


def extract_keywords(question: str, chat_model: ChatModel | None, limit: int = MAX_KEYWORDS) -> list[str]:
    """Up to ``limit`` search keywords of ``question``; ``[]`` without a chat model. Raises
    ModelError when the model fails."""
    if chat_model is None:
        return []
    reply = chat_model.chat([{"role": "system", "content": KEYWORDS_PROMPT.format(limit=limit)},
                             {"role": "user", "content": question}], temperature=0.2, max_tokens=128)
    words = [w.strip().strip('"') for line in _lines(reply) for w in re.split(r"[,，、;；]", line)]
    return list(dict.fromkeys(w for w in words if w))[:limit]
