"""`ragloom sources ...` on a data directory whose server allows folder sources under a folder the test
writes (RAGLOOM_SOURCE_ROOTS): the commands run in this process (Typer's runner), one subprocess shows
the refusal a user sees. The README's Sources section runs the same commands in processes
(tests/test_readme.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.cli import ragloom
from tests.sources.helpers import write


def test_a_folder_kept_in_sync_from_the_command_line(tmp_path: Path, cli_state: object,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from ragloom.cli import app

    home, shared = tmp_path / "home", tmp_path / "shared"
    folder = shared / "handbook"
    write(folder / "pump.md", "# Pump\n\nThe Orion pump needs grease every 450 operating hours.\n")
    write(folder / "valve.md", "# Valve\n\nThe valve is blue.\n")
    write(folder / "drafts" / "todo.md", "# Todo\n")
    env = {"RAGLOOM_SOURCE_ROOTS": str(shared)}
    monkeypatch.setenv("RAGLOOM_SOURCE_ROOTS", str(shared))
    runner = CliRunner()

    def run(*args: str, as_json: bool = True) -> Any:
        res = runner.invoke(app, ["--home", str(home), *(["--json"] if as_json else []), *args])
        assert res.exit_code == 0, (args, res.output, res.exception)
        return json.loads(res.stdout) if as_json else res.stdout

    run("kb", "create", "manuals")
    added = run("sources", "add", "manuals", "--type", "folder", "--path", str(folder), "--exclude", "drafts/**")
    assert added["name"] == "handbook" and added["type"] == "folder"
    first = run("sources", "sync", "manuals", "handbook")
    assert first["status"] == "done" and (first["stats"]["new"], first["stats"]["skipped"]) == (2, 1)
    docs = {d["name"]: d for d in run("docs", "manuals")["documents"]}
    assert set(docs) == {"pump.md", "valve.md"} and docs["pump.md"]["status"] == "done"
    hits = run("search", "manuals", "How often does the Orion pump need grease?")["chunks"]
    assert "450 operating hours" in hits[0]["content"]

    write(folder / "pump.md", "# Pump\n\nThe Orion pump needs grease every 500 operating hours.\n")
    (folder / "valve.md").unlink()
    second = run("sources", "sync", "manuals", "handbook")
    assert (second["stats"]["changed"], second["stats"]["deleted"], second["stats"]["new"]) == (1, 1, 0)
    hits = run("search", "manuals", "How often does the Orion pump need grease?")["chunks"]
    assert "500 operating hours" in hits[0]["content"]

    assert run("sources", "pause", "manuals", "handbook")["paused"] is True
    assert run("sources", "resume", "manuals", "handbook")["paused"] is False
    listed = run("sources", "list", "manuals")
    assert listed["total"] == 1 and listed["sources"][0]["documents"] == 1
    shown = run("sources", "show", "manuals", "handbook")
    assert shown["syncs"]["total"] == 2 and shown["source"]["last_sync"]["id"] == second["id"]
    table = run("sources", "syncs", "manuals", "handbook", as_json=False)
    assert "done" in table and "unchanged" in table
    refused = ragloom(home, "sources", "add", "manuals", "--type", "folder", "--path", str(tmp_path), check=False,
                      **env)
    assert refused.returncode == 2 and "RAGLOOM_SOURCE_ROOTS" in refused.stderr
    run("sources", "remove", "manuals", "handbook")
    assert run("docs", "manuals")["documents"] == []
