"""Follow-up questions: rewrite the last turn of a conversation into one standalone question.

Retrieval sees one question; "and what about its leaf nodes?" alone finds nothing. Before
retrieval the question is rewritten (REFERENCE §7, ``refine_multiturn`` / ``full_question``):

* with a chat model — one call with the last :data:`MAX_TURNS` turns, asking for the standalone
  question only. A failing model (:class:`ModelError`) or an empty / odd reply (several lines, far
  longer than the question, citation markers) falls back to the rule;
* without one — an offline rule. A question is a *follow-up* when it leans on the previous turn:
  an anaphoric pronoun (``it``, ``its``, ``they``, ``their``, ``he``, ``she``..., Chinese 它, 其,
  该, 这个...; ``this`` / ``that`` / ``these`` / ``those`` only in a question with at most two
  content terms, where they cannot be relative pronouns), an elliptical opening (``and ...``,
  ``what about ...``, ``how about ...``, Chinese 那/那么/还有/另外...), a Chinese ``X呢`` without a
  question word, or no more than two content terms and no question form (``Leaf nodes?``,
  ``Why?``). The previous turn's subject — the runs of content words of its (itself rewritten)
  question, found with the project's :class:`~ragloom.nlp.Analyzer` (its stop words; ``how`` +
  ``often``/``much``/... counts as the question word) — is carried in: it replaces the
  pronoun when the subject is short (``what about B-tree leaf nodes?``), else it is put in front
  (``B-tree index pages: what about their size?``). A self-contained question is returned
  unchanged, and so is a follow-up that already names every subject term.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragloom.errors import ModelError
from ragloom.generation.answer import strip_think
from ragloom.generation.keyterms import default_analyzer
from ragloom.generation.sentences import strip_markers
from ragloom.models.chat import ChatModel
from ragloom.nlp import has_han
from ragloom.nlp._lexicon import load_lexicon

MAX_TURNS = 3  # the reference condenses the last three user turns
MAX_ANSWER_CHARS = 400  # of each previous answer shown to the model
MAX_SUBJECT_TERMS = 8
MAX_REPLACING_WORDS = 3  # a longer subject is put in front of the question instead of a pronoun

UNCHANGED, MODEL, RULE = "unchanged", "model", "rule"

FOLLOWUP_PROMPT = """\
## Role
You rewrite the last question of a conversation so that it can be understood on its own.

## Task
Read the conversation below. Write the user's LAST question again as one complete, standalone \
question: replace pronouns (it, its, they, this, 它, 其, 该...) and elliptical phrases \
("what about ...", "and ...", "...呢") with the things they refer to in the earlier turns.

## Requirements
- If the last question is already complete, return it unchanged.
- Output only the rewritten question: no answer, no explanation, no quotes, no prefix.
- Keep the language of the last question.

## Examples
User: What is the name of Donald Trump's father?
Assistant: Fred Trump.
User: And his mother?
Output: What is the name of Donald Trump's mother?

User: B树是什么？
Assistant: 一种自平衡的多路搜索树。
User: 它的叶子节点呢？
Output: B树的叶子节点有什么特点？

## Conversation
{conversation}
"""


@dataclass(frozen=True, slots=True)
class Rewrite:
    """The standalone question and how it was obtained: ``unchanged`` (the question as asked),
    ``model`` (rewritten by the chat model) or ``rule`` (the offline rule)."""

    question: str
    method: str


def rewrite_question(history: list[tuple[str, str]], question: str, chat_model: ChatModel | None) -> Rewrite:
    """``question`` made standalone given ``history`` (previous ``(user question, assistant answer)``
    turns, oldest first); see the module docstring. Never raises for a model failure."""
    question = question.strip()
    turns = [(q, a) for q, a in history if q.strip()][-MAX_TURNS:]
    if not turns or not question:
        return Rewrite(question, UNCHANGED)
    if chat_model is not None:
        rewritten = _ask_model(turns, question, chat_model)
        if rewritten is not None:
            return Rewrite(rewritten, UNCHANGED if _same(rewritten, question) else MODEL)
    return rule_rewrite(turns, question)


# --- the chat model ----------------------------------------------------------------------------------

def followup_messages(history: list[tuple[str, str]], question: str) -> list[dict[str, str]]:
    """The one message sent to the chat model (the conversation inside the prompt)."""
    lines: list[str] = []
    for q, a in history[-MAX_TURNS:]:
        lines.append(f"User: {q.strip()}")
        answer = " ".join(strip_markers(a).split())
        if answer:
            cut = answer if len(answer) <= MAX_ANSWER_CHARS else answer[:MAX_ANSWER_CHARS] + "..."
            lines.append(f"Assistant: {cut}")
    lines.append(f"User: {question}")
    lines.append("Output:")
    return [{"role": "user", "content": FOLLOWUP_PROMPT.format(conversation="\n".join(lines))}]


_PREFIX = re.compile(r"^(?:output|rewritten question|standalone question|question|输出|问题)\s*[:：]\s*", re.I)
_QUOTES = "\"'“”‘’「」『』`"
_ODD = re.compile(r"\[ID:\d+\]|```")


def _ask_model(history: list[tuple[str, str]], question: str, chat_model: ChatModel) -> str | None:
    try:
        raw = chat_model.chat(followup_messages(history, question), temperature=0.0, max_tokens=256)
    except ModelError:
        return None
    return _clean_reply(raw, question, history[-1][0])


def _clean_reply(raw: str, question: str, previous: str) -> str | None:
    """The model's standalone question, or None for an empty or odd reply."""
    lines = [ln.strip() for ln in strip_think(raw).splitlines() if ln.strip()]
    if len(lines) == 2 and (_PREFIX.match(lines[1]) or lines[0].endswith((":", "："))):
        lines = lines[1:]  # "Here is the question:\n..." / "...\nOutput: ..."
    if len(lines) != 1:
        return None
    text = _PREFIX.sub("", lines[0]).strip().strip(_QUOTES).strip()
    if not text or _ODD.search(text) or len(text) > 2 * (len(question) + len(previous)) + 40:
        return None
    return text


def _same(a: str, b: str) -> bool:
    return " ".join(a.lower().split()).rstrip("?？") == " ".join(b.lower().split()).rstrip("?？")


# --- the offline rule --------------------------------------------------------------------------------

# Words that make a question lean on the previous turn (not stop-word lists: each one says what
# it refers to). Personal / possessive pronouns always; demonstratives only in short questions.
_PRONOUN_TEXT = "it its they them their theirs he him his she her hers"
_PRONOUNS = frozenset(_PRONOUN_TEXT.split())
_DEMONSTRATIVES = frozenset({"this", "that", "these", "those"})
_ZH_PRONOUN_TEXT = "它 它们 其 该 此 这个 那个 这些 那些 他 她 他们 她们 这 那"
_ZH_PRONOUNS = frozenset(_ZH_PRONOUN_TEXT.split())
_ZH_REPLACEABLE_TEXT = "它 它们 其 他 她 他们 她们 那"  # the others are determiners (该型号)
_ZH_REPLACEABLE = frozenset(_ZH_REPLACEABLE_TEXT.split())
_EN_OPENINGS = re.compile(r"^\s*(?:and|also|so|but|then|ok(?:ay)?|what about|how about|what else|"
                          r"same (?:for|with)|and what about|and how about)\b[\s,]*", re.I)
_ZH_OPENINGS = re.compile(r"^\s*(?:那么|那|还有|另外|以及|和|而|至于)")
_ZH_QUESTION_WORDS = re.compile(r"什么|为什么|为何|怎么|怎样|如何|哪|多少|几|谁|是否|吗")
# "how often", "how much": the word after "how" belongs to the question form, not the subject.
_HOW = frozenset({"how"})
_CONNECTOR_TEXT = "and or of for in on to 's the a an 的 和 与 及 之"
_CONNECTORS = frozenset(_CONNECTOR_TEXT.split())
_LEADING_CONJUNCTION = re.compile(r"^\s*(?:and|also|so|but|then)\b[\s,]*", re.I)

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_W = rf"[^\W_{_CJK}]"  # a letter or digit that is not Chinese
_HAN_RUN = re.compile(f"[{_CJK}]+")
_TOKEN = re.compile(rf"[{_CJK}]+|{_W}+(?:[-_/'.]{_W}+)*(?:\+\+|#)?")
# jieba part-of-speech tags that do not name a thing: verbs, numerals, adverbs, pronouns,
# prepositions, conjunctions, particles, measure words, interjections, directions, times
_NOT_A_NAME = re.compile(r"^(?:v(?!n)|m|d|r|p|c|u|y|q|e|o|f|t)")


@dataclass(frozen=True, slots=True)
class _Token:
    text: str  # as written
    term: str  # as analysed (lower case, stemmed, simplified)
    start: int
    end: int
    han: bool

    @property
    def lower(self) -> str:
        return self.text.lower()


def _tokens(text: str) -> list[_Token]:
    """Surface tokens with their analysed form: Latin words, Chinese words (jieba)."""
    analyzer = default_analyzer()
    out: list[_Token] = []
    for m in _TOKEN.finditer(text):
        if _HAN_RUN.fullmatch(m.group(0)):
            pos = m.start()
            for word in analyzer.tokenize(m.group(0)):
                at = text.find(word, pos, m.end())
                if at < 0:  # the analyser changed the characters (traditional -> simplified)
                    at, word = pos, text[pos : pos + len(word)]
                out.append(_Token(word, analyzer.normalize(word), at, at + len(word), True))
                pos = at + len(word)
        else:
            terms = analyzer.tokenize(m.group(0))
            out.append(_Token(m.group(0), terms[0] if terms else m.group(0).lower(), m.start(), m.end(), False))
    return out


def _is_content(tok: _Token) -> bool:
    return not default_analyzer().is_stop_word(tok.term) and tok.lower not in _PRONOUNS and tok.text not in _ZH_PRONOUNS


def _content_terms(tokens: list[_Token]) -> list[_Token]:
    out: list[_Token] = []
    for i, tok in enumerate(tokens):
        if i > 0 and tokens[i - 1].lower in _HOW:
            continue
        if _is_content(tok):
            out.append(tok)
    return out


def _names_a_thing(tok: _Token, prev: _Token | None, text: str) -> bool:
    """A Chinese word that can be part of a subject: not a verb, numeral, adverb... by jieba's
    dictionary, and not a lone character (those are mostly verbs and particles) unless it is glued
    to a Latin word before it (``B树``). Latin words always can (no tagger for English)."""
    if not tok.han:
        return True
    glued = prev is not None and not prev.han and prev.end == tok.start
    if glued:
        return True
    tag = load_lexicon().tags.get(tok.term)
    return len(tok.text) > 1 and not (tag and _NOT_A_NAME.match(tag))


def _subject(text: str) -> tuple[list[str], set[str]]:
    """The subject of a question: its runs of content words (joined by connectors such as ``of``,
    ``and``, 的) as written, and their analysed terms. Chinese runs keep only words that name things."""
    tokens = _tokens(text)
    content = {id(t) for t in _content_terms(tokens)}
    named = {i for i, t in enumerate(tokens)
             if id(t) in content and _names_a_thing(t, tokens[i - 1] if i else None, text)}
    if not named:
        named = {i for i, t in enumerate(tokens) if id(t) in content}
    runs: list[tuple[int, int]] = []  # token index ranges
    i = 0
    while i < len(tokens):
        if i not in named:
            i += 1
            continue
        j = i
        while True:
            k = j + 1
            while k < len(tokens) and tokens[k].lower in _CONNECTORS and k not in named:
                k += 1
            if k < len(tokens) and k in named and _adjacent(text, tokens[j : k + 1]):
                j = k
            else:
                break
        runs.append((i, j))
        i = j + 1
    pieces: list[str] = []
    terms: set[str] = set()
    for a, b in runs:
        if len(terms) >= MAX_SUBJECT_TERMS:
            break
        pieces.append(text[tokens[a].start : tokens[b].end])
        terms.update(t.term for t in tokens[a : b + 1] if id(t) in content)
    return pieces, terms


def _adjacent(text: str, toks: list[_Token]) -> bool:
    """Consecutive tokens separated by nothing but spaces (no punctuation between them)."""
    return all(not text[a.end : b.start].strip(" -") for a, b in zip(toks, toks[1:], strict=False))


@dataclass(frozen=True, slots=True)
class _Reference:
    """Why a question is a follow-up: the pronoun token to replace (if any)."""

    pronoun: _Token | None


def _followup(question: str, tokens: list[_Token]) -> _Reference | None:
    """The follow-up signal of ``question``, or None for a self-contained question."""
    content = _content_terms(tokens)
    short = len(content) <= 2
    for tok in tokens:
        if tok.lower in _PRONOUNS or (tok.han and tok.text in _ZH_PRONOUNS and tok.text not in "这那"):
            return _Reference(tok)
        if short and (tok.lower in _DEMONSTRATIVES or tok.text in ("这", "那")):
            return _Reference(tok)
    if has_han(question):
        bare = question.strip().rstrip("?？!！。 ")
        if bare.endswith("呢") and not _ZH_QUESTION_WORDS.search(bare):
            return _Reference(None)
        if _ZH_OPENINGS.match(question):
            return _Reference(None)
        if len(_HAN_RUN.findall(bare)) == 1 and len(bare) <= 4 and not _ZH_QUESTION_WORDS.search(bare):
            return _Reference(None)
        return _Reference(None) if not content else None
    if _EN_OPENINGS.match(question):
        return _Reference(None)
    if not content:
        return _Reference(None)  # "Why?", "How so?", "Which one?"
    question_form = default_analyzer().is_stop_word(tokens[0].term)  # "What is X?", "Does X ...?"
    if short and not question_form and len(tokens) <= 4:
        return _Reference(None)  # "Leaf nodes?", "Pricing in Europe?"
    return None


def rule_rewrite(history: list[tuple[str, str]], question: str) -> Rewrite:
    """The offline rule alone (see the module docstring)."""
    question = question.strip()
    turns = [(q, a) for q, a in history if q.strip()][-MAX_TURNS:]
    if not turns or not question:
        return Rewrite(question, UNCHANGED)
    tokens = _tokens(question)
    ref = _followup(question, tokens)
    if ref is None:
        return Rewrite(question, UNCHANGED)
    previous = rule_rewrite(turns[:-1], turns[-1][0]).question
    subject, subject_terms = _subject(previous)
    if not subject or subject_terms <= {t.term for t in tokens}:
        return Rewrite(question, UNCHANGED)
    return Rewrite(_carry(question, subject, ref), RULE)


def _carry(question: str, runs: list[str], ref: _Reference) -> str:
    """``question`` with the subject (its ``runs``) in place of its pronoun, or in front of it."""
    pronoun = ref.pronoun
    chinese = has_han(question)
    subject = " ".join(runs)
    if pronoun is not None and len(runs) == 1 and _replaceable(question, subject, pronoun, chinese):
        text = question[: pronoun.start] + subject + question[pronoun.end :]
        return text if chinese else _LEADING_CONJUNCTION.sub("", text, count=1)
    if chinese:
        return f"{subject}：{question}"
    return f"{subject}: {_LEADING_CONJUNCTION.sub('', question, count=1)}"


def _replaceable(question: str, subject: str, pronoun: _Token, chinese: bool) -> bool:
    """Whether ``subject`` (one run) can stand where ``pronoun`` is: a short subject, and a pronoun
    (not a determiner such as "this feature", 该型号)."""
    if chinese:
        return pronoun.han and pronoun.text in _ZH_REPLACEABLE and len(subject) <= 12
    if len(subject.split()) > MAX_REPLACING_WORDS or pronoun.han:
        return False
    if pronoun.lower in _DEMONSTRATIVES:  # "configure this?" yes, "this feature" no
        rest = question[pronoun.end :].lstrip()
        return not rest or not rest[0].isalnum()
    return True
