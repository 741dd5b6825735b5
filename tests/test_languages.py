"""A knowledge base in each language ragloom analyses besides Chinese and English is created, fed, searched
(keyword, vector, hybrid) and answered from without a chat model; ``auto`` analyses each document in its
own language; the API takes RAGFlow's language names and refuses an unknown one."""

from __future__ import annotations

import pytest

from ragloom.schemas.options import RetrievalOptions
from ragloom.service.search.answers import answer
from ragloom.service.search.retrieval import search
from tests.live import app_client
from tests.nlp.multilingual import AUTO, CORPORA
from tests.test_retrieval import _ingest

pytestmark = pytest.mark.slow


def _top(ctx, principal, kb: str, question: str, mode: str) -> str | None:
    res = search(ctx, principal=principal, kb_ids=[kb], question=question,
                 options=RetrievalOptions(mode=mode, page_size=3, min_relevance=0.0))
    return res.chunks[0].record.document_name if res.chunks else None


def _check(ctx, principal, kb: str, corpus: dict) -> None:
    for question, expected in corpus["questions"]:
        for mode in ("keyword", "vector", "hybrid"):
            assert _top(ctx, principal, kb, question, mode) == expected, (kb, mode, question)
        reply = answer(ctx, principal=principal, kb_ids=[kb], question=question)
        assert not reply.insufficient, (kb, question, reply.text)
        assert reply.mode == "extractive" and reply.references[0].document_name == expected, (kb, question, reply.text)
        cited = reply.references[0].content
        assert all(s.rstrip("。.") in cited or s in cited for s in reply.sentences), reply.text  # quoted, not made up


def test_each_language_is_searched_and_answered_in_its_own_analysis(ctx, principal) -> None:
    for language, corpus in CORPORA.items():
        _ingest(ctx, principal, f"kb-{language}", corpus["docs"], language=language)
        _check(ctx, principal, f"kb-{language}", corpus)
    # a question the documents do not answer is refused in the question's language
    reply = answer(ctx, principal=principal, kb_ids=["kb-de"], question="Wie hoch ist der Eiffelturm in Paris?")
    assert reply.insufficient and reply.text.startswith("Die Dokumente enthalten nicht genug Informationen"), reply.text


def test_auto_analyses_each_document_and_question_in_its_language(ctx, principal) -> None:
    _ingest(ctx, principal, "mixed", AUTO["docs"], language="auto")
    _check(ctx, principal, "mixed", AUTO)
    # the same German document in an English knowledge base: "Pumpen" is not "Pumpe" to English analysis, nor
    # "Wartungen" "Wartung"
    _ingest(ctx, principal, "english", {"pumpe.md": AUTO["docs"]["pumpe.md"]}, language="en")
    question = "Wann brauchen Pumpen Wartungen?"
    assert _top(ctx, principal, "english", question, "keyword") is None
    assert _top(ctx, principal, "mixed", question, "keyword") == "pumpe.md"
    # an English knowledge base answers as before, whatever the question looks like to detection
    reply = answer(ctx, principal=principal, kb_ids=["english"], question="When was Angela Merkel born?")
    assert reply.insufficient and reply.text.startswith("The documents do not contain enough information")


def test_the_api_takes_language_names_and_refuses_others(settings) -> None:
    from ragloom.worker import run_until

    with app_client(settings) as (client, ctx, auth):
        bad = client.post("/api/v1/datasets", headers=auth, json={"name": "x", "language": "Klingon"})
        assert bad.status_code == 400 and "language must be one of en, zh, de" in bad.json()["message"]
        made = client.post("/api/v1/datasets", headers=auth, json={"name": "ko-docs", "language": "Korean"})
        assert made.status_code == 201, made.text
        ds = made.json()
        assert ds["language"] == "ko"
        files = [("file", (name, text.encode())) for name, text in CORPORA["ko"]["docs"].items()]
        up = client.post(f"/api/v1/datasets/{ds['id']}/documents", headers=auth, files=files)
        assert up.status_code == 201, up.text

        def done() -> bool:
            docs = client.get(f"/api/v1/datasets/{ds['id']}/documents", headers=auth).json()["documents"]
            return all(d["status"] in ("done", "failed") for d in docs)

        run_until(ctx, done, poll=0.01)
        question, expected = CORPORA["ko"]["questions"][1]
        found = client.post("/api/v1/retrieval", headers=auth,
                            json={"question": question, "dataset_ids": [ds["id"]], "page_size": 1,
                                  "mode": "keyword"})
        assert found.status_code == 200, found.text
        assert found.json()["chunks"][0]["document_name"] == expected
        replied = client.post("/api/v1/answer", headers=auth, json={"question": question, "dataset_ids": [ds["id"]]})
        assert replied.status_code == 200 and "6시" in replied.json()["answer"], replied.text




def _png(text: str, font_file: str) -> bytes:
    import io

    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (1400, 300), "white")
    ImageDraw.Draw(image).text((40, 110), text, font=ImageFont.truetype(font_file, 44), fill="black")
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def test_scans_are_read_in_the_scripts_the_ocr_model_holds_and_refused_in_the_others(ctx, principal) -> None:
    from ragloom.schemas.datasets import KBCreate
    from ragloom.service import knowledgebases
    from ragloom.service.documents import catalog
    from tests.test_retrieval import _drain

    sans = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
    cases = [("de", "wartung.png", _png("Die Pumpen werden jedes Quartal gewartet.", sans)),
             ("ru", "nasos.png", _png("Насосы проверяют каждый квартал.", sans))]
    for language, name, data in cases:
        with ctx.db.session() as s:
            spec = KBCreate(name=f"scans-{language}", language=language)
            knowledgebases.create(ctx, s, principal=principal, spec=spec)
        with ctx.db.session() as s:
            ids = [d.id for d in catalog.add_documents(ctx, s, principal=principal, kb_id=f"scans-{language}",
                                                       uploads=[catalog.Upload(filename=name, data=data)])]
        _drain(ctx, principal, f"scans-{language}", ids)
    assert _top(ctx, principal, "scans-de", "Wann wird die Pumpe gewartet?", "keyword") == "wartung.png"
    with ctx.db.session() as s:
        docs, _ = catalog.list_documents(s, principal=principal, kb_id="scans-ru")
    assert [d.status for d in docs] == ["failed"]
    assert "scanned pages in Russian (Cyrillic script) are not read" in (docs[0].message or ""), docs[0].message
