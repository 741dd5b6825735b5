"""The chunk methods for forms, the chunking preview (nothing stored), document filters and the
version history, through the REST API on the real engines."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ragloom.config import Settings
from ragloom.context import Context
from ragloom.ingest.chunkers.config import ChunkerConfig
from ragloom.service import knowledgebases
from ragloom.worker import run_one
from tests.ingest.docgen import make_docx, make_pdf
from tests.live import app_client

API = "/api/v1"
SEVEN_PAGES = [[f"# Part {n}", f"Paragraph {n} says the pump number {n} runs quietly. " * 6,
                f"A second paragraph of part {n} lists the spare parts of pump {n}. " * 6] for n in range(1, 8)]


@dataclass
class World:
    client: TestClient
    ctx: Context
    headers: dict[str, str]
    kb: str
    tmp: Path

    def work(self) -> None:
        while run_one(self.ctx, "test"):
            pass

    def preview(self, **form: str) -> dict:
        r = self.client.post(f"{API}/datasets/{self.kb}/chunking-preview", headers=self.headers, data=form,
                             files=form.pop("files", None))  # type: ignore[arg-type]
        assert r.status_code == 200, r.text
        return r.json()


@pytest.fixture
def world(settings: Settings, tmp_path: Path) -> Iterator[World]:
    with app_client(settings) as (client, ctx, headers):
        kb = client.post(f"{API}/datasets", headers=headers, json={"name": "pumps"}).json()["id"]
        yield World(client, ctx, headers, kb, tmp_path)


def test_every_method_is_described_with_the_parameters_it_reads(world: World) -> None:
    r = world.client.get(f"{API}/chunk-methods", headers=world.headers)
    assert r.status_code == 200, r.text
    methods = {m["name"]: m for m in r.json()["methods"]}
    assert set(methods) == set(knowledgebases.chunk_methods())
    assert all(m["description"] for m in methods.values())
    naive = {p["name"]: p for p in methods["naive"]["parameters"]}
    budget = naive["chunk_token_num"]
    field = ChunkerConfig.model_fields["chunk_token_num"]
    assert (budget["type"], budget["default"], budget["minimum"], budget["maximum"]) == ("integer", field.default,
                                                                                          16, 16384)
    assert naive["heading_prefix"]["type"] == "boolean" and naive["delimiter"]["type"] == "string"
    assert naive["task_page_size"]["nullable"] and naive["task_page_size"]["default"] is None
    assert [p["name"] for p in methods["picture"]["parameters"]] == ["picture_min_chars", "auto_keywords",
                                                                    "auto_questions", "metadata_fields"]
    assert "children_delimiter" not in {p["name"] for p in methods["book"]["parameters"]}
    assert "title_depth" in {p["name"] for p in methods["title"]["parameters"]}
    assert [p["name"] for p in methods["one"]["parameters"]] == ["auto_keywords", "auto_questions", "metadata_fields"]
    assert [p["name"] for p in methods["tag"]["parameters"]] == ["task_page_size"]
    fields = next(p for p in methods["naive"]["parameters"] if p["name"] == "metadata_fields")
    assert fields["type"] == "object" and fields["default"] == {}
    # every parameter a method lists is one ChunkerConfig accepts for it
    for name, m in methods.items():
        for p in m["parameters"]:
            if p["type"] == "boolean" and name not in ("naive", "title", "book", "laws", "manual", "paper"):
                continue  # toc_extraction is refused outside the sectioned methods
            ChunkerConfig.parse({"method": name, p["name"]: p["default"]}, strict=True)


def test_a_pdf_sample_is_chunked_on_its_first_pages_and_nothing_is_stored(world: World) -> None:
    pdf = world.tmp / "pumps.pdf"
    make_pdf(pdf, SEVEN_PAGES)
    sample = [("file", (pdf.name, pdf.read_bytes(), "application/pdf"))]
    small = world.preview(files=sample, chunk_method="naive", parser_config='{"chunk_token_num": 32}')
    large = world.preview(files=sample, chunk_method="naive", parser_config='{"chunk_token_num": 1024}')
    assert small["pages_total"] == 7 and small["pages_parsed"] == 5
    assert small["chunk_count"] > large["chunk_count"] >= 1
    assert all(c["tokens"] <= 32 + 8 for c in small["chunks"])  # the budget, give or take a heading
    assert {p for c in small["chunks"] for p in c["pages"]} == {1, 2, 3, 4, 5}
    assert not any("Part 6" in c["text"] for c in small["chunks"])
    titled = world.preview(files=sample, chunk_method="title")
    assert titled["chunk_method"] == "title" and titled["chunks"][0]["text"].startswith("Part 1")
    docs = world.client.get(f"{API}/datasets/{world.kb}/documents", headers=world.headers).json()
    assert docs["total"] == 0  # a preview stores nothing


def test_a_document_of_the_knowledge_base_is_a_sample_too(world: World) -> None:
    docx = world.tmp / "leave.docx"
    make_docx(docx, [("title", "Leave policy"), ("p", "Employees take leave after one month of work. " * 20),
                     ("h1", "Sick days"), ("p", "Sick days need a note from a doctor after three days. " * 20)])
    up = world.client.post(f"{API}/datasets/{world.kb}/documents", headers=world.headers,
                           files=[("file", (docx.name, docx.read_bytes(), "application/octet-stream"))])
    doc = up.json()["documents"][0]["id"]
    world.work()
    out = world.preview(document_id=doc, chunk_method="naive", parser_config='{"chunk_token_num": 64}')
    assert out["filename"] == "leave.docx" and out["pages_total"] is None
    assert out["chunk_count"] >= 3 and all(c["pages"] == [] for c in out["chunks"])
    assert any("doctor" in c["text"] for c in out["chunks"])


@pytest.mark.parametrize(("form", "status", "words"), [
    ({"parser_config": '{"chunk_token_num": 5}'}, 400, "chunk_token_num"),
    ({"parser_config": '{"delimiter": "``"}'}, 400, "delimiter"),
    ({"chunk_method": "nonsense"}, 400, "nonsense"),
    ({"parser_config": "{not json"}, 400, "JSON"),
    ({"chunk_method": "picture", "parser_config": '{"children_delimiter": "\\n"}'}, 400, "children_delimiter"),
    ({}, 400, "sample"),
    ({"document_id": "no-such-document"}, 404, "no-such-document"),
])
def test_bad_previews_say_what_is_wrong(world: World, form: dict[str, str], status: int, words: str) -> None:
    files = None
    if form.get("parser_config") or form.get("chunk_method"):
        files = [("file", ("a.txt", b"Some text to chunk.", "text/plain"))]
    r = world.client.post(f"{API}/datasets/{world.kb}/chunking-preview", headers=world.headers, data=form,
                          files=files)
    assert r.status_code == status, r.text
    assert words in r.json()["message"]


@pytest.mark.parametrize(("data", "words"), [(b"", "empty"), (b"%PDF-1.7\n garbage", "PDF")])
def test_an_empty_or_broken_sample_is_a_clear_422(world: World, data: bytes, words: str) -> None:
    r = world.client.post(f"{API}/datasets/{world.kb}/chunking-preview", headers=world.headers,
                          files=[("file", ("broken.pdf", data, "application/pdf"))])
    assert r.status_code == 422, r.text
    assert words in r.json()["message"]


def test_documents_filter_by_status_type_and_name_and_list_their_versions(world: World) -> None:
    files = [("file", ("alpha-notes.txt", b"Alpha pumps are blue.", "text/plain")),
             ("file", ("beta-notes.md", b"# Beta\nBeta pumps are red.", "text/markdown")),
             ("file", ("Alpha_100%.md", b"# Gamma\nGamma pumps are green.", "text/markdown"))]
    up = world.client.post(f"{API}/datasets/{world.kb}/documents", headers=world.headers, files=files)
    assert up.status_code == 201, up.text
    ids = {d["name"]: d["id"] for d in up.json()["documents"]}
    base = f"{API}/datasets/{world.kb}/documents"

    def names(**params: str) -> list[str]:
        r = world.client.get(base, headers=world.headers, params=params)
        assert r.status_code == 200, r.text
        assert r.json()["total"] == len(r.json()["documents"])
        return sorted(d["name"] for d in r.json()["documents"])

    assert names(status="queued") == sorted(ids)
    assert names(status="done") == []
    world.work()
    assert names(status="done") == sorted(ids)
    assert names(type="md") == ["Alpha_100%.md", "beta-notes.md"]
    assert names(type=".TXT") == ["alpha-notes.txt"]
    assert names(name="ALPHA") == ["Alpha_100%.md", "alpha-notes.txt"]
    assert names(name="_100%") == ["Alpha_100%.md"]  # LIKE's wildcards are taken literally
    assert names(name="a%m") == []  # would match nearly every name as a wildcard
    assert names(name="notes", type="md") == ["beta-notes.md"]
    bad = world.client.get(base, headers=world.headers, params={"status": "finished"})
    assert bad.status_code == 400 and "status must be one of" in bad.json()["message"]

    doc = ids["beta-notes.md"]
    r = world.client.post(f"{base}/{doc}/reparse", headers=world.headers)
    assert r.status_code == 202, r.text
    world.work()
    versions = world.client.get(f"{base}/{doc}/versions", headers=world.headers).json()
    assert [v["number"] for v in versions["versions"]] == [2, 1]
    newest, first = versions["versions"]
    assert newest["active"] and newest["latest"] and newest["status"] == "ready"
    assert not first["active"] and first["status"] == "superseded"
    assert versions["active_version_id"] == newest["id"]
    assert newest["content_hash"] == first["content_hash"] and newest["chunk_count"] >= 1
    assert world.client.get(f"{base}/nope/versions", headers=world.headers).status_code == 404
