"""`ragloom build raptor KB`, `ragloom builds KB` and `ragloom build delete KB raptor` as a user runs them:
separate processes on a data directory, and the same commands against a live server (one code path: the
same results)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli import ragloom
from tests.knowledge.raptor_corpus import CHUNKING, corpus
from tests.processes import admin_key, served

pytestmark = pytest.mark.slow


def scenario(home: Path, folder: Path, *remote: str) -> dict[str, Any]:
    def run(*args: str) -> Any:
        return json.loads(ragloom(home, *remote, "--json", *args).stdout)

    run("kb", "create", "manuals", "--config", json.dumps(CHUNKING))
    run("add", "manuals", str(folder))
    estimate = run("build", "raptor", "manuals", "--estimate")
    built = run("build", "raptor", "manuals")
    again = run("build", "raptor", "manuals", "--document", "plant-manual.md")
    listed = run("builds", "manuals")
    chunks = run("chunks", "manuals", "plant-manual.md")
    dropped = run("build", "delete", "manuals", "raptor", "--yes")
    after = run("chunks", "manuals", "plant-manual.md")
    return {"estimate": estimate, "built": built, "again": again, "listed": listed, "chunks": chunks,
            "dropped": dropped, "after": after}


def check(out: dict[str, Any]) -> None:
    estimate = out["estimate"]
    assert estimate["dry_run"] and estimate["builds"] == []
    assert estimate["estimate"]["mode"] == "extractive" and estimate["estimate"]["documents_to_build"] == 3
    (build,) = out["built"]["builds"]
    assert build["status"] == "done" and build["stats"]["documents_built"] == 3, build
    (again,) = out["again"]["builds"]
    assert again["status"] == "done" and again["stats"]["documents_current"] == 1 and again["document_id"]
    assert out["listed"]["total"] == 2 and [b["id"] for b in out["listed"]["builds"]] == [again["id"], build["id"]]
    summaries = [c for c in out["chunks"]["chunks"] if c["kind"] == "summary"]
    assert summaries and all(c["source_ids"] and c["built_by"] == "raptor:extractive" for c in summaries)
    assert out["dropped"]["kind"] == "raptor" and out["dropped"]["removed"] >= len(summaries)
    assert [c for c in out["after"]["chunks"] if c["kind"] == "summary"] == []


def test_build_raptor_locally_and_against_a_server(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, data in corpus().items():
        (folder / name).write_bytes(data)
    local = scenario(tmp_path / "local", folder)
    check(local)
    human = ragloom(tmp_path / "local", "build", "raptor", "manuals", "--estimate").stdout
    assert "estimate" in human and "extractive" in human and "3 to build of 3" in human  # deleted: all again
    table = ragloom(tmp_path / "local", "builds", "manuals").stdout
    assert "raptor" in table and "done" in table

    with served(tmp_path / "server-home") as (_, url):
        key = admin_key(tmp_path / "server-home", url)
        remote = scenario(tmp_path / "unused", folder, "--url", url, "--api-key", key)
        check(remote)
        refused = ragloom(tmp_path / "unused", "--url", url, "--api-key", key, "build", "raptor", "nowhere",
                          check=False)
        assert refused.returncode == 2 and "404" in refused.stderr
    assert not (tmp_path / "unused").exists()  # the remote commands never used a local data directory
    assert local["estimate"]["estimate"] == remote["estimate"]["estimate"]
    assert [c["content"] for c in local["chunks"]["chunks"]] == [c["content"] for c in remote["chunks"]["chunks"]]
