"""Figures (issue 34): a document's pictures become chunks of their own — the picture kept and served, its
caption, the text around it and the text inside it as the chunk's text — and with a vision model (a fake
speaking OpenAI's wire protocol, with image input) a description written once and found by search; the
answer's references and the chat reply point at the picture."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest

from ragloom.config import Settings
from tests.fakes.openai_server import FakeOpenAIServer
from tests.live import app_client

pytestmark = pytest.mark.slow

API = "/api/v1"
SANS = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
DESCRIPTION = ("A bar chart of the Orion pump line's sales: the third quarter has the tallest bar, 42 units, "
               "and the first quarter the shortest, 12 units.")


def chart_png() -> bytes:
    """A bar chart with its labels written in it (what OCR reads in the figure)."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (640, 400), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(SANS, 28)
    for i, (label, height) in enumerate([("Q1", 80), ("Q2", 150), ("Q3", 280), ("Q4", 200)]):
        x = 60 + i * 140
        draw.rectangle((x, 340 - height, x + 80, 340), fill=(40, 90, 200))
        draw.text((x + 18, 350), label, font=font, fill="black")
    draw.text((150, 12), "Orion sales per quarter", font=font, fill="black")
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def docx_with_figure() -> bytes:
    import docx
    from docx.shared import Inches

    doc = docx.Document()
    doc.add_heading("Orion pump line: annual report", level=1)
    doc.add_paragraph("The Orion pump line was sold in four quarters; the chart below shows the units per quarter.")
    doc.add_picture(io.BytesIO(chart_png()), width=Inches(4))
    doc.add_paragraph("Figure 1: Orion sales per quarter", style="Caption")
    doc.add_paragraph("Spare seals for every Orion pump are stocked at the Leeds depot.")
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def describe(body: dict) -> str:
    """The fake vision model: it describes a picture it was sent, and says so when it was sent none."""
    parts = body["messages"][-1]["content"]
    parts = parts if isinstance(parts, list) else []
    images = [p for p in parts if isinstance(p, dict) and p.get("type") == "image_url"]
    if not images:
        return "no picture was sent"
    url = images[0]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]).startswith(b"\x89PNG")
    return DESCRIPTION


def test_a_figure_is_a_chunk_with_its_picture_its_words_and_a_vision_model_s_description(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=describe) as vision:
        settings = Settings(home=tmp_path / "home", workers=0, rate_limit_per_minute=0, _env_file=None,
                            outbound_allow=["127.0.0.1/32"])
        with app_client(settings) as (client, ctx, auth):
            from ragloom.worker import run_until

            made = client.put(f"{API}/providers/vision", headers=auth,
                              json={"base_url": vision.base_url, "model": "fake-vision"})
            assert made.status_code == 200, made.text
            tested = client.post(f"{API}/providers/vision/test", headers=auth).json()
            assert tested["ok"], tested
            ds = client.post(f"{API}/datasets", headers=auth, json={"name": "reports"}).json()["id"]
            # before parsing, the chunking preview says what the figures would cost
            preview = client.post(f"{API}/datasets/{ds}/chunking-preview", headers=auth,
                                  files=[("file", ("report.docx", docx_with_figure()))])
            assert preview.status_code == 200, preview.text
            assert {k: preview.json()[k] for k in ("figures", "vision_model", "vision_calls")} == {
                "figures": 1, "vision_model": "fake-vision", "vision_calls": 1}
            up = client.post(f"{API}/datasets/{ds}/documents", headers=auth,
                             files=[("file", ("report.docx", docx_with_figure()))])
            assert up.status_code == 201, up.text
            doc = up.json()["documents"][0]["id"]

            def done() -> bool:
                status = client.get(f"{API}/datasets/{ds}/documents/{doc}", headers=auth).json()["status"]
                return status in ("done", "failed")

            run_until(ctx, done, poll=0.01)
            calls = [r for r in vision.requests if r.path.endswith("/chat/completions")]
            assert len(calls) == 2  # the connection test, then the one figure
            again = client.post(f"{API}/datasets/{ds}/chunking-preview", headers=auth, data={"document_id": doc})
            assert again.json()["figures"] == 1 and again.json()["vision_calls"] == 0  # described already

            found = client.post(f"{API}/retrieval", headers=auth, json={
                "question": "Which quarter had the tallest bar in the sales chart?", "dataset_ids": [ds],
                "page_size": 3}).json()["chunks"]
            figure = next(c for c in found if c.get("figure"))
            assert found[0] is figure, [c["content"][:60] for c in found]
            text = figure["content"]
            assert "Figure 1: Orion sales per quarter" in text  # the caption
            assert DESCRIPTION in text  # the vision model's description
            assert "Q3" in text  # read inside the picture by OCR
            assert "sold in four quarters" in text and "Leeds depot" in text  # the paragraphs around it
            picture = client.get(figure["figure"], headers=auth)
            assert picture.status_code == 200 and picture.headers["content-type"] == "image/png"
            from PIL import Image

            with Image.open(io.BytesIO(picture.content)) as shown:
                assert shown.size == (640, 400)
            # someone without access to the document gets no picture
            assert client.get(figure["figure"]).status_code == 401
            other = figure["figure"].replace(f"/chunks/{figure['chunk_id']}/", "/chunks/not-a-figure/")
            assert client.get(other, headers=auth).status_code == 404

            replied = client.post(f"{API}/answer", headers=auth, json={
                "question": "How many units were sold in the third quarter?", "dataset_ids": [ds]}).json()
            assert any(r.get("figure") == figure["figure"] for r in replied["references"]), replied

            # a share link's visitor sees the cited figure through the link, not through the workspace's route
            chat = client.post(f"{API}/chats", headers=auth, json={"name": "Reports", "dataset_ids": [ds]}).json()
            token = client.post(f"{API}/chats/{chat['id']}/shares", headers=auth, json={}).json()["token"]
            visited = client.post(f"{API}/share/{token}/completions",
                                  json={"question": "How many units were sold in the third quarter?"}).json()
            shown = [r["figure"] for r in visited["references"] if r.get("figure")]
            assert shown == [f"{API}/share/{token}/documents/{doc}/figures/{figure['chunk_id']}.png"], visited
            seen = client.get(shown[0])
            assert seen.status_code == 200 and seen.content == picture.content
            assert client.get(shown[0].replace(token, "x" * 32)).status_code == 404

            # a re-parse asks the model nothing new: the description comes from the workspace's cache
            assert client.post(f"{API}/datasets/{ds}/documents/{doc}/reparse", headers=auth).status_code == 202
            run_until(ctx, done, poll=0.01)
            assert len([r for r in vision.requests if r.path.endswith("/chat/completions")]) == 2


def test_figures_of_a_pdf_and_a_deck_without_a_vision_model(settings: Settings, tmp_path: Path) -> None:
    from fpdf import FPDF
    from pptx import Presentation
    from pptx.util import Inches

    chart = tmp_path / "chart.png"
    chart.write_bytes(chart_png())
    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.multi_cell(0, 8, "The Orion pump line was sold in four quarters, as the chart shows.")
    pdf.image(str(chart), x=30, y=40, w=120)
    pdf.set_xy(30, 120)
    pdf.multi_cell(0, 8, "Figure 2: Orion sales per quarter")
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Quarterly sales"
    slide.shapes.add_picture(str(chart), Inches(1), Inches(2), width=Inches(5))
    slides = io.BytesIO()
    deck.save(slides)
    inline = base64.b64encode(chart_png()).decode()
    page = (f'<html><body><h1>Sales</h1><p>The Orion pump line was sold in four quarters.</p><figure>'
            f'<img src="data:image/png;base64,{inline}" alt="Bar chart of Orion sales">'
            f'<figcaption>Figure 3: Orion sales per quarter</figcaption></figure>'
            f'<img src="https://example.com/not-fetched.png" alt="a linked picture"></body></html>')
    with app_client(settings) as (client, ctx, auth):
        from ragloom.worker import run_until

        ds = client.post(f"{API}/datasets", headers=auth, json={"name": "figures"}).json()["id"]
        files = [("file", ("sales.pdf", bytes(pdf.output()))), ("file", ("sales.pptx", slides.getvalue())),
                 ("file", ("sales.html", page.encode()))]
        assert client.post(f"{API}/datasets/{ds}/documents", headers=auth, files=files).status_code == 201

        def done() -> bool:
            docs = client.get(f"{API}/datasets/{ds}/documents", headers=auth).json()["documents"]
            return all(d["status"] in ("done", "failed") for d in docs)

        run_until(ctx, done, poll=0.01)
        docs = {d["name"]: d for d in client.get(f"{API}/datasets/{ds}/documents", headers=auth).json()["documents"]}
        assert {d["status"] for d in docs.values()} == {"done"}, docs
        found = client.post(f"{API}/retrieval", headers=auth, json={
            "question": "Orion sales per quarter chart Q3", "dataset_ids": [ds], "page_size": 10}).json()["chunks"]
        figures = {c["document_name"]: c for c in found if c.get("figure")}
        assert set(figures) == {"sales.pdf", "sales.pptx", "sales.html"}, [
            (c["document_name"], c["content"][:50]) for c in found]
        assert "Figure 3: Orion sales per quarter" in figures["sales.html"]["content"]
        cropped = figures["sales.pdf"]
        assert "Figure 2: Orion sales per quarter" in cropped["content"] and "Q3" in cropped["content"]
        page, left, right, top, bottom = cropped["positions"][0]
        assert page == 1 and right - left > 200 and bottom - top > 100  # the figure's region on its page
        for chunk in figures.values():
            got = client.get(chunk["figure"], headers=auth)
            assert got.status_code == 200 and got.content.startswith(b"\x89PNG")


def test_a_damaged_or_tiny_picture_is_left_out_and_the_document_read() -> None:
    from ragloom.dataflow import Block, BlockKind, ParsedDocument
    from ragloom.ingest import figures

    png = chart_png()
    broken = png[:37] + b"XXXX" + png[41:]  # the first chunk's type: Pillow raises SyntaxError
    cut = png[: len(png) // 2]
    tiny = io.BytesIO()
    from PIL import Image

    Image.new("RGB", (16, 16), "red").save(tiny, format="PNG")
    eps = b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 100 100\nshowpage\n"  # never handed to Ghostscript
    blocks = [Block(text="", kind=BlockKind.FIGURE, image=data) for data in (broken, cut, tiny.getvalue(), eps, png)]
    parsed = ParsedDocument(blocks=[Block(text="Before the pictures."), *blocks])
    found = figures.find_figures(parsed, b"", "report.docx")
    assert [f.block for f in found] == [blocks[-1]] and (found[0].width, found[0].height) == (640, 400)
    assert found[0].before == "Before the pictures."
