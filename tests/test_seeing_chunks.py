"""Seeing what was parsed: chunk listings (API, CLI) and a dry-run parse."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from ragloom.service.accounts import identity
from tests.cli import ragloom
from tests.corpus import write_manual_pdf
from tests.live import live_server, wait_documents

pytestmark = pytest.mark.slow


def test_parse_shows_blocks_and_chunks_without_adding(tmp_path: Path) -> None:
    pdf = tmp_path / "manual.pdf"
    write_manual_pdf(pdf)
    home = tmp_path / "home"
    out = json.loads(ragloom(home, "--json", "parse", str(pdf), "--config", '{"chunk_token_num": 128}').stdout)
    assert out["mime_type"] == "application/pdf" and out["page_count"] == 3
    assert any("450 operating hours" in b["text"] and b["positions"][0][0] == 2 for b in out["blocks"])
    assert out["chunks"] and all(c["tokens"] <= 128 for c in out["chunks"])
    assert [c["order"] for c in out["chunks"]] == sorted(c["order"] for c in out["chunks"])
    bad = ragloom(home, "parse", str(pdf), "--config", '{"chunk_token_num": -1}', check=False)
    assert bad.returncode != 0 and "chunk_token_num" in bad.stderr
    assert not (home / "files").exists() or not any((home / "files").rglob("*"))  # nothing stored


def test_chunk_listing_and_per_document_method(settings, tmp_path: Path) -> None:
    with live_server(settings) as live:
        with live.ctx.db.session() as s:
            key = identity.bootstrap(s).new_key.key
        api = live.client(key)
        ds = api.post("/datasets", json={"name": "m", "parser_config": {"chunk_token_num": 128}}).json()["id"]
        pdf = tmp_path / "manual.pdf"
        write_manual_pdf(pdf)
        doc = api.post(f"/datasets/{ds}/documents", files=[("file", ("manual.pdf", pdf.read_bytes()))]).json()
        doc_id = doc["documents"][0]["id"]
        wait_documents(api, ds)
        pages = api.get(f"/datasets/{ds}/documents/{doc_id}/pages").json()["pages"]
        assert [p["page"] for p in pages] == [1, 2, 3]
        assert all(abs(p["width"] - 595.28) < 1 and abs(p["height"] - 841.89) < 1 for p in pages)
        png = api.get(pages[1]["image"].removeprefix("/api/v1"))
        assert png.status_code == 200 and png.content.startswith(b"\x89PNG")
        # the list says what the file is, and links its first page's thumbnail (scaled on request)
        listed = api.get(f"/datasets/{ds}/documents").json()["documents"][0]
        assert (listed["file_type"], listed["size"], listed["page_count"]) == ("pdf", pdf.stat().st_size, 3)
        thumb = api.get(listed["thumbnail"].removeprefix("/api/v1"))
        assert thumb.status_code == 200 and thumb.headers["content-type"] == "image/png"
        with Image.open(io.BytesIO(thumb.content)) as small, Image.open(io.BytesIO(png.content)) as full:
            assert small.width == 240 < full.width and abs(small.height / small.width - full.height / full.width) < 0.01
        assert api.get(pages[0]["image"].removeprefix("/api/v1"), params={"width": 5}).status_code == 422
        assert api.get(f"/datasets/{ds}/documents/{doc_id}").json()["thumbnail"] == listed["thumbnail"]
        original = api.get(f"/datasets/{ds}/documents/{doc_id}/file")
        assert original.content == pdf.read_bytes() and original.headers["content-type"] == "application/pdf"
        listing = api.get(f"/datasets/{ds}/documents/{doc_id}/chunks").json()
        assert listing["method"] == "naive" and listing["total"] == len(listing["chunks"]) > 1
        orders = [c["order"] for c in listing["chunks"]]
        assert orders == sorted(orders)
        assert all(c["positions"] and c["method"] == "naive" for c in listing["chunks"])
        pages = [c["positions"][0][0] for c in listing["chunks"]]
        assert pages == sorted(pages) and pages[-1] == 3

        bad = api.patch(f"/datasets/{ds}/documents/{doc_id}", json={"chunk_method": "naive",
                                                                      "parser_config": {"chunk_token_num": 5}})
        assert bad.status_code == 400 and "chunk_token_num" in bad.json()["message"]
        unknown = api.patch(f"/datasets/{ds}/documents/{doc_id}", json={"chunk_method": "nonsense"})
        assert unknown.status_code == 400 and "nonsense" in unknown.json()["message"]
        ok = api.patch(f"/datasets/{ds}/documents/{doc_id}",
                       json={"chunk_method": "naive", "parser_config": {"chunk_token_num": 1024}})
        assert ok.status_code == 202 and ok.json()["chunk_method"] == "naive"
        wait_documents(api, ds)
        bigger = api.get(f"/datasets/{ds}/documents/{doc_id}/chunks").json()
        assert bigger["version_id"] != listing["version_id"]
        old = api.get(f"/datasets/{ds}/documents/{doc_id}/file", params={"version_id": listing["version_id"]})
        assert old.status_code == 200 and old.content == pdf.read_bytes()  # an old citation still opens
        assert bigger["total"] < listing["total"]  # a larger budget never yields more chunks
        cli = json.loads(ragloom(settings.home, "--json", "chunks", "m", "manual.pdf").stdout)
        assert [c["chunk_id"] for c in cli["chunks"]] == [c["chunk_id"] for c in bigger["chunks"]]
