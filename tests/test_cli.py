"""End to end through the CLI, as a user runs it: one command after another on one data directory
(``tests/cli.py``: each command in this process, or each in a child process with RAGLOOM_TEST_CLI=process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import ragloom
from tests.corpus import DOCX_QUESTION, PAGE2_QUESTION, write_manual_pdf, write_policy_docx

pytestmark = pytest.mark.slow


def test_cli_add_search_ask(tmp_path: Path) -> None:
    home = tmp_path / "home"
    pdf, docx = tmp_path / "orion-manual.pdf", tmp_path / "hr-policy.docx"
    write_manual_pdf(pdf)
    write_policy_docx(docx)
    created = json.loads(ragloom(home, "--json", "kb", "create", "manuals").stdout)
    assert created["name"] == "manuals"
    added = json.loads(ragloom(home, "--json", "add", "manuals", str(pdf), str(docx)).stdout)
    assert added["failed"] == 0 and {d["status"] for d in added["documents"]} == {"done"}
    listed = json.loads(ragloom(home, "--json", "docs", "manuals").stdout)
    assert sorted(d["name"] for d in listed["documents"]) == ["hr-policy.docx", "orion-manual.pdf"]

    found = json.loads(ragloom(home, "--json", "search", "manuals", PAGE2_QUESTION, "--top-n", "3").stdout)
    top = found["chunks"][0]
    assert top["document_name"] == "orion-manual.pdf"
    assert "450 operating hours" in top["content"]
    assert top["positions"] and {p[0] for p in top["positions"]} == {2}
    page, left, right, top_y, bottom = top["positions"][0]
    assert 0 <= left < right <= 595.5 and 0 <= top_y < bottom <= 842.5
    for key in ("chunk_id", "doc_id", "similarity", "term_similarity", "vector_similarity"):
        assert key in top

    answer = json.loads(ragloom(home, "--json", "ask", "manuals", PAGE2_QUESTION).stdout)
    assert answer["model"] == "extractive"
    cited = {r["chunk_id"] for r in answer["references"]}
    assert top["chunk_id"] in cited
    assert "[ID:" in answer["answer"] and "450" in answer["answer"]

    docx_hit = json.loads(ragloom(home, "--json", "search", "manuals", DOCX_QUESTION).stdout)["chunks"][0]
    assert docx_hit["document_name"] == "hr-policy.docx" and "twelve vacation days" in docx_hit["content"]


def test_cli_reports_failures_and_exits_non_zero(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "empty.txt").write_bytes(b"")
    (folder / "good.md").write_text("# Notes\n\nThe gateway address is 10.1.2.3 for the lab network.\n")
    ragloom(home, "kb", "create", "notes")
    proc = ragloom(home, "--json", "add", "notes", str(folder), check=False)
    assert proc.returncode == 1
    out = json.loads(proc.stdout)
    by_name = {d["name"]: d for d in out["documents"]}
    assert by_name["good.md"]["status"] == "done"
    assert by_name["empty.txt"]["status"] == "failed" and "empty" in by_name["empty.txt"]["message"]
    # chunking parameters without a method: these files alone, with the knowledge base's method
    (folder / "long.md").write_text("# Lab\n\n" + "\n\n".join(f"## Room {i}\n\nThe lab room {i} keeps the spare "
                                     "cables, the patch panels and the label printer." for i in range(6)))
    small = json.loads(ragloom(home, "--json", "add", "notes", str(folder / "long.md"), "--config",
                               '{"chunk_token_num": 24}').stdout)["documents"][0]
    assert small["parser_config"]["chunk_token_num"] == 24 and small["chunk_method"] == "naive"
    assert small["chunk_count"] >= 6, small
    missing = ragloom(home, "search", "nope", "anything", check=False)
    assert missing.returncode != 0 and "not found" in missing.stderr


def test_cli_search_route_shows_the_picked_knowledge_bases_locally_and_over_http(tmp_path: Path) -> None:
    from ragloom.config import Settings
    from tests.live import live_server

    home = tmp_path / "home"
    (tmp_path / "bread.md").write_text("# Sourdough\n\nA sourdough starter is fed with equal weights of flour "
                                       "and water daily.\n")
    (tmp_path / "router.md").write_text("# Network\n\nReset the router by holding the recessed button for "
                                        "ten seconds.\n")
    ragloom(home, "kb", "create", "kitchen", "--description",
            "Cooking recipes, baking bread and sourdough, kitchen hygiene")
    ragloom(home, "kb", "create", "it", "--description", "Network administration: routers, Wi-Fi, VPN and firewalls")
    ragloom(home, "add", "kitchen", str(tmp_path / "bread.md"))
    ragloom(home, "add", "it", str(tmp_path / "router.md"))
    question = "how do I reset the wifi router"

    local = json.loads(ragloom(home, "--json", "search", "*", question, "--route").stdout)
    routing = local["routing"]
    assert [r["name"] for r in routing if r["chosen"]] == ["it"]
    assert {r["name"] for r in routing} == {"kitchen", "it"} and routing[0]["score"] > routing[1]["score"]
    assert local["chunks"] and {c["document_name"] for c in local["chunks"]} == {"router.md"}

    human = ragloom(home, "search", "kitchen,it", question, "--route").stdout
    assert "routing" in human and f"{routing[0]['score']:.3f}" in human and f"{routing[1]['score']:.3f}" in human
    assert "router.md" in human

    key = json.loads(ragloom(home, "--json", "keys", "create").stdout)["api_key"]
    with live_server(Settings(home=home, _env_file=None), workers=0) as live:
        remote = json.loads(ragloom(home, "--url", live.url, "--api-key", key, "--json", "search", "*", question,
                                    "--route").stdout)
    assert remote["routing"] == routing
    assert [c["chunk_id"] for c in remote["chunks"]] == [c["chunk_id"] for c in local["chunks"]]
