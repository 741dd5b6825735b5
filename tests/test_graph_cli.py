"""`ragloom build graph KB` and `ragloom graph KB` as a user runs them (a separate process on a data
directory): the offline method, the estimate, the table of entities and communities, and the 404."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import ragloom
from tests.test_graph_build import DOCS

pytestmark = pytest.mark.slow


def test_build_and_show_a_graph_from_the_command_line(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, data in DOCS.items():
        (folder / name).write_bytes(data)
    home = tmp_path / "home"

    def run(*args: str) -> dict:
        return json.loads(ragloom(home, "--json", *args).stdout)

    run("kb", "create", "labs", "--config", json.dumps({"chunk_token_num": 40, "heading_prefix": False}))
    run("add", "labs", str(folder))
    missing = ragloom(home, "graph", "labs", check=False)
    assert missing.returncode != 0 and "no knowledge graph" in missing.stderr
    estimate = run("build", "graph", "labs", "--method", "offline", "--estimate")
    assert estimate["dry_run"] and estimate["estimate"]["mode"] == "offline"
    assert estimate["estimate"]["documents_to_build"] == 3
    built = run("build", "graph", "labs")
    (build,) = built["builds"]
    assert build["status"] == "done" and build["stats"]["documents_built"] == 3, build
    shown = run("graph", "labs", "--limit", "5")
    assert len(shown["nodes"]) == 5 and shown["entities"] >= 5
    table = ragloom(home, "graph", "labs").stdout
    assert "Kappa Labs" in table and "pagerank" in table
    bad = ragloom(home, "build", "graph", "labs", "--method", "magic", check=False)
    assert bad.returncode == 2
