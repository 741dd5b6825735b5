"""``quickstart``: the sample documents that ship with ragloom, in a knowledge base with an assistant.

The samples (``src/ragloom/samples``, made by ``scripts/make_samples.py``) go into a knowledge base
(``samples``) through the same client every command uses — in-process on the data directory, or
against a server with ``--url`` — then an assistant (``sample helper``) is made over it, and
questions the samples answer are printed with where to ask them. Running it again adds only the
samples the knowledge base lacks and reuses the assistant.
"""

from __future__ import annotations

import shlex
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Group
from rich.markup import escape

from ragloom.cli._app import CliTable, app, emit, err, state
from ragloom.cli.documents import wait_parsed
from ragloom.client import TERMINAL
from ragloom.schemas.documents import Document

SAMPLE_FILES = ("orion-manual.pdf", "service-bulletin.png", "travel-policy.docx", "hr-leave.html", "topics.csv",
                "care-guide-zh.md")
"""The sample documents, in upload order (the samples folder's README.md is not one)."""

QUESTIONS = (
    ("How often must the Orion pump be serviced?", "orion-manual.pdf"),
    ("How many days of paid annual leave do employees get?", "hr-leave.html"),
    ("活性炭滤芯多久更换一次？", "care-guide-zh.md"),
)
"""Questions to try, each with the sample that answers it."""

DEFAULT_KB = "samples"
ASSISTANT = "sample helper"


def samples_dir() -> Path:
    """Where the sample documents are installed (inside the ragloom package)."""
    return Path(str(resources.files("ragloom").joinpath("samples")))


@app.command()
def quickstart(
    kb: Annotated[str, typer.Option("--kb", help="The knowledge base to load the samples into (made when "
                                                 "missing).")] = DEFAULT_KB,
    assistant: Annotated[str, typer.Option("--assistant", help="The assistant's name (made when missing).")]
    = ASSISTANT,
) -> None:
    """Load the sample documents (a pump manual PDF, a scanned page, a DOCX policy, an HR page, a CSV, a
    Chinese guide) into a knowledge base with an assistant, and print questions to try. Running it again
    adds only the samples missing and reuses the knowledge base and the assistant."""
    client = state.client()
    folder = samples_dir()
    existing_kb = next((k for k in client.kb_list() if kb in (k.name, k.id)), None)
    kb_row = existing_kb or client.kb_create(
        kb, language="en", description="ragloom's sample documents: a pump manual and service bulletin, a travel "
                                       "and expense policy, HR leave rules, IT help-desk topics, a water purifier's "
                                       "care guide in Chinese")
    present = {d.name: d for d in client.documents(kb_row.id)}
    missing = [name for name in SAMPLE_FILES if name not in present]
    uploaded = client.upload(kb_row.id, [(name, (folder / name).read_bytes()) for name in missing]) \
        if missing else []
    pending = {d.id for d in uploaded} | {d.id for n, d in present.items()
                                          if n in SAMPLE_FILES and d.status not in TERMINAL}
    if pending:
        err.print(f"Parsing {len(pending)} sample documents (the scanned page is read by OCR)...")
        wait_parsed(client, kb_row.id, pending)
    docs = [d for d in client.documents(kb_row.id) if d.name in SAMPLE_FILES]
    failed = [d for d in docs if d.status != "done"]

    found = next((a for a in client.assistant_list() if assistant in (a.name, a.id)), None)
    helper = found or client.assistant_create(assistant, [kb_row.id], {
        "description": "Answers from ragloom's sample documents.",
        "prompt": {"opening": "Ask me about the Orion pump, travel expenses, leave rules, IT help or the water "
                              "purifier."}})
    chat_url = _chat_url(helper.id)
    questions = [{"question": q, "document": doc} for q, doc in QUESTIONS]
    result: dict[str, Any] = {  # the command's own report (its --json document), not an API model
        "knowledge_base": {"id": kb_row.id, "name": kb_row.name, "created": existing_kb is None},
        "documents": docs, "added": [d.name for d in uploaded], "already_there": sorted(set(present) & set(
            SAMPLE_FILES)), "failed": len(failed),
        "assistant": {"id": helper.id, "name": helper.name, "created": found is None},
        "questions": questions, "chat_url": chat_url,
        "commands": [f"ragloom ask {shlex.quote(kb_row.name)} {shlex.quote(q)}" for q, _ in QUESTIONS]
        + [f"ragloom chat {shlex.quote(helper.name)} -q {shlex.quote(QUESTIONS[0][0])}"],
    }
    emit(result, _human(result, docs))
    if failed:
        raise typer.Exit(1)


def _chat_url(assistant_id: str) -> str | None:
    """The web UI's chat page of the assistant when the server's address is known (``--url``), else None."""
    return f"{state.url.rstrip('/')}/ui/chat/{assistant_id}" if state.url else None


def _human(result: dict[str, Any], docs: list[Document]) -> Group:
    kb, helper = result["knowledge_base"], result["assistant"]
    table = CliTable("document", "status", "chunks", "message", fluid=("message",),
                     title=f"Knowledge base {kb['name']} ({'made now' if kb['created'] else 'already there'}): "
                           f"{len(result['added'])} samples added, {len(result['already_there'])} already there")
    for d in docs:
        table.add_row(d.name, d.status, str(d.chunk_count), escape(d.message[:60]))
    lines = [f"Assistant [bold]{escape(helper['name'])}[/] ({helper['id']}, "
             f"{'made now' if helper['created'] else 'already there'}) answers from {escape(kb['name'])}.", "",
             "Questions to try:"]
    lines += [f"  {escape(q['question'])}   [dim]({q['document']})[/]" for q in result["questions"]]
    lines.append("")
    if result["chat_url"]:
        lines.append(f"Ask them in the web UI: {result['chat_url']}")
    else:
        settings = state.settings()
        lines.append(f"Ask them in the web UI while `ragloom serve` (`make run`) runs on this data directory: "
                     f"http://{settings.host}:{settings.port}/ui/chat/{helper['id']}")
    lines.append("or on the command line" + (" (with the same --url and --api-key):" if state.url else ":"))
    lines += [f"  {escape(c)}" for c in result["commands"]]
    return Group(table, "\n".join(lines))

