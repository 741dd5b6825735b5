"""A workspace's groups of people (by e-mail), which documents synced with source permissions name as
readers (``group:<name>``)."""

from __future__ import annotations

from pydantic import Field

from ragloom.schemas.base import Request, Timestamp, View

GROUP_NAME = Field(min_length=1, max_length=200, description="unique in the workspace; documents name it as "
                   "group:<name>")


class GroupCreate(Request):
    name: str = GROUP_NAME
    description: str = Field("", max_length=2000)
    members: list[str] = Field(default_factory=list, max_length=10_000, description="e-mail addresses")


class GroupUpdate(Request):
    """Changes to a group; what is not given stays (``members`` replaces the whole list)."""

    name: str | None = Field(None, min_length=1, max_length=200)
    description: str | None = Field(None, max_length=2000)
    members: list[str] | None = Field(None, max_length=10_000, description="e-mail addresses: the whole list")


class GroupMembers(Request):
    """E-mail addresses to add to a group or take out of it."""

    emails: list[str] = Field(min_length=1, max_length=10_000)


class Group(View):
    id: str
    name: str
    description: str
    members: list[str] = Field(description="e-mail addresses, sorted")
    source_id: str | None = Field(description="the source that keeps it in step, if one does")
    created_at: Timestamp


class GroupList(View):
    groups: list[Group]
    total: int
