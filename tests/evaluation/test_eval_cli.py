"""``ragloom eval`` as a user runs it: in a scratch data directory of its own, never in theirs (a
running server's workers never take its tasks, ``ragloom gc`` finds nothing it left); ``--kb``
reads theirs and adds nothing; ``--plot`` without matplotlib fails before any work."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragloom.cli import app
from tests.shared import child_environment

SMALL = ("--limit", "2", "--corpus-limit", "10", "--mode", "keyword")


def ragloom(home: Path, tmp: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``ragloom --home HOME ARGS`` in a subprocess, its temporary files under ``tmp``."""
    env = child_environment()
    env["TMPDIR"] = str(tmp)
    proc = subprocess.run([sys.executable, "-m", "ragloom.cli", "--home", str(home), *args],
                          capture_output=True, text=True, env=env, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError(f"ragloom {args} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


def counts(home: Path) -> dict[str, int]:
    with sqlite3.connect(home / "ragloom.db") as db:
        return {t: db.execute(f"select count(*) from {t}").fetchone()[0]
                for t in ("knowledgebase", "document", "task")}


def stored_files(home: Path) -> list[Path]:
    return [p for p in (home / "files").rglob("*") if p.is_file()]


@pytest.fixture
def user(tmp_path: Path) -> tuple[Path, Path]:
    """The user's data directory, holding one empty knowledge base, and the temporary folder."""
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    tmp.mkdir()
    ragloom(home, tmp, "kb", "create", "mine")
    return home, tmp


def test_eval_runs_in_a_scratch_data_directory_and_leaves_none(user: tuple[Path, Path]) -> None:
    home, tmp = user
    before = counts(home)
    report = json.loads(ragloom(home, tmp, "--json", "eval", "builtin:en", *SMALL).stdout)
    assert report["scratch"] and report["knowledge_base"].startswith("eval-")
    assert report["modes"][0]["mode"] == "keyword" and report["queries"] == 2 and report["corpus_size"] == 10
    assert counts(home) == before == {"knowledgebase": 1, "document": 0, "task": 0}
    assert not stored_files(home)
    assert not list(tmp.iterdir())  # the scratch directory is gone
    gc = ragloom(home, tmp, "gc")
    assert gc.returncode == 0


def test_eval_keep_keeps_the_scratch_directory_and_says_where(user: tuple[Path, Path]) -> None:
    home, tmp = user
    proc = ragloom(home, tmp, "eval", "builtin:en", *SMALL, "--keep")
    [kept] = list(tmp.iterdir())
    assert f"Scratch data directory kept: {kept}" in " ".join(proc.stderr.split())
    assert counts(home)["document"] == 0 and counts(kept)["document"] == 10
    listed = json.loads(ragloom(kept, tmp, "--json", "kb", "list").stdout)
    assert [kb["name"] for kb in listed["datasets"]] == [json.loads(
        ragloom(kept, tmp, "--json", "kb", "list").stdout)["datasets"][0]["name"]]
    assert listed["datasets"][0]["name"].startswith("eval-") and listed["datasets"][0]["document_count"] == 10


def test_eval_of_an_existing_kb_adds_no_document(user: tuple[Path, Path]) -> None:
    home, tmp = user
    report = json.loads(ragloom(home, tmp, "--json", "eval", "builtin:en", "--kb", "mine", *SMALL).stdout)
    assert report["knowledge_base"] == "mine" and not report["scratch"]
    assert any("corpus documents are not in mine" in n for n in report["notes"])
    assert counts(home) == {"knowledgebase": 1, "document": 0, "task": 0} and not stored_files(home)
    refused = ragloom(home, tmp, "eval", "builtin:en", "--kb", "mine", "--enrich", "kg", check=False)
    assert refused.returncode != 0 and "scratch knowledge base only" in refused.stderr


def test_plot_without_matplotlib_fails_at_once_naming_the_extra(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if it were not installed
    home = tmp_path / "home"
    result = CliRunner().invoke(app, ["--home", str(home), "eval", "builtin:en", "--plot", str(tmp_path / "c.png")])
    assert result.exit_code != 0
    assert "pip install 'ragloom[plot]'" in str(result.exception)
    assert not home.exists()  # before any work: not even the data directory
    # and the option's help names the extra as it is typed (not eaten as console markup)
    shown = CliRunner().invoke(app, ["eval", "--help"], env={"COLUMNS": "200"})
    assert "pip install 'ragloom[plot]'" in shown.output
    # the error a person sees on the console says it as written too
    code = ("import sys; sys.modules['matplotlib'] = None; sys.argv = ['ragloom', '--home', sys.argv[1], 'eval', "
            "'builtin:en', '--plot', sys.argv[2]]; from ragloom.cli import main; main()")
    run = subprocess.run([sys.executable, "-c", code, str(home), str(tmp_path / "c.png")], capture_output=True,
                         text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert run.returncode == 2 and "pip install 'ragloom[plot]'" in run.stderr, run.stderr
