"""The workspace's groups of people by e-mail, which documents synced with source permissions name as
readers (``group:<name>``): list, make, change, add and take out members, delete."""

from __future__ import annotations

from collections.abc import Sequence

from ragloom.schemas.groups import Group, GroupCreate, GroupList, GroupMembers, GroupUpdate
from ragloom.sdk._base import Base, Route, body, operation


class GroupsAPI(Base):
    @operation("GET", "/groups")
    def list_groups(self, op: Route, /) -> GroupList:
        """The workspace's groups with their members."""
        return self._model(GroupList, op)

    @operation("POST", "/groups")
    def create_group(self, op: Route, /, name: str, *, description: str = "",
                     members: Sequence[str] = ()) -> Group:
        """A new group (the owner or an admin) with these members' e-mail addresses."""
        return self._model(Group, op, json=body(GroupCreate, {"name": name, "description": description,
                                                              "members": list(members)}))

    @operation("GET", "/groups/{group_id}")
    def get_group(self, op: Route, /, group_id: str) -> Group:
        """A group by id or name."""
        return self._model(Group, op, path={"group_id": group_id})

    @operation("PATCH", "/groups/{group_id}")
    def update_group(self, op: Route, /, group_id: str, *, name: str | None = None, description: str | None = None,
                     members: Sequence[str] | None = None) -> Group:
        """Rename a group, describe it, or replace its whole member list."""
        changes = {k: v for k, v in {"name": name, "description": description,
                                     "members": list(members) if members is not None else None}.items()
                   if v is not None}
        return self._model(Group, op, path={"group_id": group_id}, json=body(GroupUpdate, changes))

    @operation("POST", "/groups/{group_id}/members")
    def add_group_members(self, op: Route, /, group_id: str, emails: Sequence[str]) -> Group:
        return self._model(Group, op, path={"group_id": group_id}, json=body(GroupMembers, {"emails": list(emails)}))

    @operation("POST", "/groups/{group_id}/members/remove")
    def remove_group_members(self, op: Route, /, group_id: str, emails: Sequence[str]) -> Group:
        return self._model(Group, op, path={"group_id": group_id}, json=body(GroupMembers, {"emails": list(emails)}))

    @operation("DELETE", "/groups/{group_id}")
    def delete_group(self, op: Route, /, group_id: str) -> None:
        """Delete a group: documents that name it are read by their other readers only."""
        self._empty(op, path={"group_id": group_id})
