"""Chunk enrichment by the chat model: keywords and questions per chunk, metadata per document.

REFERENCE §11 (``auto_keywords``, ``auto_questions``, metadata). Enabled per knowledge base or
document by ``parser_config``: ``auto_keywords`` (N keywords per chunk, indexed as the chunk's
important keywords, which the full-text query boosts), ``auto_questions`` (N questions the chunk
answers, indexed in the question field so a question phrased like them finds the chunk, as the
``qa`` method's) and ``metadata_fields`` (``{name: what it is}``: one call per document reads its
beginning and fills those metadata fields).

The model given is called as it is: the ingestion passes the workspace's model behind the LLM cache
(:mod:`ragloom.service.builds.llm_cache`), so a re-parse, a re-index or a second knowledge base holding the
same text does not pay twice. Calls run :data:`CONCURRENCY` at a time; ``checkpoint`` is called
before each (a cancelled task stops). A reply that cannot be read gives nothing (counted in
:attr:`Enricher.unreadable`); a model that cannot be reached raises
:class:`~ragloom.errors.ModelError` to the caller.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ragloom.models.chat import ChatModel

log = logging.getLogger(__name__)

CONCURRENCY = 4  # chat calls at once per document (REFERENCE: 10 per worker)
MAX_CHUNK_CHARS = 6000  # of a chunk's text shown to the model
METADATA_CHARS = 8000  # of a document's beginning shown for metadata
MAX_METADATA_FIELDS = 20

KEYWORDS_PROMPT = (
    "Read the text below and give the {n} keywords or short key phrases that best say what it is about "
    "and that a person searching for it would type. Use the text's own language. Answer with the keywords "
    "only, separated by commas, nothing else.\n\nText:\n{text}"
)
QUESTIONS_PROMPT = (
    "Read the text below and write {n} different questions that it answers, each on its own line, in the "
    "text's own language. Each question must make sense without the text (name the subject), and be "
    "answerable from the text alone. Answer with the questions only.\n\nText:\n{text}"
)
METADATA_PROMPT = (
    "Read the beginning of a document below and fill in these fields:\n{fields}\n"
    "Answer with one JSON object whose keys are exactly the field names; a value is a string, a number "
    "or a list of strings, and null when the document does not say.\n\nDocument:\n{text}"
)


@dataclass(frozen=True)
class EnrichSettings:
    keywords: int = 0
    questions: int = 0
    metadata_fields: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, parser_config: Mapping[str, Any]) -> EnrichSettings:
        return cls(keywords=int(parser_config.get("auto_keywords") or 0),
                   questions=int(parser_config.get("auto_questions") or 0),
                   metadata_fields=dict(parser_config.get("metadata_fields") or {}))

    @property
    def wanted(self) -> bool:
        return bool(self.keywords or self.questions or self.metadata_fields)


class Enricher:
    """Asks ``model`` for keywords, questions and metadata, and reads its replies."""

    def __init__(self, model: ChatModel, *, checkpoint: Callable[[], None] = lambda: None,
                 concurrency: int = CONCURRENCY) -> None:
        self.model = model
        self.checkpoint = checkpoint
        self.concurrency = max(1, concurrency)
        self.unreadable = 0  # replies that gave nothing usable
        self._lock = threading.Lock()

    def ask(self, prompt: str) -> str:
        self.checkpoint()
        return str(self.model.chat([{"role": "user", "content": prompt}], temperature=0.1))

    def _unreadable(self) -> None:
        with self._lock:
            self.unreadable += 1

    def keywords(self, text: str, n: int) -> list[str]:
        reply = self.ask(KEYWORDS_PROMPT.format(n=n, text=text[:MAX_CHUNK_CHARS]))
        found = parse_keywords(reply, n)
        if not found:
            self._unreadable()
        return found

    def questions(self, text: str, n: int) -> list[str]:
        reply = self.ask(QUESTIONS_PROMPT.format(n=n, text=text[:MAX_CHUNK_CHARS]))
        found = parse_questions(reply, n)
        if not found:
            self._unreadable()
        return found

    def chunks(self, texts: Sequence[str], settings: EnrichSettings,
               progress: Callable[[int, int], None] = lambda done, total: None) -> list[tuple[list[str], list[str]]]:
        """(keywords, questions) of each text, in order."""
        def one(text: str) -> tuple[list[str], list[str]]:
            kws = self.keywords(text, settings.keywords) if settings.keywords and text.strip() else []
            qs = self.questions(text, settings.questions) if settings.questions and text.strip() else []
            return kws, qs

        out: list[tuple[list[str], list[str]]] = []
        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="enrich") as pool:
            for i, result in enumerate(pool.map(one, texts)):
                out.append(result)
                progress(i + 1, len(texts))
        return out

    def metadata(self, text: str, fields: Mapping[str, str]) -> dict[str, Any]:
        """The fields the document's beginning gives (only the asked names; empty values dropped)."""
        listing = "\n".join(f"- {name}: {what}" for name, what in fields.items())
        reply = self.ask(METADATA_PROMPT.format(fields=listing, text=text[:METADATA_CHARS]))
        found = parse_metadata(reply, fields)
        if not found:
            self._unreadable()
        return found


_LEAD = re.compile(r"^\s*(?:[-*•]|\d+[.)、]|[（(]?\d+[)）]|Q\d*[:：.]|问题?\d*[:：.]?)\s*", re.IGNORECASE)


def _clean(reply: str) -> str:
    text = reply.strip()
    if text.startswith("```"):
        text = re.sub(r"^```\w*\s*|\s*```$", "", text)
    return text


def parse_keywords(reply: str, n: int) -> list[str]:
    """Keywords of a reply: split at commas (either script), semicolons or lines; list markers,
    quotes and a leading "Keywords:" dropped; duplicates (case-insensitive) once; at most ``n``."""
    text = re.sub(r"^\s*(keywords?|关键词)\s*[:：]\s*", "", _clean(reply), flags=re.IGNORECASE)
    out: list[str] = []
    seen: set[str] = set()
    for part in re.split(r"[,，;；、\n]", text):
        word = _LEAD.sub("", part).strip().strip("\"'“”‘’`.。").strip()
        if not word or len(word) > 80 or word.lower() in seen:
            continue
        seen.add(word.lower())
        out.append(word)
    return out[:n]


def parse_questions(reply: str, n: int) -> list[str]:
    """Questions of a reply: one per line, list markers dropped, lines without a question's shape
    (a question mark, or at least three words) skipped; at most ``n``."""
    out: list[str] = []
    for line in _clean(reply).splitlines():
        q = _LEAD.sub("", line).strip().strip("\"“”")
        if not q or q.endswith(":") or q.endswith("："):
            continue
        shaped = "?" in q or "？" in q or len(q.split()) >= 3 or (len(q) >= 6 and not q.isascii())
        if shaped and q not in out:
            out.append(q)
    return out[:n]


def parse_metadata(reply: str, fields: Mapping[str, str]) -> dict[str, Any]:
    """The asked fields of a JSON object reply (code fences and prose around it ignored)."""
    text = _clean(reply)
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return {}
    try:
        data = json.loads(text[start:end + 1])
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    out: dict[str, Any] = {}
    for name in fields:
        value = data.get(name)
        if isinstance(value, str) and value.strip():
            out[name] = value.strip()
        elif isinstance(value, bool | int | float):
            out[name] = value
        elif isinstance(value, list):
            items = [str(v).strip() for v in value if isinstance(v, str | int | float) and str(v).strip()]
            if items:
                out[name] = items
    return out
