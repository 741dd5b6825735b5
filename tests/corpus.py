"""Small generated test corpora with known answers (no files from outside the test)."""

from __future__ import annotations

import random
from pathlib import Path

from tests.ingest.docgen import make_docx, make_pdf, paragraph

PAGE2_FACT = "The Orion pump must be serviced every 450 operating hours using synthetic grease type K7."
PAGE2_QUESTION = "How often must the Orion pump be serviced?"
DOCX_FACT = "Employees may carry over at most twelve vacation days into the next calendar year."
DOCX_QUESTION = "How many vacation days can be carried over into the next year?"


def write_manual_pdf(path: Path) -> None:
    """A 3-page PDF, each page fuller than half a chunk; the servicing interval is on page 2 only."""
    rng = random.Random(2)

    def filler(n: int) -> list[str]:
        return [paragraph(rng, 5) for _ in range(n)]

    make_pdf(path, [
        ["# Orion Pump Manual",
         "This manual describes the installation of the Orion pump in industrial cooling circuits.",
         *filler(3),
         "Unpack the unit carefully and check the delivery note against the parts list before mounting."],
        ["## Maintenance", *filler(2), PAGE2_FACT,
         "Always disconnect the power supply before opening the housing of the pump.", *filler(2)],
        ["## Warranty",
         "The warranty covers manufacturing defects for a period of two years from the date of purchase.",
         *filler(3),
         "Claims must be filed through an authorised dealer with the original invoice."],
    ])


def write_policy_docx(path: Path) -> None:
    make_docx(path, [
        ("title", "Human Resources Policy"),
        ("h1", "Leave"),
        ("p", DOCX_FACT),
        ("p", "Sick leave requires a medical certificate after the third consecutive day of absence."),
        ("h1", "Equipment"),
        ("table", [["Item", "Owner"], ["Laptop", "IT department"], ["Badge", "Security office"]]),
    ])
