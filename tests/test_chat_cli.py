"""Chat from the command line (issue 10): ``ragloom assistants``, ``ragloom sessions`` and ``ragloom chat``,
as a user runs them (separate processes on one data directory, no chat model: extractive answers), and
the same conversation with and without a server."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.cli import ragloom
from tests.corpus import PAGE2_QUESTION, write_manual_pdf
from tests.processes import admin_key, served
from tests.test_cli_local_vs_server import normalise

pytestmark = pytest.mark.slow


def run_json(home: Path, *args: str) -> Any:
    return json.loads(ragloom(home, "--json", *args).stdout)


def ragloom_stdin(home: Path, stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    return ragloom(home, *args, stdin=stdin)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    pdf = tmp_path / "orion-manual.pdf"
    write_manual_pdf(pdf)
    ragloom(home, "kb", "create", "manuals")
    ragloom(home, "add", "manuals", str(pdf))
    return home


def test_assistants_and_a_chat_from_the_command_line(home: Path) -> None:
    created = run_json(home, "assistants", "create", "pumps", "--kb", "manuals", "--opening", "Ask me about pumps.",
                       "--top-n", "4", "--retrieval", '{"fusion": "weighted"}')
    assert created["name"] == "pumps" and created["datasets"][0]["name"] == "manuals"
    assert created["top_n"] == 4 and created["retrieval"]["fusion"] == "weighted"
    assert run_json(home, "assistants", "list")["assistants"][0]["id"] == created["id"]
    assert run_json(home, "assistants", "show", "pumps") == created

    first = run_json(home, "chat", "pumps", "--question", PAGE2_QUESTION)
    assert first["model"] == "extractive" and "450 operating hours" in first["answer"]
    ref = first["references"][0]
    assert ref["document_name"] == "orion-manual.pdf" and ref["positions"][0][0] == 2 and ref["version_id"]
    # a follow-up in the same session: the offline rule carries the subject in
    second = run_json(home, "chat", "pumps", "--session", first["session_id"], "--question",
                      "What about its grease?")
    assert second["session_id"] == first["session_id"]
    assert second["explain"]["rewrite_method"] == "rule" and "Orion" in second["explain"]["standalone_question"]
    assert "K7" in second["answer"]

    # as a person reads it: the answer, then its citations with document and page
    shown = ragloom(home, "chat", "pumps", "-q", PAGE2_QUESTION).stdout
    assert "450 operating hours" in shown and "[ID:0] orion-manual.pdf p.2" in shown

    sessions = run_json(home, "sessions", "list", "pumps")
    assert sessions["total"] == 2 and sessions["sessions"][1]["id"] == first["session_id"]  # newest first
    detail = run_json(home, "sessions", "show", "pumps", first["session_id"])
    assert [m["role"] for m in detail["messages"]] == ["user", "assistant"] * 2
    assert detail["messages"][1]["references"] == first["references"]
    human = ragloom(home, "sessions", "show", "pumps", first["session_id"]).stdout
    assert "you: What about its grease?" in human and "orion-manual.pdf p.2" in human
    answer_id = detail["messages"][3]["id"]
    rated = run_json(home, "sessions", "feedback", "pumps", first["session_id"], answer_id, "down",
                     "--comment", "which K7 grade?")
    assert rated["feedback"] == {"rating": "down", "comment": "which K7 grade?"}
    assert "rated down: which K7 grade?" in ragloom(home, "sessions", "show", "pumps", first["session_id"]).stdout
    bad = ragloom(home, "sessions", "feedback", "pumps", first["session_id"], answer_id, "meh", check=False)
    assert bad.returncode != 0 and "use up, down or none" in bad.stderr
    forgot = run_json(home, "sessions", "forget", "pumps", first["session_id"], answer_id)
    assert forgot["deleted"] == [detail["messages"][2]["id"], answer_id]
    assert len(run_json(home, "sessions", "show", "pumps", first["session_id"])["messages"]) == 2
    renamed = run_json(home, "sessions", "rename", "pumps", first["session_id"], "grease talk")
    assert renamed["name"] == "grease talk"
    assert run_json(home, "sessions", "delete", "pumps", first["session_id"]) == {"deleted": first["session_id"]}
    assert run_json(home, "sessions", "list", "pumps")["total"] == 1

    updated = run_json(home, "assistants", "update", "pumps", "--no-quote", "--name", "pump helper")
    assert updated["prompt"]["quote"] is False and updated["name"] == "pump helper" and updated["top_n"] == 4
    plain = run_json(home, "chat", "pump helper", "-q", PAGE2_QUESTION)
    assert "[ID:" not in plain["answer"] and plain["references"]

    failed = ragloom(home, "--json", "chat", "nobody", "-q", "hi", check=False)
    assert failed.returncode == 2 and json.loads(failed.stdout)["error"] == "NotFoundError"
    failed = ragloom(home, "--json", "assistants", "create", "x", "--kb", "manuals", "--llm", '{"temperature": 9}',
                     check=False)
    assert failed.returncode == 2 and "llm.temperature" in json.loads(failed.stdout)["message"]
    assert run_json(home, "assistants", "delete", "pump helper") == {"deleted": "pump helper"}
    assert run_json(home, "assistants", "list") == {"assistants": [], "total": 0}


def test_interactive_chat(home: Path) -> None:
    ragloom(home, "assistants", "create", "pumps", "--kb", "manuals", "--opening", "Ask me about pumps.")
    proc = ragloom_stdin(home, f"{PAGE2_QUESTION}\nWhat about its grease?\n/sessions\n/new\n"
                               "How long is the warranty?\n/quit\nnever asked\n", "chat", "pumps")
    out = proc.stdout
    assert out.startswith("assistant: Ask me about pumps.")
    assert out.count("[ID:0] orion-manual.pdf p.2") >= 2 and "two years" in out
    assert "1 sessions, newest first" in out  # listed before /new
    assert "new session" in proc.stderr and "never asked" not in out
    listed = run_json(home, "sessions", "list", "pumps")
    assert [s["message_count"] for s in listed["sessions"]] == [2, 4]

    # --json: questions from stdin, one JSON document with every reply
    replies = json.loads(ragloom_stdin(home, f"{PAGE2_QUESTION}\nWhat about its grease?\n", "--json", "chat",
                                       "pumps").stdout)["replies"]
    assert len(replies) == 2 and replies[0]["session_id"] == replies[1]["session_id"]


def test_the_chat_commands_say_the_same_with_and_without_a_server(tmp_path: Path) -> None:
    pdf = tmp_path / "orion-manual.pdf"
    write_manual_pdf(pdf)

    def scenario(home: Path, *remote: str) -> list[Any]:
        def run(*args: str) -> Any:
            return normalise(json.loads(ragloom(home, *remote, "--json", *args).stdout))

        run("kb", "create", "manuals")
        run("add", "manuals", str(pdf))
        created = run("assistants", "create", "pumps", "--kb", "manuals")
        first = json.loads(ragloom(home, *remote, "--json", "chat", "pumps", "-q", PAGE2_QUESTION).stdout)
        follow = run("chat", "pumps", "--session", first["session_id"], "-q", "What about its grease?")
        return [created, normalise(first), follow, run("assistants", "list"), run("sessions", "list", "pumps"),
                run("sessions", "show", "pumps", first["session_id"])]

    local = scenario(tmp_path / "local")
    with served(tmp_path / "remote-home") as (_, url):
        remote = scenario(tmp_path / "unused", "--url", url, "--api-key", admin_key(tmp_path / "remote-home", url))
    names = ["assistants create", "chat", "chat --session", "assistants list", "sessions list", "sessions show"]
    for name, a, b in zip(names, local, remote, strict=True):
        assert a == b, f"`ragloom {name}` differs:\nlocal:  {json.dumps(a)[:2000]}\nremote: {json.dumps(b)[:2000]}"
