"""E-mail: headers, body and attachments parsed recursively (EML and Outlook MSG)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragloom.errors import ParseError
from ragloom.ingest.parsers import detect_type, parse_document
from ragloom.ingest.parsers.sniff import EML, MSG
from tests.ingest.docgen import make_docx, make_eml, make_msg, make_xlsx

DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


@pytest.fixture
def report(tmp_path: Path) -> bytes:
    make_docx(tmp_path / "report.docx", [("h1", "Incident"), ("p", "The pump failed on Monday.")])
    return (tmp_path / "report.docx").read_bytes()


def test_eml_headers_body_and_recursive_attachments(tmp_path: Path, report: bytes) -> None:
    make_xlsx(tmp_path / "costs.xlsx", {"Costs": [["Item", "EUR"], ["Seal", 40]]})
    costs = (tmp_path / "costs.xlsx").read_bytes()
    inner = make_eml(tmp_path / "inner.eml", subject="Earlier note", sender="c@x.org", to="d@x.org",
                     body="Spare seals are in stock.", attachments=[("costs.xlsx", costs, "application/octet-stream")])
    raw = make_eml(
        tmp_path / "m.eml", subject="Pump failure", sender="Ann <ann@x.org>", to="bob@x.org", cc="eve@x.org",
        body="Hello Bob,\n\nsee the report.\n", html="<p>Hello <b>Bob</b> (HTML version)</p>",
        attachments=[("report.docx", report, DOCX_MIME),
                     ("blob.bin", bytes(range(256)) * 8, "application/octet-stream"),
                     ("earlier.eml", inner, "message/rfc822")],
    )
    assert detect_type("message.txt", raw) == EML  # e-mail headers are recognised by content
    doc = parse_document(raw, "m.eml")
    assert doc.title == "Pump failure"
    assert doc.metadata["from"] == "Ann <ann@x.org>" and doc.metadata["cc"] == "eve@x.org"
    headers = doc.blocks[0]
    assert headers.meta["part"] == "headers" and headers.meta["Subject"] == "Pump failure"
    assert headers.text.splitlines()[:3] == ["From: Ann <ann@x.org>", "To: bob@x.org", "Cc: eve@x.org"]
    texts = [(b.heading_path, b.text) for b in doc.blocks[1:]]
    assert texts[:2] == [(("Pump failure",), "Hello Bob,"), (("Pump failure",), "see the report.")]
    assert "HTML version" not in " ".join(t for _, t in texts)  # plain text preferred
    assert (("Pump failure", "report.docx", "Incident"), "The pump failed on Monday.") in texts
    failed = next(b for b in doc.blocks if b.meta.get("attachment") == "blob.bin")
    assert "binary data that matches no supported format" in failed.meta["attachment_error"]
    nested = [b for b in doc.blocks if b.meta.get("attachment") == "earlier.eml"]
    assert any(b.text == "Spare seals are in stock." for b in nested)
    table = next(b for b in nested if b.kind == "table")
    assert table.text == "Item: Seal; EUR: 40"
    assert table.heading_path == ("Pump failure", "earlier.eml", "Earlier note", "costs.xlsx", "Costs")


def test_eml_with_only_html_uses_its_main_text(tmp_path: Path) -> None:
    raw = make_eml(tmp_path / "h.eml", subject="News", sender="a@x.org", to="b@x.org",
                   html="<html><body><nav>Menu</nav><h1>Launch</h1><p>We ship on Friday.</p></body></html>")
    doc = parse_document(raw, "h.eml")
    assert [b.text for b in doc.blocks[1:]] == ["Launch", "We ship on Friday."]
    assert doc.blocks[2].heading_path == ("News", "Launch")


def test_msg_headers_body_and_attachments(tmp_path: Path, report: bytes) -> None:
    raw = make_msg(tmp_path / "m.msg", subject="Pump failure", sender="Ann <ann@x.org>", to="bob@x.org",
                   cc="eve@x.org", body="Hello Bob,\r\n\r\nsee the report.",
                   attachments=[("report.docx", report), ("notes.txt", b"Order two seals.")])
    assert detect_type("mail.bin", raw) == MSG  # OLE2 with MAPI property streams
    doc = parse_document(raw, "m.msg")
    assert doc.title == "Pump failure"
    assert doc.metadata["to"] == "bob@x.org" and doc.metadata["date"].startswith("2025-03-04")
    assert doc.metadata["attachments"] == "report.docx, notes.txt"
    assert [(b.heading_path, b.text) for b in doc.blocks[1:]] == [
        (("Pump failure",), "Hello Bob,"),
        (("Pump failure",), "see the report."),
        (("Pump failure", "report.docx"), "Incident"),
        (("Pump failure", "report.docx", "Incident"), "The pump failed on Monday."),
        (("Pump failure", "notes.txt"), "Order two seals."),
    ]


def test_msg_item_without_message_fields_is_a_parse_error(tmp_path: Path) -> None:
    # extract-msg opens the bare class "IPM" as a plain MSGFile, which has no sender, body, ...
    raw = make_msg(tmp_path / "i.msg", subject="s", sender="a@x.org", to="b@x.org", body="Hello.",
                   message_class="IPM")
    with pytest.raises(ParseError, match="not a message"):
        parse_document(raw, "i.msg")
