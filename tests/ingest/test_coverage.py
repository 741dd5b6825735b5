"""Coverage (issue 11): every word of a parsed document reaches a chunk, for every parser and every
document chunk method, on files generated here; deliberate removals are counted; the parse preview
(``ragloom parse``) and a published document report it."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from ragloom.dataflow import Block, Chunk, Table
from ragloom.ingest.chunkers import ChunkerConfig, chunk_blocks
from ragloom.ingest.coverage import Coverage, measure, words
from ragloom.ingest.parsers import parse_document
from tests.ingest.chunk_docs import chinese_law, count
from tests.ingest.docgen import (
    make_docx_rich,
    make_eml,
    make_epub,
    make_html,
    make_pdf,
    make_pptx,
    make_text,
    make_xlsx,
    paragraph,
    sentence,
)

RNG = random.Random(11)
PARAS = [paragraph(RNG, 4) for _ in range(6)]
ROWS = [["part", "torque", "interval"]] + [[f"P-{i}", f"{10 + i} Nm", f"{100 * i} h"] for i in range(1, 9)]
DOCUMENT_METHODS = ["naive", "title", "book", "laws", "manual", "paper", "presentation", "one", "email"]


def _pdf(path: Path) -> None:
    make_pdf(path, [[PARAS[0], PARAS[1]], [PARAS[2], PARAS[3]], [PARAS[4], PARAS[5]]])


def _docx(path: Path) -> None:
    make_docx_rich(path, [("h1", "Maintenance"), ("p", PARAS[0]), ("bullet", sentence(RNG, 8)),
                          ("bullet", sentence(RNG, 8)), ("table", ROWS), ("h2", "Schedule"), ("p", PARAS[1]),
                          ("number", sentence(RNG, 6)), ("caption", "Table 1: torque by part"), ("p", PARAS[2])])


def _pptx(path: Path) -> None:
    make_pptx(path, [{"title": "Overview", "bullets": [sentence(RNG, 7), (sentence(RNG, 5), 1)],
                      "notes": PARAS[0]},
                     {"title": "Torques", "table": ROWS}, {"title": "Closing", "boxes": [(PARAS[1], 60, 200)]}])


def _xlsx(path: Path) -> None:
    make_xlsx(path, {"Torques": ROWS, "Notes": [["note"], [sentence(RNG, 9)], [sentence(RNG, 9)]]})


def _html(path: Path) -> None:
    make_html(path, f"<h1>Maintenance</h1><p>{PARAS[0]}</p><ul><li>{sentence(RNG, 6)}</li><li>{sentence(RNG, 6)}"
                    f"</li></ul><h2>Schedule</h2><p>{PARAS[1]}</p><table>"
                    + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in ROWS)
                    + f"</table><p>{PARAS[2]}</p>")


def _markdown(path: Path) -> None:
    table = "\n".join("| " + " | ".join(r) + " |" for r in ROWS[:1]) + "\n|---|---|---|\n" + "\n".join(
        "| " + " | ".join(r) + " |" for r in ROWS[1:])
    make_text(path, f"# Maintenance\n\n{PARAS[0]}\n\n- {sentence(RNG, 6)}\n- {sentence(RNG, 6)}\n\n## Schedule\n\n"
                    f"{PARAS[1]}\n\n{table}\n\n```\nrun --check\n```\n\n{PARAS[2]}\n")


def _text(path: Path) -> None:
    make_text(path, "\n\n".join(PARAS))


def _chinese_text(path: Path) -> None:
    make_text(path, "\n".join(b.text for b in chinese_law(3)[0]))


def _eml(path: Path) -> None:
    make_eml(path, subject="Pump schedule", sender="a@example.com", to="b@example.com", body="\n\n".join(PARAS[:3]),
             attachments=[("notes.txt", PARAS[3].encode(), "text/plain")])


def _epub(path: Path) -> None:
    make_epub(path, "Manual", [("one.xhtml", f"<h1>One</h1><p>{PARAS[0]}</p><p>{PARAS[1]}</p>"),
                               ("two.xhtml", f"<h1>Two</h1><p>{PARAS[2]}</p>")])


def _csv(path: Path) -> None:
    make_text(path, "\n".join(",".join(r) for r in ROWS) + "\n")


def _json(path: Path) -> None:
    path.write_text(json.dumps({"pump": {"name": "Orion", "notes": PARAS[:2], "parts": ROWS}}), encoding="utf-8")


FILES: dict[str, Callable[[Path], None]] = {
    "manual.pdf": _pdf, "manual.docx": _docx, "deck.pptx": _pptx, "sheet.xlsx": _xlsx, "page.html": _html,
    "readme.md": _markdown, "notes.txt": _text, "law.txt": _chinese_text, "mail.eml": _eml, "book.epub": _epub,
    "parts.csv": _csv, "pump.json": _json,
}


def _chunk(blocks: list[Block], method: str) -> list[Chunk]:
    return chunk_blocks(blocks, ChunkerConfig.parse({"method": method, "chunk_token_num": 96}), count)


@pytest.mark.parametrize("name", sorted(FILES))
def test_every_word_of_every_format_reaches_a_chunk_with_every_document_method(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    FILES[name](path)
    parsed = parse_document(path.read_bytes(), name)
    assert sum(words(b.text).total() for b in parsed.blocks) > 20
    for method in DOCUMENT_METHODS:
        kept = measure(parsed.blocks, _chunk(parsed.blocks, method), parsed.removed, method=method)
        assert kept.words > 0 and kept.kept == kept.words, (method, kept.missing)


def test_the_table_of_contents_and_text_outside_tables_are_counted_as_removed() -> None:
    blocks, _ = chinese_law(3)
    for method in ("book", "laws"):
        kept = measure(blocks, _chunk(blocks, method), method=method)
        assert kept.ratio == 1.0 and kept.removed["table_of_contents"] > 0
        assert measure(blocks, _chunk(blocks, method)).ratio < 1.0  # without the method: the TOC is lost
    rows = [Block(text=PARAS[0]), Block(text="\n".join("; ".join(r) for r in ROWS), kind="table",
                                        table=Table(header=ROWS[0], rows=ROWS[1:]))]
    kept = measure(rows, _chunk(rows, "table"), method="table")
    assert kept.ratio == 1.0 and kept.removed == {"outside_tables": len(PARAS[0])}


def test_a_lost_word_is_counted_and_named() -> None:
    blocks = [Block(text="The Orion pump runs 450 hours."), Block(text="Grease type K7 only.")]
    chunks = [Chunk(text="The Orion pump runs 450 hours.", order=0)]
    kept = measure(blocks, chunks, {"page_number": 2})
    assert (kept.words, kept.kept, kept.removed) == (10, 6, {"page_number": 2})
    assert set(kept.missing) == {"grease", "type", "k7", "only"}
    both = kept + Coverage(4, 4, {"page_number": 1, "running_header": 9})
    assert both.as_dict() == {"words": 14, "kept": 10, "ratio": round(10 / 14, 4),
                              "removed": {"page_number": 3, "running_header": 9}, "missing": list(kept.missing)}
    assert Coverage.from_dict(both.as_dict()) == both
    assert words("中文ＡＢＣ abc") == {"中": 1, "文": 1, "abc": 2}  # NFKC, case-folded, CJK one by one
    assert words("14负责 K7型") == {"14": 1, "负": 1, "责": 1, "k7": 1, "型": 1}  # a CJK run ends a Latin word


def test_a_published_document_and_a_parse_preview_report_their_coverage(tmp_path: Path) -> None:
    from ragloom.config import Settings
    from ragloom.service.documents.chunks import preview_file
    from ragloom.worker import run_one
    from tests.live import app_client

    path = tmp_path / "manual.docx"
    _docx(path)
    preview = preview_file(path.read_bytes(), path.name, method="naive", parser_config={})
    assert preview.coverage.ratio == 1.0 and preview.coverage.words > 50 and preview.coverage.missing == []
    settings = Settings(home=tmp_path / "home", workers=0, rate_limit_per_minute=0, _env_file=None)
    with app_client(settings) as (client, ctx, headers):
        kb = client.post("/api/v1/datasets", headers=headers, json={"name": "manuals"}).json()
        up = client.post(f"/api/v1/datasets/{kb['id']}/documents", headers=headers,
                         files=[("file", (path.name, path.read_bytes(), "application/octet-stream"))])
        assert up.status_code == 201, up.text
        assert up.json()["documents"][0]["coverage"] is None  # nothing published yet
        while run_one(ctx, "test"):
            pass
        (doc,) = client.get(f"/api/v1/datasets/{kb['id']}/documents", headers=headers).json()["documents"]
    assert doc["status"] == "done"
    assert doc["coverage"] == preview.coverage.model_dump(mode="json")
