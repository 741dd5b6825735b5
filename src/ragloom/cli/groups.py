"""The workspace's groups: ``ragloom groups list|show|create|add|remove|delete``.

Documents synced with source permissions name their readers as ``user:<e-mail>`` or ``group:<name>``;
a group's members (by e-mail) read what names the group."""

from __future__ import annotations

from typing import Annotated

import typer

from ragloom.cli._app import CliTable, app, emit, state
from ragloom.cli.sources import _sdk
from ragloom.schemas.groups import Group

groups_app = typer.Typer(help="The workspace's groups of people, readers of documents with source permissions.",
                         no_args_is_help=True)
app.add_typer(groups_app, name="groups")

MembersOpt = Annotated[list[str] | None, typer.Option("--member", "-m", help="An e-mail address; repeat.")]


def _said(group: Group) -> str:
    return f"group [bold]{group.name}[/]: {len(group.members)} member(s)"


@groups_app.command("list")
def list_() -> None:
    """The workspace's groups and how many members each has."""
    listed = _sdk(state.client()).list_groups()
    table = CliTable("name", "members", "description", "id", title=f"groups ({listed.total})",
                     optional=("description", "id"), fluid=("description",))
    for g in listed.groups:
        table.add_row(g.name, str(len(g.members)), g.description, g.id)
    emit(listed.model_dump(mode="json"), table)


@groups_app.command("show")
def show(group: str) -> None:
    """A group and its members."""
    found = _sdk(state.client()).get_group(group)
    table = CliTable("member", title=f"{found.name} ({len(found.members)})")
    for m in found.members:
        table.add_row(m)
    emit(found.model_dump(mode="json"), table)


@groups_app.command("create")
def create(name: str, member: MembersOpt = None,
           description: Annotated[str, typer.Option(help="What the group is.")] = "") -> None:
    """Make a group (the owner or an admin)."""
    made = _sdk(state.client()).create_group(name, description=description, members=member or [])
    emit(made.model_dump(mode="json"), "Made " + _said(made))


@groups_app.command("add")
def add(group: str, emails: Annotated[list[str], typer.Argument(help="E-mail addresses.")]) -> None:
    """Add people to a group."""
    changed = _sdk(state.client()).add_group_members(group, emails)
    emit(changed.model_dump(mode="json"), "Now " + _said(changed))


@groups_app.command("remove")
def remove(group: str, emails: Annotated[list[str], typer.Argument(help="E-mail addresses.")]) -> None:
    """Take people out of a group."""
    changed = _sdk(state.client()).remove_group_members(group, emails)
    emit(changed.model_dump(mode="json"), "Now " + _said(changed))


@groups_app.command("delete")
def delete(group: str) -> None:
    """Delete a group (documents that name it are read by their other readers only)."""
    _sdk(state.client()).delete_group(group)
    emit({"deleted": group}, f"Deleted group {group}")
