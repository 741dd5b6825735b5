"""`ragloom quickstart` and the sample documents it loads (src/ragloom/samples, scripts/make_samples.py)."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
from pathlib import Path
from typing import Any

import pytest

from ragloom.cli.quickstart import QUESTIONS, SAMPLE_FILES, samples_dir

ROOT = Path(__file__).resolve().parents[1]


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("make_samples", ROOT / "scripts" / "make_samples.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shipped_samples_are_what_the_generator_makes(tmp_path: Path) -> None:
    """The committed files are the script's output, byte for byte (it is deterministic), and small."""
    made = _generator().main(tmp_path)
    shipped = samples_dir()
    assert sorted(p.name for p in made) == sorted([*SAMPLE_FILES, "README.md"])
    for path in made:
        assert (shipped / path.name).read_bytes() == path.read_bytes(), f"{path.name}: run scripts/make_samples.py"
    assert sum(p.stat().st_size for p in made) < 200_000


def test_each_sample_opens_in_its_format() -> None:
    import docx
    import pdfplumber
    from PIL import Image

    folder = samples_dir()
    with pdfplumber.open(folder / "orion-manual.pdf") as pdf:
        text = "\n".join(page.extract_text() or "" for page in pdf.pages)
        assert len(pdf.pages) == 3 and pdf.pages[1].extract_tables()
    assert "every 450 operating hours" in text
    with Image.open(folder / "service-bulletin.png") as image:
        assert image.mode == "L" and image.size == (1240, 820)
    policy = docx.Document(str(folder / "travel-policy.docx"))
    assert any("within 30 days" in p.text for p in policy.paragraphs) and policy.tables
    assert "28 days of paid annual leave" in (folder / "hr-leave.html").read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO((folder / "topics.csv").read_text(encoding="utf-8"))))
    assert rows[0] == ["question", "answer", "tags"] and all(len(r) == 3 for r in rows)
    assert "活性炭滤芯每六个月更换一次" in (folder / "care-guide-zh.md").read_text(encoding="utf-8")
    assert "Apache-2.0" in (folder / "README.md").read_text(encoding="utf-8")


def test_the_package_data_ships_the_samples() -> None:
    """pyproject's package data names the samples folder, so a wheel carries it."""
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["ragloom"]
    package = ROOT / "src" / "ragloom"
    shipped = {p.relative_to(package / "samples").as_posix() for pattern in data for p in package.glob(pattern)
               if p.is_relative_to(package / "samples")}
    assert shipped == {*SAMPLE_FILES, "README.md"}
    assert samples_dir().resolve() == (package / "samples").resolve()


@pytest.mark.slow
def test_quickstart_loads_the_samples_makes_an_assistant_and_runs_twice(tmp_path: Path, cli_state: object) -> None:
    from typer.testing import CliRunner

    from ragloom.cli import app

    home = str(tmp_path / "home")
    runner = CliRunner()

    def run(*args: str, as_json: bool = True, code: int = 0) -> Any:
        res = runner.invoke(app, ["--home", home, *(["--json"] if as_json else []), *args])
        assert res.exit_code == code, res.output
        return json.loads(res.stdout) if as_json else res.stdout

    first = run("quickstart")
    docs = first["documents"]
    assert sorted(d["name"] for d in docs) == sorted(SAMPLE_FILES)
    assert all(d["status"] == "done" and d["chunk_count"] > 0 for d in docs), docs
    assert first["failed"] == 0 and first["knowledge_base"]["created"] and first["assistant"]["created"]
    assert sorted(first["added"]) == sorted(SAMPLE_FILES) and first["already_there"] == []
    assert [q["question"] for q in first["questions"]] == [q for q, _ in QUESTIONS]
    assert any(c.startswith("ragloom ask samples ") for c in first["commands"])
    assert first["chat_url"] is None  # no server address known in local mode

    names = [a["name"] for a in run("assistants", "list")["assistants"]]
    assert names == ["sample helper"]
    helper = run("assistants", "show", "sample helper")
    assert [d["name"] for d in helper["datasets"]] == ["samples"]

    # the printed questions answer from the right sample, extractively (no chat model is set)
    answer = run("ask", "samples", QUESTIONS[0][0])
    assert answer["model"] == "extractive" and "450 operating hours" in answer["answer"], answer
    assert answer["references"][0]["document_name"] == "orion-manual.pdf", answer["references"]
    leave = run("ask", "samples", QUESTIONS[1][0])
    assert "28 days" in leave["answer"] and leave["references"][0]["document_name"] == "hr-leave.html", leave
    zh = run("ask", "samples", QUESTIONS[2][0])
    assert "六个月" in zh["answer"] and zh["references"][0]["document_name"] == "care-guide-zh.md", zh
    scanned = run("search", "samples", "which seal kit fixes the leaking shaft seals")["chunks"]
    assert scanned[0]["document_name"] == "service-bulletin.png" and "OP2-114B" in scanned[0]["content"], scanned

    # again: nothing uploaded twice, the knowledge base and the assistant reused; the human output too
    second = run("quickstart")
    assert second["added"] == [] and sorted(second["already_there"]) == sorted(SAMPLE_FILES)
    assert not second["knowledge_base"]["created"] and not second["assistant"]["created"]
    assert second["assistant"]["id"] == first["assistant"]["id"]
    assert len(run("docs", "samples")["documents"]) == len(SAMPLE_FILES)
    assert len(run("assistants", "list")["assistants"]) == 1
    shown = run("quickstart", as_json=False)
    assert "Questions to try" in shown and QUESTIONS[0][0] in shown and "/ui/chat/" in shown, shown


def test_the_first_start_hint_names_the_data_directory_when_it_is_not_the_default(tmp_path: Path) -> None:
    from ragloom.cli.server import quickstart_hint

    assert "ragloom quickstart`" in quickstart_hint(Path(".ragloom").resolve())
    assert f"ragloom --home {tmp_path / 'h'} quickstart`" in quickstart_hint(tmp_path / "h")


@pytest.mark.slow
def test_quickstart_against_a_server_prints_the_chat_page(tmp_path: Path, cli_state: object) -> None:
    """With --url the server parses the samples; the reply names the assistant's page of the web UI. The
    server's first start pointed at quickstart (its output is a log here, not a terminal)."""
    from typer.testing import CliRunner

    from ragloom.cli import app
    from tests.processes import admin_key, served

    home = tmp_path / "server-home"
    with served(home, workers_=1, OMP_WAIT_POLICY="PASSIVE") as (_, url):
        key = admin_key(home, url)
        res = CliRunner().invoke(app, ["--url", url, "--api-key", key, "--json", "quickstart", "--kb", "demo"])
        assert res.exit_code == 0, res.output
        body = json.loads(res.stdout)
        assert all(d["status"] == "done" and d["chunk_count"] > 0 for d in body["documents"]), body["documents"]
        assert len(body["documents"]) == len(SAMPLE_FILES)
        assert body["chat_url"] == f"{url}/ui/chat/{body['assistant']['id']}"
        assert body["commands"][0].startswith("ragloom ask demo ")
        log = (home.parent / f"serve-{url.rsplit(':', 1)[1]}.log").read_text()
    assert f"ragloom --home {home} quickstart" in log, log
    assert not (tmp_path / "home").exists()
