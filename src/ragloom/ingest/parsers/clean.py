"""Text any file can hold, made safe for every later stage (tokenizers, UTF-8 stores, JSON).

:func:`parse_document` passes every parsed document through :func:`clean_document`, so no parser
has to think about it. What :func:`clean_text` does, and nothing else:

* **surrogates**: a high + low surrogate pair left as two code points (a text layer that stores
  UTF-16 units) becomes the one character it encodes; a lone surrogate (U+D800–U+DFFF), which
  cannot be written as UTF-8, becomes U+FFFD (the replacement character), so the place of the
  lost glyph stays visible;
* **control characters**: C0 controls other than tab and line feed, DEL and C1 controls
  (U+0080–U+009F) are removed; carriage returns, vertical tabs, form feeds and NEL become a
  line feed (they separate lines, so removing them would glue words);
* **BOMs and non-characters**: U+FEFF (a byte-order mark left mid-text, e.g. where files were
  concatenated) and U+FFFE/U+FFFF are removed.

Everything else is kept as is: private-use characters (U+E000–U+F8FF and the supplementary planes
15 and 16, used by icon fonts and CJK extensions), unassigned code points, format characters
(zero-width joiners, directional marks). Text is not normalised (NFC/NFKC is the analyzer's job).
"""

from __future__ import annotations

import re

from ragloom.dataflow import Block, ParsedDocument

_SURROGATE = re.compile("[\ud800-\udfff]")
_LINE_BREAKS = re.compile("\r\n?|[\x0b\x0c\x85]")
_REMOVED = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f\ufeff\ufffe\uffff]")
_SUSPECT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufeff\ufffe\uffff]")


def fix_surrogates(text: str) -> str:
    """Surrogate pairs joined into their character, lone surrogates replaced by U+FFFD."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def clean_text(text: str) -> str:
    """``text`` without what no later stage can hold (see the module docstring); never raises."""
    return clean_counted(text)[0]


def clean_counted(text: str) -> tuple[str, int]:
    """:func:`clean_text` and the number of characters it removed (replacements not counted)."""
    if not _SUSPECT.search(text):
        return text, 0  # the common case: nothing to do, no copy
    text = _LINE_BREAKS.sub("\n", fix_surrogates(text))
    return _REMOVED.subn("", text)


def clean_block(block: Block, headings: dict[str, str] | None = None) -> int:
    """Clean a block's text, heading path, table cells, HTML and metadata in place; returns the
    number of characters removed from its text. ``headings`` remembers cleaned headings across the
    blocks of a document: every block under a heading holds it in its path, and it is cleaned once."""
    block.text, removed = clean_counted(block.text)
    if block.heading_path:
        seen = headings if headings is not None else {}
        block.heading_path = tuple(seen[h] if h in seen else seen.setdefault(h, clean_text(h))
                                   for h in block.heading_path)
    if block.html is not None:
        block.html = clean_text(block.html)
    if block.table is not None:
        block.table.header = [clean_text(h) for h in block.table.header]
        block.table.rows = [[clean_text(c) for c in row] for row in block.table.rows]
    if block.meta:
        block.meta = {clean_text(k): clean_text(v) if isinstance(v, str) else v for k, v in block.meta.items()}
    return removed


def clean_document(doc: ParsedDocument) -> int:
    """Clean every block, the title and the metadata of ``doc`` in place; returns the number of
    characters removed from the blocks' text (control characters, stray BOMs)."""
    headings: dict[str, str] = {}
    removed = sum(clean_block(b, headings) for b in doc.blocks)
    if doc.title is not None:
        doc.title = clean_text(doc.title)
    doc.metadata = {k: clean_text(v) if isinstance(v, str) else v for k, v in doc.metadata.items()}
    return removed


def clean_parsed(doc: ParsedDocument) -> None:
    """:func:`clean_document`, the characters removed counted in ``doc.removed["control_characters"]``."""
    dropped = clean_document(doc)
    if dropped:
        doc.removed["control_characters"] = doc.removed.get("control_characters", 0) + dropped
