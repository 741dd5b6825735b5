"""Sentence splitting for answers and evidence, and ``[ID:n]`` marker handling.

:func:`split_sentences` returns pieces whose concatenation is exactly the
input, so a caller can edit one piece and join them back. Fenced code blocks
(```` ``` ````) stay whole; an unclosed fence runs to the end of the text.
Citation markers written just after a sentence's final punctuation stay with
that sentence.
"""

from __future__ import annotations

import re

MARKER = re.compile(r"\[ID:(\d+)\]")
_MARKER_WITH_SPACE = re.compile(r"[ \t]*\[ID:(\d+)\]")
_CODE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_BOUNDARY = re.compile(r"[.!?;](?=\s|\Z)|[。！？；!?]|\n")
_TRAILING_MARKERS = re.compile(r"(?:[ \t]*\[ID:\d+\])+")
_TRAILING_SPACE = re.compile(r"\s+")
_LIST_ENUMERATOR = re.compile(r"(?:^|\n)[ \t]*(?:\d{1,3}|[a-zA-Z])\Z")
_ABBREVIATION_TEXT = "e.g i.e etc vs mr mrs ms dr prof fig no st inc ltd jr sr approx cf al"
_ABBREVIATIONS = frozenset(_ABBREVIATION_TEXT.split())
_END_PUNCT = re.compile(r"[.!?;:。！？；：]+\Z")


def is_code(piece: str) -> bool:
    return piece.lstrip().startswith("```")


def cited_ids(piece: str) -> list[int]:
    """The numbers of the ``[ID:n]`` markers in ``piece``, in order (repeats kept)."""
    return [int(n) for n in MARKER.findall(piece)]


def strip_markers(text: str) -> str:
    """``text`` without its ``[ID:n]`` markers (and the spaces before them)."""
    return _MARKER_WITH_SPACE.sub("", text)


def sentence_text(piece: str) -> str:
    """The plain sentence: markers removed, whitespace trimmed."""
    return strip_markers(piece).strip()


def _is_false_boundary(seg: str, start: int) -> bool:
    """A period after a list enumerator ("1.") or a common abbreviation is not an end, nor a semicolon at
    a bracket's edge ("舜天（；）据……": what the brackets held was removed)."""
    if seg[start] in ";；":
        return seg[start - 1:start] in ("（", "(") or seg[start + 1:start + 2] in ("）", ")")
    if seg[start] != ".":
        return False
    head = seg[:start]
    if _LIST_ENUMERATOR.search(head):
        return True
    word = re.search(r"([\w.]+)\Z", head)
    return word is not None and word.group(1).lower() in _ABBREVIATIONS


def _split_prose(seg: str) -> list[str]:
    pieces: list[str] = []
    pos = 0
    for m in _BOUNDARY.finditer(seg):
        if m.start() < pos or _is_false_boundary(seg, m.start()):
            continue
        end = m.end()
        markers = _TRAILING_MARKERS.match(seg, end)
        if markers:
            end = markers.end()
        space = _TRAILING_SPACE.match(seg, end)
        if space:
            end = space.end()
        pieces.append(seg[pos:end])
        pos = end
    if pos < len(seg):
        pieces.append(seg[pos:])
    return pieces


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentence pieces; ``"".join(result) == text``.

    Ends are CJK sentence marks, newlines, and ``. ! ? ;`` followed by
    whitespace (not after a list number or a common abbreviation). A piece with
    no words of its own (only markers/space) is merged into the one before it.
    """
    raw: list[str] = []
    pos = 0
    for m in _CODE.finditer(text):
        if m.start() > pos:
            raw.extend(_split_prose(text[pos : m.start()]))
        raw.append(m.group(0))
        pos = m.end()
    if pos < len(text):
        raw.extend(_split_prose(text[pos:]))
    pieces: list[str] = []
    for piece in raw:
        if pieces and not sentence_text(piece):
            pieces[-1] += piece
        else:
            pieces.append(piece)
    return pieces


def attach_markers(piece: str, ids: list[int]) -> str:
    """``piece`` with ``[ID:n]`` markers added at the sentence end, before its punctuation.

    Code blocks get the markers on a new line after the closing fence.
    """
    if not ids:
        return piece
    markers = "".join(f"[ID:{i}]" for i in ids)
    core = piece.rstrip()
    tail = piece[len(core) :]
    if MARKER.search(core[-12:]) and core.endswith("]"):
        return f"{core}{markers}{tail}"
    if is_code(core):
        return f"{core}\n{markers}{tail}"
    punct = _END_PUNCT.search(core)
    head, end = (core[: punct.start()], punct.group(0)) if punct else (core, "")
    head = head.rstrip()
    sep = "" if head.endswith("]") and MARKER.search(head[-12:]) else " "
    return f"{head}{sep}{markers}{end}{tail}"
