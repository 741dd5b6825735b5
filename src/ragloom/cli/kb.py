"""Knowledge-base commands: ``kb create``, ``kb tags``, ``kb list`` and ``kb delete``."""

from __future__ import annotations

from typing import Annotated

import typer

from ragloom.cli._app import CliTable, ConfigOpt, MethodOpt, _config, emit, kb_app, state


@kb_app.command("create")
def kb_create(
    name: str,
    language: Annotated[str, typer.Option(help="zh or en")] = "en",
    description: Annotated[str, typer.Option()] = "",
    method: MethodOpt = None,
    config: ConfigOpt = None,
    tag_set: Annotated[list[str] | None, typer.Option(
        "--tag-set", help="A tag set (knowledge base of method 'tag') whose tags the chunks get; repeatable.")]
    = None,
    topn_tags: Annotated[int | None, typer.Option("--topn-tags", help="Tags kept per chunk (default 3).")] = None,
) -> None:
    """Create a knowledge base."""
    kb = state.client().kb_create(name, language=language, description=description,
                                  chunk_method=method or "naive", parser_config=_config(config),
                                  tag_kb_ids=tag_set, topn_tags=topn_tags)
    emit(kb, f"Created knowledge base [bold]{kb['name']}[/] ({kb['id']})")


@kb_app.command("tags")
def kb_tags(kb: str) -> None:
    """How many chunks carry each tag: a tag set's own tags, or the tags a knowledge base's chunks got."""
    res = state.client().kb_tags(kb)
    table = CliTable("tag", "chunks", title=f"{res['name']}: {res['total']} tags"
                     + (" (tag set)" if res["is_tag_set"] else ""))
    for row in res["tags"]:
        table.add_row(row["tag"], str(row["count"]))
    emit(res, table)


@kb_app.command("list")
def kb_list() -> None:
    """List the knowledge bases you can read."""
    kbs = state.client().kb_list()
    table = CliTable("name", "id", "language", "documents", "chunk method", optional=("language",))
    for kb in kbs:
        table.add_row(kb["name"], kb["id"], kb["language"], str(kb["document_count"]), kb["chunk_method"])
    emit({"datasets": kbs}, table)


@kb_app.command("delete")
def kb_delete(kb: str) -> None:
    """Delete a knowledge base with all its documents."""
    state.client().kb_delete(kb)
    emit({"deleted": kb}, f"Deleted {kb}")
