"""Knowledge-base commands: ``kb create``, ``kb set``, ``kb tags``, ``kb list`` and ``kb delete``."""

from __future__ import annotations

from typing import Annotated

import typer

from ragloom.cli._app import CliTable, ConfigOpt, MethodOpt, _config, emit, kb_app, state
from ragloom.sdk import DatasetChanges

REVIEW_HELP = ("New versions of its documents (new files, re-parses, settings changes) wait, built, until "
               "someone publishes them (`ragloom docs publish`); readers keep the live version meanwhile.")


@kb_app.command("create")
def kb_create(
    name: str,
    language: Annotated[str, typer.Option(
        help="en, zh, de, fr, es, it, pt, nl, ru, ja, ko, ar, or auto (detected per chunk)")] = "en",
    description: Annotated[str, typer.Option()] = "",
    method: MethodOpt = None,
    config: ConfigOpt = None,
    tag_set: Annotated[list[str] | None, typer.Option(
        "--tag-set", help="A tag set (knowledge base of method 'tag') whose tags the chunks get; repeatable.")]
    = None,
    topn_tags: Annotated[int | None, typer.Option("--topn-tags", help="Tags kept per chunk (default 3).")] = None,
    review_versions: Annotated[bool, typer.Option("--review-versions", help=REVIEW_HELP)] = False,
) -> None:
    """Create a knowledge base."""
    kb = state.client().kb_create(name, language=language, description=description,
                                  chunk_method=method or "naive", parser_config=_config(config),
                                  tag_kb_ids=tag_set, topn_tags=topn_tags, review_versions=review_versions)
    review = " · new versions wait for review" if kb.review_versions else ""
    emit(kb, f"Created knowledge base [bold]{kb.name}[/] ({kb.id}){review}")


@kb_app.command("set")
def kb_set(
    kb: str,
    review_versions: Annotated[bool | None, typer.Option(
        "--review-versions/--publish-when-ready", help=REVIEW_HELP + " --publish-when-ready: they go live when "
        "built (the default).", show_default=False)] = None,
    min_relevance: Annotated[float | None, typer.Option(
        "--min-relevance", min=0.0, max=1.0, help="Chunks whose relevance (calibrated probability, 0..1) is lower "
        "are dropped from searches and answers.")] = None,
    description: Annotated[str | None, typer.Option(help="A new description.")] = None,
    method: MethodOpt = None,
    config: ConfigOpt = None,
    source_permissions: Annotated[bool | None, typer.Option(
        "--source-permissions/--no-source-permissions", help="Show each caller only the documents their source "
        "lets them read (readers set by the sources' syncs), in searches, answers and listings alike.",
        show_default=False)] = None,
    admins_see_all: Annotated[bool | None, typer.Option(
        "--admins-see-all/--admins-too", help="With source permissions: the workspace's owner and admins see "
        "every document all the same (--admins-too: they are held to the sources' readers as well).",
        show_default=False)] = None,
) -> None:
    """Change a knowledge base's settings; what is not given stays."""
    changes: DatasetChanges = {}
    if source_permissions is not None:
        changes["source_permissions"] = source_permissions
    if admins_see_all is not None:
        changes["admins_see_all"] = admins_see_all
    if review_versions is not None:
        changes["review_versions"] = review_versions
    if min_relevance is not None:
        changes["min_relevance"] = min_relevance
    if description is not None:
        changes["description"] = description
    if method is not None:
        changes["chunk_method"] = method
    if config is not None:
        changes["parser_config"] = _config(config) or {}
    if not changes:
        raise typer.BadParameter("nothing to change: give at least one option (see `ragloom kb set --help`)")
    res = state.client().kb_update(kb, changes)
    publish = "wait for review" if res.review_versions else "go live when built"
    readers = "; each caller sees the documents their source lets them read" if res.source_permissions else ""
    emit(res, f"Updated knowledge base [bold]{res.name}[/]: new versions {publish}{readers}")


@kb_app.command("tags")
def kb_tags(kb: str) -> None:
    """How many chunks carry each tag: a tag set's own tags, or the tags a knowledge base's chunks got."""
    res = state.client().kb_tags(kb)
    table = CliTable("tag", "chunks", title=f"{res.name}: {res.total} tags" + (" (tag set)" if res.is_tag_set else ""))
    for row in res.tags:
        table.add_row(row.tag, str(row.count))
    emit(res, table)


@kb_app.command("list")
def kb_list() -> None:
    """List the knowledge bases you can read."""
    kbs = state.client().kb_list()
    table = CliTable("name", "id", "language", "documents", "chunk method", optional=("language",))
    for kb in kbs:
        table.add_row(kb.name, kb.id, kb.language, str(kb.document_count), kb.chunk_method)
    emit({"datasets": kbs}, table)


@kb_app.command("delete")
def kb_delete(kb: str) -> None:
    """Delete a knowledge base with all its documents."""
    state.client().kb_delete(kb)
    emit({"deleted": kb}, f"Deleted {kb}")
