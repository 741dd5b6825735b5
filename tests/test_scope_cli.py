"""An after-sales assistant from the command line (issue 27): manuals with their model and firmware
range as metadata (``ragloom docs meta``), an assistant that requires them (``ragloom assistants create
... --require-metadata``), and a chat that asks, answers from the right manual, or names the gap."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli import ragloom

pytestmark = pytest.mark.slow

MANUALS = {
    "x100.txt": ("To reset the X100, hold the red button for 5 seconds.", ["model=X100", "firmware=>=1.0,<3"]),
    "x200.txt": ("To reset the X200, unplug it for 10 minutes.", ['model=["X200","X200S"]', "firmware=>=2.0,<3"]),
}


def run_json(home: Path, *args: str) -> Any:
    return json.loads(ragloom(home, "--json", *args).stdout)


def test_an_after_sales_assistant_from_the_command_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ragloom(home, "kb", "create", "manuals")
    for name, (text, meta) in MANUALS.items():
        path = tmp_path / name
        path.write_text(f"{name[:4].upper()} service manual.\n\n{text}\n")
        ragloom(home, "add", "manuals", str(path))
        doc = run_json(home, "docs", "meta", "manuals", name, *meta)
        assert doc["metadata"]["model"] in ("X100", ["X200", "X200S"]), doc
    assert "firmware: >=2.0,<3" in ragloom(home, "docs", "meta", "manuals", "x200.txt").stdout

    a = run_json(home, "assistants", "create", "support", "--kb", "manuals", "--require-metadata", "model",
                 "--require-metadata", "firmware:range", "--scope-alias", "model:pro=X200")
    assert [(k["key"], k["match"]) for k in a["scope"]["keys"]] == [("model", "equal"), ("firmware", "range")]
    assert a["scope"]["keys"][0]["aliases"] == {"pro": "X200"}
    assert "scope: requires model (equal; aliases pro=X200), firmware (range)" in ragloom(
        home, "assistants", "show", "support").stdout

    asked = run_json(home, "chat", "support", "-q", "How do I reset it?")
    assert "Which model is it: X100, X200 or X200S?" in asked["answer"] and asked["references"] == []
    answered = run_json(home, "chat", "support", "--session", asked["session_id"], "-q", "my pro, firmware 2.1")
    assert answered["explain"]["scope"]["values"] == {"model": "X200", "firmware": "2.1"}
    assert {r["document_name"] for r in answered["references"]} == {"x200.txt"}, answered
    shown = ragloom(home, "chat", "support", "-q", "How do I reset the X300 on firmware 2.2?")
    assert "There is no document for model X300" in shown.stdout
    assert "scope: gap" in shown.stderr

    cleared = run_json(home, "assistants", "update", "support", "--scope", '{"keys": []}')
    assert cleared["scope"] == {"keys": []}
