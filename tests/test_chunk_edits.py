"""Manual chunk edits through the REST API (DESIGN §3): edit, disable, delete and add chunks;
search sees each at once, and a re-parse re-applies them to the chunks that still exist."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragloom.config import Settings
from ragloom.context import Context
from ragloom.service.accounts import identity
from ragloom.worker import run_one
from tests.ingest.docgen import make_pdf
from tests.live import app_client

API = "/api/v1"
PAGES = [["# Pump manual", "The pump is serviced every 90 days by the harbor crew."],
         ["## Filters", "Replace the copper filter when the signal lamp is red."]]


@dataclass
class Doc:
    client: TestClient
    ctx: Context
    headers: dict[str, str]
    kb: str
    doc: str

    @property
    def base(self) -> str:
        return f"{API}/datasets/{self.kb}/documents/{self.doc}"

    def chunks(self, *, hidden: bool = False) -> list[dict[str, Any]]:
        r = self.client.get(f"{self.base}/chunks", headers=self.headers, params={"include_hidden": hidden})
        assert r.status_code == 200, r.text
        return [c for c in r.json()["chunks"] if c["kind"] not in ("parent", "toc")]

    def search(self, question: str, *, mode: str = "hybrid") -> list[str]:
        r = self.client.post(f"{API}/retrieval", headers=self.headers,
                             json={"question": question, "dataset_ids": [self.kb], "similarity_threshold": 0.0,
                                   "mode": mode})
        assert r.status_code == 200, r.text
        return [c["content"] for c in r.json()["chunks"]]

    def reparse(self) -> None:
        r = self.client.post(f"{self.base}/reparse", headers=self.headers)
        assert r.status_code == 202, r.text
        while run_one(self.ctx, "test"):
            pass
        assert self.client.get(self.base, headers=self.headers).json()["status"] == "done"


@pytest.fixture
def doc(settings: Settings, tmp_path: Path) -> Iterator[Doc]:
    pdf = tmp_path / "pump-manual.pdf"
    make_pdf(pdf, PAGES)
    with app_client(settings) as (client, ctx, headers):
        small = {"name": "manuals", "parser_config": {"chunk_token_num": 16}}  # a chunk per sentence or so
        kb = client.post(f"{API}/datasets", headers=headers, json=small).json()["id"]
        up = client.post(f"{API}/datasets/{kb}/documents", headers=headers,
                         files=[("file", (pdf.name, pdf.read_bytes(), "application/pdf"))])
        assert up.status_code == 201, up.text
        while run_one(ctx, "test"):
            pass
        yield Doc(client, ctx, headers, kb, up.json()["documents"][0]["id"])


def _with(chunks: list[dict[str, Any]], text: str) -> dict[str, Any]:
    return next(c for c in chunks if text in c["content"])


def test_an_edit_is_searchable_at_once_and_survives_a_reparse(doc: Doc) -> None:
    pump = _with(doc.chunks(), "serviced every 90 days")
    assert not pump["edited"]
    new = pump["content"].replace("90 days", "45 days by the zeppelin mechanic")
    r = doc.client.patch(f"{doc.base}/chunks/{pump['chunk_id']}", headers=doc.headers, json={"content": new})
    assert r.status_code == 200, r.text
    assert r.json()["content"] == new and r.json()["edited"] and r.json()["chunk_id"] == pump["chunk_id"]
    assert any("zeppelin" in c for c in doc.search("zeppelin mechanic"))
    listed = _with(doc.chunks(), "zeppelin")
    assert listed["edited"] and listed["positions"] == pump["positions"]  # same region on the page
    untouched = _with(doc.chunks(), "copper filter")
    assert not untouched["edited"]

    doc.reparse()
    again = _with(doc.chunks(), "zeppelin")
    assert again["edited"] and again["content"] == new
    assert again["chunk_id"] != pump["chunk_id"]  # a new version's row...
    assert again["positions"] == pump["positions"]  # ...of the same chunk
    assert not any("90 days" in c["content"] for c in doc.chunks())
    assert any("zeppelin" in c for c in doc.search("zeppelin mechanic"))
    # edited again after the re-parse: the same override, not a second one
    r = doc.client.patch(f"{doc.base}/chunks/{again['chunk_id']}", headers=doc.headers,
                         json={"content": new + " Twice."})
    assert r.status_code == 200, r.text
    doc.reparse()
    assert _with(doc.chunks(), "zeppelin")["content"] == new + " Twice."


def test_a_disabled_chunk_is_not_retrieved_until_enabled_also_after_a_reparse(doc: Doc) -> None:
    lamp = _with(doc.chunks(), "copper filter")
    assert any("copper filter" in c for c in doc.search("copper filter signal lamp"))
    r = doc.client.patch(f"{doc.base}/chunks/{lamp['chunk_id']}", headers=doc.headers, json={"available": False})
    assert r.status_code == 200 and r.json()["available"] is False
    assert not any("copper filter" in c for c in doc.search("copper filter signal lamp"))
    assert not any("copper filter" in c["content"] for c in doc.chunks())  # listed only with the hidden rows
    hidden = _with(doc.chunks(hidden=True), "copper filter")
    assert hidden["available"] is False and hidden["edited"]

    doc.reparse()
    assert not any("copper filter" in c for c in doc.search("copper filter signal lamp"))
    hidden = _with(doc.chunks(hidden=True), "copper filter")
    r = doc.client.patch(f"{doc.base}/chunks/{hidden['chunk_id']}", headers=doc.headers, json={"available": True})
    assert r.status_code == 200 and r.json()["available"] is True
    assert any("copper filter" in c for c in doc.search("copper filter signal lamp"))


def test_delete_and_add_chunks_and_a_reparse_keeps_both(doc: Doc) -> None:
    before = doc.chunks()
    lamp = _with(before, "copper filter")
    r = doc.client.delete(f"{doc.base}/chunks/{lamp['chunk_id']}", headers=doc.headers)
    assert r.status_code == 204, r.text
    assert not any("copper filter" in c["content"] for c in doc.chunks(hidden=True))
    assert not any("copper filter" in c for c in doc.search("copper filter signal lamp"))
    assert doc.client.delete(f"{doc.base}/chunks/{lamp['chunk_id']}", headers=doc.headers).status_code == 404

    r = doc.client.post(f"{doc.base}/chunks", headers=doc.headers,
                        json={"content": "The night shift keeps the spare impeller in locker 7."})
    assert r.status_code == 201, r.text
    added = r.json()
    assert added["edited"] and doc.chunks()[-1]["chunk_id"] == added["chunk_id"]
    assert any("locker 7" in c for c in doc.search("spare impeller locker"))
    doc_row = doc.client.get(doc.base, headers=doc.headers).json()
    assert doc_row["chunk_count"] == len(before)

    doc.reparse()
    after = doc.chunks(hidden=True)
    assert not any("copper filter" in c["content"] for c in after)
    assert _with(after, "locker 7")["edited"]
    assert any("locker 7" in c for c in doc.search("spare impeller locker"))
    # an added chunk deleted is gone for good
    gone = _with(after, "locker 7")["chunk_id"]
    assert doc.client.delete(f"{doc.base}/chunks/{gone}", headers=doc.headers).status_code == 204
    doc.reparse()
    assert not any("locker 7" in c["content"] for c in doc.chunks(hidden=True))


def test_keywords_and_questions_find_a_chunk_its_words_miss_and_survive_a_reparse(doc: Doc) -> None:
    """A chunk's important keywords and questions are matched beside its text (questions also give it
    its vector), listed with it, kept over a re-parse, and cleared by ``[]``."""
    lamp = _with(doc.chunks(), "copper filter")
    assert lamp["important_keywords"] == [] and lamp["questions"] == []
    assert not any("copper filter" in c for c in doc.search("zircon cartouche", mode="keyword"))  # no chunk's words
    r = doc.client.patch(f"{doc.base}/chunks/{lamp['chunk_id']}", headers=doc.headers,
                         json={"important_keywords": ["zircon"], "questions": [" What is the cartouche? "]})
    assert r.status_code == 200, r.text
    assert r.json()["important_keywords"] == ["zircon"] and r.json()["questions"] == ["What is the cartouche?"]
    assert r.json()["content"] == lamp["content"]  # the text is left as it was
    assert any("copper filter" in c for c in doc.search("zircon", mode="keyword"))
    assert any("copper filter" in c for c in doc.search("cartouche", mode="keyword"))

    added = doc.client.post(f"{doc.base}/chunks", headers=doc.headers,
                            json={"content": "Spare gaskets are in drawer 3.", "important_keywords": ["seals"],
                                  "questions": ["Where are the spare gaskets?"]})
    assert added.status_code == 201, added.text
    assert added.json()["questions"] == ["Where are the spare gaskets?"]
    doc.reparse()
    again = _with(doc.chunks(), "copper filter")
    assert again["important_keywords"] == ["zircon"] and again["questions"] == ["What is the cartouche?"]
    assert any("copper filter" in c for c in doc.search("zircon", mode="keyword"))
    assert _with(doc.chunks(), "drawer 3")["important_keywords"] == ["seals"]
    assert any("drawer 3" in c for c in doc.search("seals", mode="keyword"))

    cleared = doc.client.patch(f"{doc.base}/chunks/{again['chunk_id']}", headers=doc.headers,
                               json={"important_keywords": [], "questions": []})
    assert cleared.status_code == 200 and cleared.json()["important_keywords"] == cleared.json()["questions"] == []
    assert not any("copper filter" in c for c in doc.search("zircon cartouche", mode="keyword"))
    too_many = doc.client.patch(f"{doc.base}/chunks/{again['chunk_id']}", headers=doc.headers,
                                json={"questions": [f"q{i}?" for i in range(65)]})
    assert too_many.status_code == 422, too_many.text
    blank = doc.client.patch(f"{doc.base}/chunks/{again['chunk_id']}", headers=doc.headers,
                             json={"important_keywords": [" "]})
    assert blank.status_code == 422 and "important_keywords.0" in blank.json()["message"]


def test_bad_requests_and_read_only_callers(doc: Doc) -> None:
    chunk = doc.chunks()[0]["chunk_id"]
    url = f"{doc.base}/chunks/{chunk}"
    assert doc.client.patch(url, headers=doc.headers, json={"content": ""}).status_code == 422
    assert doc.client.patch(url, headers=doc.headers, json={"colour": "red"}).status_code == 422
    nope = doc.client.patch(f"{doc.base}/chunks/nope", headers=doc.headers, json={"available": False})
    assert nope.status_code == 404
    with doc.ctx.db.session() as s:
        boot = identity.bootstrap(s)
        tenant = boot.principal.tenant_id
        user = boot.principal.user_id
        read = identity.create_api_key(s, tenant_id=tenant, user_id=user, scope="read").key
    ro = {"Authorization": f"Bearer {read}"}
    assert doc.client.patch(url, headers=ro, json={"available": False}).status_code == 403
    assert doc.client.post(f"{doc.base}/chunks", headers=ro, json={"content": "x"}).status_code == 403
    assert doc.client.delete(url, headers=ro).status_code == 403
