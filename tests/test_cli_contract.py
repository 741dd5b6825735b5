"""The CLI's machine contract (issue 9, points 7 and 8), through the real command in a subprocess.

``--json`` is accepted before or after the sub-command with the same output; under ``--json`` stdout
is exactly one JSON document even when something is logged; ``--help`` shows no type after flags;
tables fit 80 columns without cutting ids; a port clash fails clearly before announcing a server."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import click
import pytest
import typer.main
from typer.testing import CliRunner

from ragloom.cli import app
from ragloom.cli._app import hoist_json
from tests.shared import child_environment


def ragloom(home: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = child_environment()
    return subprocess.run([sys.executable, "-m", "ragloom.cli", "--home", str(home), *args], capture_output=True,
                          text=True, env={**base, **(env or {})}, timeout=600)


def one_json(proc: subprocess.CompletedProcess[str]) -> object:
    """stdout parsed as exactly one JSON document (json.loads refuses anything before or after it)."""
    assert proc.stdout.strip(), f"nothing on stdout; stderr:\n{proc.stderr}"
    return json.loads(proc.stdout)


# ---------------------------------------------------------------- --json anywhere


def test_hoist_json_moves_the_flag_to_the_front_but_not_past_a_double_dash() -> None:
    assert hoist_json(["search", "kb", "q", "--top-n", "6", "--json"]) == ["--json", "search", "kb", "q", "--top-n",
                                                                            "6"]
    assert hoist_json(["--json", "kb", "list"]) == ["--json", "kb", "list"]
    assert hoist_json(["kb", "list", "--json", "--json"]) == ["--json", "kb", "list"]
    assert hoist_json(["search", "kb", "--", "--json"]) == ["search", "kb", "--", "--json"]
    assert hoist_json(["docs", "kb"]) == ["docs", "kb"]


@pytest.mark.slow
def test_json_before_or_after_the_command_prints_the_same_document(tmp_path: Path) -> None:
    home, notes = tmp_path / "home", tmp_path / "a-rather-long-document-name-for-narrow-tables.md"
    notes.write_text("# Lab notes\n\nThe gateway address is 10.1.2.3 for the lab network.\n\n"
                     "## Backups\n\nBackups run nightly at 02:00 and are kept for thirty days.\n")
    assert one_json(ragloom(home, "kb", "create", "notes", "--json"))["name"] == "notes"  # type: ignore[index]
    # --log-level INFO: ingestion logs while the command prints its JSON; stdout must still parse
    added = ragloom(home, "add", "notes", str(notes), "--json", env={"RAGLOOM_LOG_LEVEL": "INFO"})
    assert added.returncode == 0, added.stderr
    assert one_json(added)["failed"] == 0  # type: ignore[index]

    printed: dict[str, object] = {}
    for command in (["kb", "list"], ["docs", "notes"], ["search", "notes", "when do backups run", "--top-n", "2"]):
        before, after = ragloom(home, "--json", *command), ragloom(home, *command, "--json")
        assert before.returncode == after.returncode == 0, (command, before.stderr, after.stderr)
        assert one_json(before) == one_json(after), command
        printed[command[0]] = one_json(after)
    found = printed["search"]
    assert {"chunks"} <= set(found) and "nightly" in found["chunks"][0]["content"]  # type: ignore[index, call-overload]
    assert "doc_id" in found["chunks"][0]  # type: ignore[index]

    # tables at 80 columns in a pipe: nothing wider than 80, no ellipsis, the id whole on one line
    kb_id = printed["kb"]["datasets"][0]["id"]  # type: ignore[index]
    for command in (["kb", "list"], ["docs", "notes"], ["search", "notes", "when do backups run"]):
        shown = ragloom(home, *command, env={"COLUMNS": "80"})
        assert shown.returncode == 0, shown.stderr
        lines = shown.stdout.splitlines()
        assert lines and max(len(line) for line in lines) <= 80, shown.stdout
        assert "…" not in shown.stdout, shown.stdout
        if command == ["kb", "list"]:
            assert any(kb_id in line for line in lines), shown.stdout
    # piped without COLUMNS: one line per row, the long name whole
    piped = ragloom(home, "docs", "notes").stdout
    assert any(notes.name in line and "done" in line for line in piped.splitlines()), piped


def test_stdout_is_one_json_document_when_a_warning_is_logged(tmp_path: Path) -> None:
    tags = tmp_path / "tags.csv"
    tags.write_text("content,tags\nhello world,greeting\n,\nfoo bar,\n")  # rows without tags: a warning
    for args in (["--json", "parse", str(tags), "--method", "tag"], ["parse", str(tags), "--method", "tag", "--json"]):
        proc = ragloom(tmp_path / "home", *args)
        assert proc.returncode == 0, proc.stderr
        assert "rows without tags or content skipped" in proc.stderr  # the warning was logged, on stderr
        parsed = one_json(proc)
        assert parsed["file"] == "tags.csv" and len(parsed["chunks"]) == 1  # type: ignore[index]


def test_an_error_under_json_is_one_json_object_on_stdout_and_a_message_on_stderr(tmp_path: Path) -> None:
    proc = ragloom(tmp_path / "home", "parse", str(tmp_path / "missing.txt"), "--json")
    assert proc.returncode == 2
    assert one_json(proc) == {"error": "RagloomError", "message": f"no such file: {tmp_path / 'missing.txt'}"}
    assert "no such file" in proc.stderr


# ---------------------------------------------------------------- --help


def _commands(group: click.Command, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [prefix]
    for name, command in getattr(group, "commands", {}).items():
        if hasattr(command, "commands"):
            found += _commands(command, (*prefix, name))
        else:
            found.append((*prefix, name))
    return found


def test_help_shows_no_type_after_flags() -> None:
    commands = _commands(typer.main.get_command(app))
    assert ("search",) in commands and ("kb", "list") in commands and ("gc",) in commands
    runner = CliRunner()
    for command in commands:
        result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "200"}, terminal_width=200)
        assert result.exit_code == 0, (command, result.output)
        assert "<bool>" not in result.output, (command, result.output)
        assert "--help" in result.output
    search_help = runner.invoke(app, ["search", "--help"], env={"COLUMNS": "200"}).output
    assert "--explain" in search_help and "<int>" in search_help  # flags listed; valued options keep their type


# ---------------------------------------------------------------- serve


@pytest.mark.slow
def test_a_port_clash_fails_clearly_without_announcing_a_server(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = ragloom(tmp_path / "home", "serve", "--host", "127.0.0.1", "--port", str(port), "--workers", "1")
        as_json = ragloom(tmp_path / "home", "serve", "--host", "127.0.0.1", "--port", str(port), "--json")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert f"port {port} is in use" in proc.stderr
    assert "serving on" not in proc.stdout + proc.stderr
    assert as_json.returncode == 2
    assert one_json(as_json)["message"].startswith(f"port {port} is in use")  # type: ignore[index]
