"""Generators of real test documents (PDF, DOCX, HTML, Markdown, text).

Reused by end-to-end tests. Everything is written with fpdf2 / python-docx
inside the test; nothing is read from outside the test's temporary directory.
"""

from __future__ import annotations

import random
from pathlib import Path

import docx
from fpdf import FPDF

WORDS = [
    "river", "stone", "market", "ledger", "signal", "harbor", "copper", "lantern", "orchard", "meadow",
    "quarry", "beacon", "valley", "archive", "engine", "window", "garden", "silver", "thunder",
    "pepper", "canvas", "marble", "falcon", "timber", "compass", "glacier", "island", "violet",
    "saddle", "basket", "candle", "mirror", "ribbon", "summit"
]


def sentence(rng: random.Random, n_words: int | None = None) -> str:
    """A random English-looking sentence ending with a period."""
    n = n_words or rng.randint(5, 18)
    words = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def paragraph(rng: random.Random, n_sentences: int | None = None) -> str:
    return " ".join(sentence(rng) for _ in range(n_sentences or rng.randint(1, 6)))


def make_pdf(path: str | Path, pages: list[list[str]], *, encrypt_password: str | None = None) -> None:
    """Write a real text PDF (A4): one inner list of paragraphs per page.

    A paragraph starting with ``"# "`` is set as a level-1 heading (20 pt bold),
    ``"## "`` as level 2 (15 pt bold); others are 11 pt body text that wraps.
    With ``encrypt_password`` the file needs that password to open (RC4).
    """
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.set_margins(20, 20, 20)
    if encrypt_password:
        pdf.set_encryption(owner_password=encrypt_password + "-owner", user_password=encrypt_password)
    for paragraphs in pages:
        pdf.add_page()
        for text in paragraphs:
            if text.startswith("## "):
                pdf.set_font("Helvetica", "B", 15)
                pdf.multi_cell(0, 9, text[3:], new_x="LMARGIN", new_y="NEXT")
            elif text.startswith("# "):
                pdf.set_font("Helvetica", "B", 20)
                pdf.multi_cell(0, 11, text[2:], new_x="LMARGIN", new_y="NEXT")
            else:
                pdf.set_font("Helvetica", "", 11)
                pdf.multi_cell(0, 5.5, text, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(4)
    pdf.output(str(path))


def make_image_only_pdf(path: str | Path, n_pages: int = 1) -> None:
    """A PDF whose pages hold only vector drawings: no text layer at all."""
    pdf = FPDF(format="A4")
    for _ in range(n_pages):
        pdf.add_page()
        pdf.rect(30, 30, 100, 60, style="F")
    pdf.output(str(path))


def make_docx(
    path: str | Path,
    items: list[tuple[str, object]],
) -> None:
    """Write a DOCX from ``(kind, value)`` items in body order.

    Kinds: ``"title"`` (str), ``"h1"``..``"h6"`` (str), ``"p"`` (str),
    ``"bullet"`` (str, style List Bullet), ``"table"`` (list of rows, first row = header).
    """
    document = docx.Document()
    for kind, value in items:
        if kind == "title":
            document.add_heading(str(value), level=0)
        elif kind.startswith("h") and kind[1:].isdigit():
            document.add_heading(str(value), level=int(kind[1:]))
        elif kind == "p":
            document.add_paragraph(str(value))
        elif kind == "bullet":
            document.add_paragraph(str(value), style="List Bullet")
        elif kind == "table":
            rows = list(value)  # type: ignore[call-overload]
            table = document.add_table(rows=len(rows), cols=len(rows[0]))
            for r, row in enumerate(rows):
                for c, cell in enumerate(row):
                    table.cell(r, c).text = str(cell)
        else:
            raise ValueError(f"unknown docx item kind {kind!r}")
    document.save(str(path))


def make_html(path: str | Path, body: str, *, title: str = "Test page", charset: str | None = "utf-8") -> None:
    """Write an HTML page with ``body`` inside ``<body>`` (and a meta charset if given)."""
    meta = f'<meta charset="{charset}">' if charset else ""
    html = f"<!DOCTYPE html><html><head>{meta}<title>{title}</title></head><body>{body}</body></html>"
    Path(path).write_bytes(html.encode(charset or "utf-8"))


def make_text(path: str | Path, text: str, *, encoding: str = "utf-8") -> None:
    """Write ``text`` in ``encoding`` (e.g. ``gb18030``, ``utf-16`` adds a BOM)."""
    Path(path).write_bytes(text.encode(encoding))
