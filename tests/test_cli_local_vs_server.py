"""One code path for the CLI: the same scenario on a data directory and against a live server
gives the same output (ids and times aside)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.cli import ragloom
from tests.corpus import DOCX_QUESTION, PAGE2_QUESTION, write_manual_pdf, write_policy_docx
from tests.processes import admin_key, served

pytestmark = pytest.mark.slow

HEX_ID = re.compile(r"\b[0-9a-f]{32}\b")
VOLATILE = {"created_at", "updated_at", "published_at", "created_by"}


def normalise(value: Any) -> Any:
    """Ids become "<id>", times "<time>", floats are rounded: what must not differ is left."""
    if isinstance(value, dict):
        return {k: "<time>" if k in VOLATILE else normalise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, str):
        return HEX_ID.sub("<id>", value)
    return value


def scenario(home: Path, files: list[Path], *remote: str) -> list[Any]:
    def run(*args: str) -> Any:
        return normalise(json.loads(ragloom(home, *remote, "--json", *args).stdout))

    return [
        run("kb", "create", "manuals"),
        run("add", "manuals", *map(str, files)),
        run("docs", "manuals"),
        run("kb", "list"),
        run("search", "manuals", PAGE2_QUESTION, "--top-n", "3"),
        run("search", "manuals", DOCX_QUESTION, "--mode", "keyword"),
        run("ask", "manuals", PAGE2_QUESTION),
        run("chunks", "manuals", "orion-manual.pdf"),
    ]


def test_the_cli_says_the_same_with_and_without_a_server(tmp_path: Path) -> None:
    pdf, docx = tmp_path / "orion-manual.pdf", tmp_path / "hr-policy.docx"
    write_manual_pdf(pdf)
    write_policy_docx(docx)
    local = scenario(tmp_path / "local", [pdf, docx])
    with served(tmp_path / "remote-home") as (_, url):
        remote = scenario(tmp_path / "unused", [pdf, docx], "--url", url, "--api-key",
                          admin_key(tmp_path / "remote-home", url))
    names = ["kb create", "add", "docs", "kb list", "search", "keyword search", "ask", "chunks"]
    for name, a, b in zip(names, local, remote, strict=True):
        assert a == b, f"`ragloom {name}` differs:\nlocal:  {json.dumps(a)[:2000]}\nremote: {json.dumps(b)[:2000]}"
