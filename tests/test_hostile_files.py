"""Hostile files through the whole pipeline: each ends failed with its limit named (or done, within
its limits), while a small document uploaded alongside is published."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from PIL import Image
from sqlalchemy import select

from ragloom.config import Settings
from ragloom.db.models import Document, Task, VersionPage
from ragloom.schemas.datasets import KBCreate
from ragloom.service import knowledgebases
from ragloom.service.documents import catalog
from ragloom.worker import run_until
from tests.ingest import hostile


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # the workers read their limits from the settings: a smaller page bitmap keeps the test fast
    return Settings(home=tmp_path / "home", workers=0, worker_poll_seconds=0.05, _env_file=None,
                    max_page_pixels=1_000_000)


def _upload(ctx, principal, files: dict[str, bytes]) -> dict[str, str]:  # type: ignore[no-untyped-def]
    with ctx.db.session() as s:
        knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(name="kb"))
    with ctx.db.session() as s:
        docs = catalog.add_documents(ctx, s, principal=principal, kb_id="kb",
                                       uploads=[catalog.Upload(filename=n, data=d) for n, d in files.items()])
        return {d.name: d.id for d in docs}


def _run(ctx, doc_ids: dict[str, str], timeout: float = 120) -> dict[str, Document]:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout

    def finished() -> bool:
        assert time.monotonic() < deadline, "the documents were not processed in time"
        with ctx.db.session() as s:
            return all(s.get(Document, d).status in ("done", "failed", "cancelled") for d in doc_ids.values())

    run_until(ctx, finished)
    with ctx.db.session() as s:
        out = {}
        for name, doc_id in doc_ids.items():
            doc = s.get(Document, doc_id)
            s.expunge(doc)
            out[name] = doc
        return out


def test_hostile_files_fail_with_their_limit_named_and_a_small_note_is_published(ctx, principal) -> None:
    ids = _upload(ctx, principal, {
        "wide.csv": hostile.wide_csv(200_000),
        "pages.pdf": hostile.many_pages_pdf(24_000),
        "deep.json": hostile.nested_json(100_000),
        "deep.html": hostile.nested_html(5_000),
        "bomb.docx": hostile.expanding_docx(300),
        "note.md": b"# Note\n\nThe pump is serviced every week.\n",
    })
    with ctx.db.session() as s:  # the 24,000-page PDF is one task, not 2,000
        assert len(list(s.scalars(select(Task).where(Task.document_id == ids["pages.pdf"])))) == 1
    docs = _run(ctx, ids)
    expected = {
        "wide.csv": "RAGLOOM_MAX_SHEET_COLUMNS", "pages.pdf": "RAGLOOM_MAX_PAGES",
        "deep.json": "RAGLOOM_MAX_NESTING", "deep.html": "RAGLOOM_MAX_NESTING", "bomb.docx": "RAGLOOM_MAX_UNZIPPED_MB",
    }
    for name, setting in expected.items():
        assert docs[name].status == "failed", (name, docs[name].message)
        assert setting in docs[name].message and "internal error" not in docs[name].message, docs[name].message
    assert docs["note.md"].status == "done"


def test_a_200_inch_pdf_page_is_published_with_a_bounded_preview(ctx, principal) -> None:
    ids = _upload(ctx, principal, {"huge.pdf": hostile.huge_page_pdf()})
    docs = _run(ctx, ids)
    assert docs["huge.pdf"].status == "done", docs["huge.pdf"].message  # the preview was 5.3 GB and 119 s
    with ctx.db.session() as s:
        [page] = s.scalars(select(VersionPage).where(VersionPage.version_id == docs["huge.pdf"].active_version_id))
        assert (page.width, page.height) == (14_400.0, 14_400.0)
        key = page.image_key
    with Image.open(io.BytesIO(ctx.objects.get(key))) as preview:
        assert preview.size[0] * preview.size[1] <= 1_000_000  # RAGLOOM_MAX_PAGE_PIXELS of this test
