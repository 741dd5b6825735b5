"""Who sees a knowledge base or a chat assistant: the one rule, as an SQL condition.

``permission`` is ``me`` (private to its creator) or ``team`` (shared with the workspace). A private
one whose creator has left the workspace is seen by the workspace's owner and admins, so that it can
be handed on or deleted rather than lost. Changing a shared one is for its creator, the owner and
admins (``require_edit`` of each service).
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, or_, select

from ragloom.context import Principal
from ragloom.db.models import Assistant, KnowledgeBase, Membership
from ragloom.states import Role

PERMISSIONS = ("me", "team")


def visible(model: type[KnowledgeBase] | type[Assistant], principal: Principal) -> ColumnElement[bool]:
    """SQL condition: the rows of ``model`` (a knowledge base or an assistant) the principal may see."""
    seen = or_(model.permission == "team", model.created_by == principal.user_id)
    if principal.role in (Role.OWNER, Role.ADMIN):
        members = select(Membership.user_id).where(Membership.tenant_id == principal.tenant_id)
        seen = or_(seen, model.created_by.is_(None), model.created_by.not_in(members))
    return (model.tenant_id == principal.tenant_id) & seen
