"""Merging the descriptions of one entity or relation: joined when short, summarised when long.

REFERENCE §9: more than 12 description fragments are summarised by the chat model. Here a merged text
is also summarised when it is longer than ``max_tokens``; without a chat model (or below both limits)
the distinct fragments are joined with :data:`~ragloom.knowledge.graph.model.DESCRIPTION_SEP`.
Summaries come through the :class:`~ragloom.knowledge.graph.llm.LlmRunner`, hence cached.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragloom.knowledge.graph.llm import LlmRunner, LlmUsage
from ragloom.knowledge.graph.model import join_descriptions, unique
from ragloom.knowledge.graph.prompts import SUMMARY_PROMPT
from ragloom.knowledge.graph.text import CountTokens, is_chinese, rough_tokens

_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
MAX_FRAGMENTS = 12
MAX_TOKENS = 500
SUMMARY_WORDS = 150
MAX_INPUT_TOKENS = 3000


@dataclass(frozen=True, slots=True)
class DescriptionPolicy:
    """When a merged description is summarised: more than ``max_fragments`` fragments, or more than
    ``max_tokens`` tokens once joined; the summary asks for at most ``summary_words`` words and is given
    the first fragments that fit in ``max_input_tokens`` (an entity named in every document has more)."""

    max_fragments: int = MAX_FRAGMENTS
    max_tokens: int = MAX_TOKENS
    summary_words: int = SUMMARY_WORDS
    count_tokens: CountTokens = rough_tokens
    max_input_tokens: int = MAX_INPUT_TOKENS

    def is_long(self, fragments: Sequence[str]) -> bool:
        return len(fragments) > self.max_fragments or self.count_tokens(join_descriptions(fragments)) > self.max_tokens


def language_of(text: str) -> str:
    """``"Chinese"`` when at least a third of ``text``'s rough tokens are Chinese characters, else ``"English"``."""
    if not is_chinese(text):
        return "English"
    han = len(_HAN.findall(text))
    return "Chinese" if 3 * han >= rough_tokens(text) else "English"


def merge_descriptions(fragments: Sequence[str], *, name: str, what: str = "entity", runner: LlmRunner | None = None,
                       policy: DescriptionPolicy | None = None, tally: LlmUsage | None = None) -> tuple[str, bool]:
    """The merged description of ``name`` and whether the chat model summarised it."""
    policy = policy or DescriptionPolicy()
    parts = unique([f.strip() for f in fragments])
    if runner is None or not policy.is_long(parts):
        return join_descriptions(parts), False
    shown: list[str] = []
    used = 0
    for p in parts:
        used += policy.count_tokens(p) + 1
        if shown and used > policy.max_input_tokens:
            break
        shown.append(f"- {p}")
    listing = "\n".join(shown)
    prompt = SUMMARY_PROMPT.format(what=what, name=name, language=language_of(listing),
                                   max_words=policy.summary_words, descriptions=listing)
    summary = " ".join(runner.ask_text(prompt, tally=tally).split())
    return (summary, True) if summary else (join_descriptions(parts), False)
