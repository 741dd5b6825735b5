"""Source permissions: which documents of a knowledge base a caller may read.

A document synced from a source that knows who may read its items carries those *readers*
(:class:`~ragloom.db.models.DocumentReader`): users as ``user:<e-mail>`` and groups as
``group:<name>`` (the workspace's groups, :mod:`ragloom.service.accounts.groups`). A knowledge base
that uses source permissions (``source_permissions``) shows a caller only

* the documents without readers (``restricted`` false: the source did not say, or it was uploaded), and
* the documents whose readers include the caller's e-mail or one of their groups.

The workspace's owners and admins are held to the same rule unless the knowledge base says they see
everything (``admins_see_all``). An API key acts as the user who made it. A source's sync acts for the
system and reads everything (:attr:`ragloom.context.Principal.reads_all`).

What the rule hides is hidden everywhere the caller looks: searches and answers (a pre-filter of the
search store, never top-k then drop: :func:`hidden_documents`), listings and counts, a document's
pages, versions and file (404), its chunks, the knowledge graph's entities and relations drawn from
it, and its RAPTOR summaries. A document's summaries carry its id, so they go with it; a knowledge
base's summary tree over all its documents mixes them, so a caller who may not read every document of
the knowledge base does not get that tree (``KB_TREE_DOC`` is hidden too, by the search's scope) — in a search over
several knowledge bases this hides the other ones' trees as well, which costs recall, never leaks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import ColumnElement, delete, or_, select
from sqlalchemy.orm import Session

from ragloom.context import Principal
from ragloom.db.models import Document, DocumentReader, GroupMember, KnowledgeBase, MemberGroup, User
from ragloom.errors import InvalidRequestError
from ragloom.states import Role

USER, GROUP = "user:", "group:"
MAX_READERS = 1000  # readers kept per document (a source that lists more is cut, with a warning)


NOBODY = USER + "nobody"  # the reader of an item whose source named only readers ragloom cannot read


def normalise(principal: str) -> str:
    """A reader as stored: ``user:<lower-cased e-mail>`` (a bare e-mail is a user; a source's own user id,
    ``user:<id>``, is kept: it matches no caller, callers being matched by e-mail, but keeps the document
    restricted) or ``group:<name>``; ``InvalidRequestError`` for anything else."""
    value = principal.strip()
    if value.startswith(GROUP) and value[len(GROUP):].strip():
        return GROUP + value[len(GROUP):].strip()
    ident = (value[len(USER):] if value.startswith(USER) else value).strip().lower()
    if not ident or " " in ident or len(ident) > 320 or not (value.startswith(USER) or "@" in ident):
        raise InvalidRequestError(f"reader {principal!r} is neither user:<e-mail>, an e-mail nor group:<name>")
    return USER + ident


def caller_principals(session: Session, principal: Principal) -> set[str]:
    """The readers that name the caller: their e-mail and their groups in the workspace (none for a
    share link's visitor, who reads only the documents no source restricts)."""
    if principal.visitor:
        return set()
    email = (session.scalar(select(User.email).where(User.id == principal.user_id)) or "").lower()
    if not email:
        return set()
    groups = session.scalars(select(MemberGroup.name).join(GroupMember, GroupMember.group_id == MemberGroup.id)
                             .where(MemberGroup.tenant_id == principal.tenant_id, GroupMember.email == email))
    return {USER + email, *(GROUP + g for g in groups)}


def sees_all(kb: KnowledgeBase, principal: Principal) -> bool:
    """Whether every document of ``kb`` is the caller's to read (no source permissions to apply)."""
    if not kb.source_permissions or principal.reads_all:
        return True
    return not principal.visitor and kb.admins_see_all and principal.role in (Role.OWNER, Role.ADMIN)


def readable_clause(session: Session, principal: Principal, kb: KnowledgeBase,
                    mine: set[str] | None = None) -> ColumnElement[bool]:
    """SQL condition on :class:`Document`: the documents of ``kb`` the caller may read (``mine``: the
    caller's :func:`caller_principals`, when the caller already read them)."""
    if sees_all(kb, principal):
        return Document.kb_id == kb.id
    mine = caller_principals(session, principal) if mine is None else mine
    if not mine:
        return (Document.kb_id == kb.id) & Document.restricted.is_(False)
    readable = select(DocumentReader.document_id).where(DocumentReader.principal.in_(sorted(mine)))
    return (Document.kb_id == kb.id) & or_(Document.restricted.is_(False), Document.id.in_(readable))


def hidden_documents(session: Session, principal: Principal, kbs: Sequence[KnowledgeBase]) -> list[str]:
    """The ids of the documents of ``kbs`` the caller may not read (the search store's pre-filter adds the
    knowledge base's summary tree when there is any: see the module docstring)."""
    hidden: list[str] = []
    mine: set[str] | None = None
    for kb in kbs:
        if sees_all(kb, principal):
            continue
        mine = caller_principals(session, principal) if mine is None else mine
        everything = Document.kb_id == kb.id
        hidden += session.scalars(select(Document.id).where(everything, ~readable_clause(session, principal, kb,
                                                                                          mine)))
    return hidden


def can_read(session: Session, principal: Principal, kb: KnowledgeBase, doc: Document,
             mine: set[str] | None = None) -> bool:
    """Whether the caller may read ``doc`` (``mine``: their :func:`caller_principals`, when already read)."""
    if sees_all(kb, principal) or not doc.restricted:
        return True
    mine = caller_principals(session, principal) if mine is None else mine
    return bool(mine) and session.scalar(select(DocumentReader.principal).where(
        DocumentReader.document_id == doc.id, DocumentReader.principal.in_(sorted(mine))).limit(1)) is not None


def readers(session: Session, doc_id: str) -> list[str]:
    """A document's readers, sorted ([]: not restricted)."""
    return list(session.scalars(select(DocumentReader.principal).where(DocumentReader.document_id == doc_id)
                                .order_by(DocumentReader.principal)))


def set_readers(session: Session, doc: Document, principals: Iterable[str]) -> bool:
    """Make ``principals`` the document's readers (none: it is not restricted); whether they changed."""
    wanted = sorted({normalise(p) for p in principals})[:MAX_READERS]
    if wanted == readers(session, doc.id) and doc.restricted == bool(wanted):
        return False
    session.execute(delete(DocumentReader).where(DocumentReader.document_id == doc.id))
    session.add_all(DocumentReader(document_id=doc.id, principal=p) for p in wanted)
    doc.restricted = bool(wanted)
    return True
