"""Knowledge bases: create, list, read, delete — always scoped to the caller."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, func, or_, select
from sqlalchemy.orm import Session

from ragloom.context import Context, Principal
from ragloom.db.models import Document, KnowledgeBase
from ragloom.docstore.base import Filters
from ragloom.errors import ConflictError, InvalidRequestError, NotFoundError, PermissionDeniedError, StoreError
from ragloom.nlp.languages import KB_LANGUAGES, check_language
from ragloom.nlp.synonyms import validate_groups
from ragloom.schemas.base import iso_utc
from ragloom.schemas.builds import GraphSettings, RaptorSettings
from ragloom.schemas.datasets import Dataset, KBCreate, KBUpdate, WeightedFusion
from ragloom.service.accounts import access, audit, sharing, workspace_models

LANGUAGES = KB_LANGUAGES
TAG_METHOD = "tag"  # the chunk method of a tag set (service/search/tags.py)


def _validate(spec: KBCreate) -> None:
    spec.language = check_language(spec.language)
    if spec.permission not in ("me", "team"):
        raise InvalidRequestError("permission must be 'me' or 'team'")
    validate_chunking(spec.chunk_method, spec.parser_config)
    validate_groups(spec.synonyms)


def chunk_methods() -> list[str]:
    """The chunk methods a knowledge base or document may use: the built-ins and installed plugins'."""
    from ragloom.ingest.chunkers import default_chunkers

    return default_chunkers().names


def validate_chunking(method: str, parser_config: dict[str, Any]) -> None:
    """``InvalidRequestError`` naming the problem when the method or one of its parameters is wrong."""
    from ragloom.ingest.chunkers import ChunkerConfig, default_chunkers

    if not isinstance(parser_config, dict):
        raise InvalidRequestError("parser_config must be an object")
    default_chunkers().factory(method)  # an unknown method names the known ones
    ChunkerConfig.parse({**parser_config, "method": method}, strict=True)


def visible_clause(principal: Principal) -> ColumnElement[bool]:
    """SQL condition: the knowledge bases this principal may read (``service.sharing``)."""
    return sharing.visible(KnowledgeBase, principal)


def create(ctx: Context, session: Session, *, principal: Principal, spec: KBCreate) -> KnowledgeBase:
    _validate(spec)
    exists = session.scalar(
        select(KnowledgeBase.id).where(
            KnowledgeBase.tenant_id == principal.tenant_id, KnowledgeBase.name == spec.name
        )
    )
    if exists:
        raise ConflictError(f"a knowledge base named {spec.name!r} already exists")
    model = workspace_models.new_kb_embedding_model(ctx, session, tenant_id=principal.tenant_id,
                                                    requested=spec.embedding_model)
    embedder = workspace_models.embedder(ctx, model)
    kb = KnowledgeBase(
        tenant_id=principal.tenant_id,
        name=spec.name,
        description=spec.description,
        language=spec.language,
        permission=spec.permission,
        created_by=principal.user_id,
        embedding_model=model,
        embedding_dim=embedder.dim,
        chunk_method=spec.chunk_method,
        parser_config=spec.parser_config,
        similarity_threshold=spec.similarity_threshold,
        vector_similarity_weight=spec.vector_similarity_weight,
        min_relevance=spec.min_relevance,
        review_versions=spec.review_versions,
        source_permissions=spec.source_permissions,
        admins_see_all=spec.admins_see_all,
        pagerank=spec.pagerank,
        synonyms=validate_groups(spec.synonyms),
        tag_kb_ids=_tag_sets(session, principal, spec.tag_kb_ids, None),
        topn_tags=spec.topn_tags,
        build_config=_build_config({}, spec.raptor, spec.graphrag),
    )
    session.add(kb)
    session.flush()
    fit_index(ctx, session, kb=kb, dim=embedder.dim)
    return kb


def fit_index(ctx: Context, session: Session, *, kb: KnowledgeBase, dim: int) -> None:
    """Make the workspace's search index hold vectors of ``dim`` for ``kb``. All knowledge bases of a
    workspace share one index, so one vector size: ``ConflictError`` when others have another size; an
    index that only ``kb`` (or knowledge bases since deleted) used is recreated with the new size."""
    others = session.execute(select(KnowledgeBase.embedding_model, KnowledgeBase.embedding_dim).where(
        KnowledgeBase.tenant_id == kb.tenant_id, KnowledgeBase.id != kb.id)).all()
    clash = sorted({(m, d) for m, d in others if d != dim})
    if clash:
        sizes = ", ".join(f"{m} ({d})" for m, d in clash)
        raise ConflictError(
            f"embedding model {kb.embedding_model!r} makes vectors of {dim} dimensions, but {len(others)} other "
            f"knowledge base(s) of this workspace use {sizes}, and a workspace's knowledge bases share one search "
            "index: use a model of the same size, or re-index the others to this model first "
            "(POST /api/v1/datasets/{id}/reindex)")
    try:
        ctx.docstore.create_index(kb.tenant_id, dim)
    except StoreError:
        if others:
            raise
        ctx.docstore.drop_index(kb.tenant_id)  # left with another size by this or deleted knowledge bases
        ctx.docstore.create_index(kb.tenant_id, dim)


def validate_tag_kbs(session: Session, *, principal: Principal, requested: Sequence[str],
                     self_id: str | None = None) -> list[str]:
    """Ids of the requested tag sets (ids or names). A knowledge base the caller cannot see is a
    404 (:class:`NotFoundError`, as everywhere); one that is not of chunk method ``tag``, or the
    knowledge base itself, is an :class:`InvalidRequestError`."""
    ids: list[str] = []
    for ref in requested:
        kb = get(session, principal=principal, kb_id_or_name=ref)
        if self_id is not None and kb.id == self_id:
            raise InvalidRequestError("tag_kb_ids: a knowledge base cannot be its own tag set")
        if kb.chunk_method != TAG_METHOD:
            raise InvalidRequestError(
                f"tag_kb_ids: knowledge base {kb.name!r} is not a tag set (its chunk method is "
                f"{kb.chunk_method!r}, not {TAG_METHOD!r})"
            )
        ids.append(kb.id)
    return list(dict.fromkeys(ids))


def _tag_sets(session: Session, principal: Principal, requested: list[str], self_id: str | None) -> list[str]:
    return validate_tag_kbs(session, principal=principal, requested=requested, self_id=self_id)


def update(session: Session, *, principal: Principal, kb_id_or_name: str, spec: KBUpdate) -> KnowledgeBase:
    kb = get(session, principal=principal, kb_id_or_name=kb_id_or_name)
    require_edit(principal, kb, "change this knowledge base")
    changes = spec.model_dump(exclude_unset=True)
    if "permission" in changes and changes["permission"] not in ("me", "team"):
        raise InvalidRequestError("permission must be 'me' or 'team'")
    if "chunk_method" in changes or "parser_config" in changes:
        method = changes.get("chunk_method") or kb.chunk_method
        config = changes.get("parser_config")
        validate_chunking(method, kb.parser_config if config is None else config)
    if changes.get("synonyms") is not None:
        changes["synonyms"] = validate_groups(changes["synonyms"])
    if changes.get("tag_kb_ids") is not None:
        changes["tag_kb_ids"] = _tag_sets(session, principal, changes["tag_kb_ids"], kb.id)
    if "raptor" in changes or "graphrag" in changes:
        changes.pop("raptor", None)
        changes.pop("graphrag", None)
        if spec.raptor is not None or spec.graphrag is not None:
            changes["build_config"] = _build_config(kb.build_config or {}, spec.raptor, spec.graphrag)
    if changes.get("name") and changes["name"] != kb.name:
        taken = session.scalar(select(KnowledgeBase.id).where(
            KnowledgeBase.tenant_id == kb.tenant_id, KnowledgeBase.name == changes["name"]))
        if taken:
            raise ConflictError(f"a knowledge base named {changes['name']!r} already exists")
    for key, value in changes.items():
        if value is not None:
            setattr(kb, key, value)
    session.flush()
    return kb


def _build_config(current: dict[str, Any], raptor: RaptorSettings | None,
                  graphrag: GraphSettings | None = None) -> dict[str, Any]:
    """The knowledge-build settings with the RAPTOR and knowledge-graph ones given merged in (only the
    fields set are kept: the others follow the defaults)."""
    config = dict(current)
    if raptor is not None:
        merged = {**config.get("raptor", {}), **raptor.model_dump(exclude_unset=True)}
        config["raptor"] = RaptorSettings.parse(merged).model_dump(include=set(merged))
    if graphrag is not None:
        merged = {**config.get("graphrag", {}), **graphrag.model_dump(exclude_unset=True)}
        config["graphrag"] = GraphSettings.parse(merged).model_dump(include=set(merged))
    return config


def graph_settings(kb: KnowledgeBase) -> GraphSettings:
    """A knowledge base's knowledge-graph settings (the defaults for those it never set)."""
    return GraphSettings.parse((kb.build_config or {}).get("graphrag"), strict=False)


def raptor_settings(kb: KnowledgeBase) -> RaptorSettings:
    """A knowledge base's RAPTOR settings (the defaults for those it never set)."""
    return RaptorSettings.parse((kb.build_config or {}).get("raptor"), strict=False)


def require_edit(principal: Principal, kb: KnowledgeBase, action: str) -> None:
    """The one rule for changing a knowledge base and anything in it (its settings, its documents, their
    metadata and chunking): its creator or a tenant owner or admin. A member who can read a ``team``
    knowledge base cannot change it: ``PermissionDeniedError`` naming ``action``."""
    if principal.role not in ("owner", "admin") and kb.created_by != principal.user_id:
        raise PermissionDeniedError(
            f"only the creator of knowledge base {kb.name!r} or a tenant owner or admin may {action}"
        )


def get_editable(session: Session, *, principal: Principal, kb_id_or_name: str, action: str) -> KnowledgeBase:
    """A visible knowledge base the caller may change (404 when not visible, 403 when read-only)."""
    kb = get(session, principal=principal, kb_id_or_name=kb_id_or_name)
    require_edit(principal, kb, action)
    return kb


def list_visible(session: Session, *, principal: Principal) -> list[KnowledgeBase]:
    return list(session.scalars(select(KnowledgeBase).where(visible_clause(principal)).order_by(KnowledgeBase.name)))


def get(session: Session, *, principal: Principal, kb_id_or_name: str) -> KnowledgeBase:
    """A visible knowledge base by id or name; anything else is 'not found' (no leak)."""
    kb = session.scalar(
        select(KnowledgeBase).where(
            visible_clause(principal),
            or_(KnowledgeBase.id == kb_id_or_name, KnowledgeBase.name == kb_id_or_name),
        )
    )
    if kb is None:
        raise NotFoundError(f"knowledge base {kb_id_or_name!r} not found")
    return kb


def document_counts(session: Session, kbs: Sequence[KnowledgeBase], *, principal: Principal) -> dict[str, int]:
    """How many documents of each knowledge base the caller may read (source permissions)."""
    open_ids = [kb.id for kb in kbs if access.sees_all(kb, principal)]
    counts: dict[str, int] = {}
    if open_ids:
        rows = session.execute(
            select(Document.kb_id, func.count()).where(Document.kb_id.in_(open_ids)).group_by(Document.kb_id)
        )
        counts.update({kb_id: n for kb_id, n in rows})
    mine = access.caller_principals(session, principal) if len(open_ids) < len(kbs) else set()
    for kb in kbs:
        if kb.id not in open_ids:
            readable = access.readable_clause(session, principal, kb, mine)
            counts[kb.id] = session.scalar(select(func.count()).select_from(Document).where(readable)) or 0
    return counts


def delete(ctx: Context, session: Session, *, principal: Principal, kb_id_or_name: str) -> None:
    kb = get(session, principal=principal, kb_id_or_name=kb_id_or_name)
    require_edit(principal, kb, "delete this knowledge base")
    audit.record_by(session, principal, "kb.deleted", target=f"kb:{kb.id}", detail=kb.name)
    session.delete(kb)
    session.flush()
    ctx.docstore.delete(principal.tenant_id, Filters(kb_ids=[kb.id]))


FUSION_NOTE = ("similarity_threshold and vector_similarity_weight apply only to the 'weighted' fusion; "
               "the 'normalized' fusion (z-scores of both sides) has no threshold and takes its vector "
               "weight from settings.fusion_vector_weight or the request; under any fusion, chunks whose "
               "relevance (the calibrated probability that they are relevant) is under min_relevance are "
               "dropped, and a request's similarity_threshold with the 'normalized' fusion cuts the relevance")


def kb_view(kb: KnowledgeBase, document_count: int | None = None, *, fusion: str = "normalized",
            workspace_embedding_model: str | None = None) -> Dataset:
    """A knowledge base; ``fusion`` is the server's default hybrid scoring; ``workspace_embedding_model``,
    the model the workspace's new knowledge bases get (when given and another: a note how to move there)."""
    note = None
    if workspace_embedding_model is not None and workspace_embedding_model != kb.embedding_model:
        note = (f"the workspace's new knowledge bases get embedding model {workspace_embedding_model!r}; this one "
                f"keeps {kb.embedding_model!r}, the model its vectors were made with. To move it, re-embed every "
                f"document: POST /api/v1/datasets/{kb.id}/reindex")
    return Dataset(
        id=kb.id,
        name=kb.name,
        description=kb.description,
        language=kb.language,
        permission=kb.permission,
        chunk_method=kb.chunk_method,
        parser_config=kb.parser_config,
        embedding_model=kb.embedding_model,
        similarity_threshold=kb.similarity_threshold,
        vector_similarity_weight=kb.vector_similarity_weight,
        min_relevance=kb.min_relevance,
        review_versions=bool(kb.review_versions),
        source_permissions=bool(kb.source_permissions),
        admins_see_all=bool(kb.admins_see_all),
        fusion=fusion,
        fusion_note=FUSION_NOTE,
        weighted_fusion=WeightedFusion(similarity_threshold=kb.similarity_threshold,
                                       vector_similarity_weight=kb.vector_similarity_weight,
                                       applies=fusion == "weighted"),
        pagerank=kb.pagerank,
        synonyms=kb.synonyms or [],
        tag_kb_ids=kb.tag_kb_ids or [],
        topn_tags=kb.topn_tags,
        document_count=document_count,
        created_at=iso_utc(kb.created_at),
        raptor=RaptorSettings.parse((kb.build_config or {}).get("raptor"), strict=False),
        graphrag=GraphSettings.parse((kb.build_config or {}).get("graphrag"), strict=False),
        embedding_note=note,
    )
