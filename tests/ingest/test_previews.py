"""Every citation opens its source (issue 11): flowing formats get an HTML view whose anchors their
chunks' positions name; PDFs, images and slides get page images. Through the real API."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from PIL import Image

from ragloom.config import Settings
from ragloom.service.views import view_link
from ragloom.worker import run_one
from tests.ingest.docgen import make_docx_rich, make_eml, make_html, make_pptx, make_text, make_xlsx
from tests.ingest.test_image_parser import encode, small_page
from tests.live import app_client

API = "/api/v1"


@dataclass
class Kb:
    client: TestClient
    headers: dict[str, str]
    kb: str
    docs: dict[str, dict[str, Any]]

    def get(self, path: str, **params: Any) -> Any:
        return self.client.get(API + path, headers=self.headers, params=params)

    def chunks(self, name: str) -> list[dict[str, Any]]:
        return list(self.get(f"/datasets/{self.kb}/documents/{self.docs[name]['id']}/chunks").json()["chunks"])


def _files(tmp: Path) -> dict[str, bytes]:
    make_docx_rich(tmp / "policy.docx", [("h1", "Leave"), ("p", "Parental leave lasts sixteen weeks."),
                                         ("table", [["grade", "days"], ["A", "25"], ["B", "30"]]),
                                         ("p", "Carry-over ends in March.")])
    make_html(tmp / "page.html", "<h1>Grasses</h1><p>Reeds grow near <b>water</b>.</p><script>alert(1)</script>"
                                 "<p onclick='x()'>Sedges <a href='javascript:x()'>too</a>.</p>")
    make_text(tmp / "notes.md", "# Pumps\n\nThe Orion pump runs 450 hours.\n\n## Grease\n\nUse grease K7.\n")
    make_eml(tmp / "mail.eml", subject="Audit", sender="a@example.com", to="b@example.com",
             body="The audit starts on Monday.\n\nBring the ledgers.")
    make_xlsx(tmp / "parts.xlsx", {"Torques": [["part", "torque"], ["P-1", "11 Nm"], ["P-2", "12 Nm"]]})
    make_pptx(tmp / "deck.pptx", [{"title": "Overview", "bullets": ["Pumps need grease every month."]}])
    image, _ = small_page("Safety Notice", "Wear gloves when the valve is opened.")
    return {**{p.name: p.read_bytes() for p in tmp.iterdir()}, "notice.png": encode([image], "PNG")}


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kb]:
    tmp = tmp_path_factory.mktemp("previews")
    files = tmp / "files"
    files.mkdir()
    settings = Settings(home=tmp / "home", workers=0, rate_limit_per_minute=0, _env_file=None)
    with app_client(settings) as (client, ctx, headers):
        kb = client.post(f"{API}/datasets", headers=headers, json={"name": "mixed"}).json()
        up = client.post(f"{API}/datasets/{kb['id']}/documents", headers=headers,
                         files=[("file", (n, b, "application/octet-stream")) for n, b in _files(files).items()])
        assert up.status_code == 201, up.text
        while run_one(ctx, "test"):
            pass
        docs = client.get(f"{API}/datasets/{kb['id']}/documents", headers=headers).json()["documents"]
        assert {d["name"]: d["status"] for d in docs} == dict.fromkeys(
            ["policy.docx", "page.html", "notes.md", "mail.eml", "parts.xlsx", "deck.pptx", "notice.png"], "done")
        yield Kb(client, headers, kb["id"], {d["name"]: d for d in docs})


FLOWING = ["policy.docx", "page.html", "notes.md", "mail.eml", "parts.xlsx"]


@pytest.mark.parametrize("name", FLOWING)
def test_a_flowing_documents_chunks_point_at_blocks_of_its_html_view(kb: Kb, name: str) -> None:
    doc = kb.docs[name]
    for chunk in kb.chunks(name):
        assert chunk["positions"] and all(p[0] == 0 and p[3] == p[4] for p in chunk["positions"]), chunk
        blocks = [int(p[3]) for p in chunk["positions"]]
        r = kb.get(f"/datasets/{kb.kb}/documents/{doc['id']}/preview", highlight=",".join(map(str, blocks)))
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        assert "default-src 'none'" in r.headers["content-security-policy"]
        marked = re.findall(r'<(\w+) id="b(\d+)" class="hl">(.*?)</\1>', r.text, re.S)
        assert [int(n) for _, n, _ in marked] == sorted(set(blocks))
        shown = " ".join(re.sub(r"<[^>]+>", " ", inner) for _, _, inner in marked)
        titles = " ".join(re.findall(r"<h\d[^>]*>(.*?)</h\d>", r.text))  # a chunk may repeat its headings
        for word in re.findall(r"[A-Za-z]{4,}", chunk["content"])[:12]:  # the cited text is what is marked
            assert word in shown or word in titles, (word, shown)
    assert kb.get(f"/datasets/{kb.kb}/documents/{doc['id']}/pages").json()["pages"] == []


def test_the_view_holds_no_markup_of_the_file(kb: Kb) -> None:
    page = kb.get(f"/datasets/{kb.kb}/documents/{kb.docs['page.html']['id']}/preview").text
    assert "<script" not in page and "onclick" not in page and "javascript:" not in page and "href" not in page
    assert "Reeds grow near water." in page  # inline markup joined as a browser shows it


def test_paged_formats_get_page_images_and_no_view(kb: Kb) -> None:
    for name in ("deck.pptx", "notice.png"):
        doc = kb.docs[name]
        pages = kb.get(f"/datasets/{kb.kb}/documents/{doc['id']}/pages").json()["pages"]
        assert pages and all(p["image"] for p in pages), (name, pages)
        png = kb.client.get(pages[0]["image"], headers=kb.headers)
        assert png.status_code == 200 and png.headers["content-type"] == "image/png"
        with Image.open(io.BytesIO(png.content)) as image:  # the page's size in points at the preview DPI
            assert abs(image.width / image.height - pages[0]["width"] / pages[0]["height"]) < 0.02
            assert image.convert("L").getextrema()[0] < 100  # something is drawn: text, not a blank page
        chunk = kb.chunks(name)[0]
        assert all(p[0] >= 1 for p in chunk["positions"])
        r = kb.get(f"/datasets/{kb.kb}/documents/{doc['id']}/preview")
        assert r.status_code == 404 and "page images" in r.json()["message"]


def test_bad_highlights_and_other_versions_are_refused(kb: Kb) -> None:
    doc = kb.docs["notes.md"]
    assert kb.get(f"/datasets/{kb.kb}/documents/{doc['id']}/preview", highlight="1;drop").status_code == 422
    r = kb.get(f"/datasets/{kb.kb}/documents/{doc['id']}/preview", version_id="nope")
    assert r.status_code == 404


def test_a_citation_link_opens_the_view_at_its_blocks() -> None:
    assert view_link("/d", "v1", [[0, 0, 0, 4, 4], [0, 0, 0, 5, 5]]) == "/d/preview?version_id=v1&highlight=4,5#b4"
    assert view_link("/d", "v1", [[2, 10, 100, 20, 40]]) is None
