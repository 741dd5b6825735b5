"""Chat assistants: create, list, read, update, delete — always scoped to the caller's tenant.

An assistant answers from its knowledge bases (which the caller must be able to read when setting
them) with its chat model settings (:class:`~ragloom.schemas.assistants.LLMSettings`), its prompt
settings (:class:`~ragloom.schemas.assistants.PromptSettings`) and its retrieval options: a
:class:`~ragloom.schemas.options.RetrievalOptions` — the retrieval API's own options type — of which
``page``, ``page_size`` and ``explain`` are not the assistant's to keep
(an answer reads one page of ``top_n`` chunks; explain is asked per question).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError
from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from ragloom.config import Settings
from ragloom.context import Context, Principal
from ragloom.db.models import Assistant, KnowledgeBase
from ragloom.errors import ConflictError, InvalidRequestError, NotFoundError, PermissionDeniedError
from ragloom.schemas.assistants import AssistantCreate, AssistantUpdate, LLMSettings, PromptSettings
from ragloom.schemas.options import RetrievalOptions
from ragloom.schemas.scope import ScopeSettings
from ragloom.service import knowledgebases
from ragloom.service.accounts import sharing, workspace_models
from ragloom.service.search.retrieval import check_documents, check_result_window
from ragloom.states import Role

# retrieval options an assistant does not keep: its answers read page 1 of top_n chunks, and explain
# is asked for per question (completions)
PER_ANSWER = ("page", "page_size", "explain")


def _validation_message(field: str, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in (field, *err.get("loc", ())))
        parts.append(f"{loc}: {err.get('msg')}")
    return "; ".join(parts)


def _check_llm(chat: workspace_models.ChatIdentity, llm: LLMSettings) -> None:
    """Provider and model must be the configured ones (the workspace's chat model: its own provider's,
    else the server's)."""
    if llm.provider is not None and llm.provider != chat.provider:
        raise InvalidRequestError(f"llm.provider: {llm.provider!r} is not the configured chat provider "
                                  f"({chat.provider!r}, {chat.provider_source})")
    if llm.model is not None and llm.model != chat.model:
        configured = (f"the configured one is {chat.model!r} ({chat.model_source})" if chat.model
                      else f"none is configured ({chat.model_source}): answers are extractive; leave llm.model null")
        raise InvalidRequestError(f"llm.model: {llm.model!r} is not a configured chat model; {configured}")


def _retrieval_json(options: RetrievalOptions, top_n: int, settings: Settings) -> dict[str, Any]:
    """The options to store: what the caller set, without the per-answer ones (refused when set to
    anything but what an answer uses)."""
    given = options.model_dump(mode="json", exclude_unset=True)
    if given.get("page", 1) != 1:
        raise InvalidRequestError("retrieval.page: an assistant reads the first page of results; leave it out")
    if given.get("explain"):
        raise InvalidRequestError("retrieval.explain: ask for it per question (the completion's explain)")
    if "page_size" in given and given["page_size"] != top_n:
        raise InvalidRequestError(f"retrieval.page_size: {given['page_size']} differs from top_n ({top_n}); "
                                  "set only top_n")
    check_result_window(settings, 1, top_n)
    return {k: v for k, v in given.items() if k not in PER_ANSWER}


def retrieval_options(assistant: Assistant, *, explain: bool = False) -> RetrievalOptions:
    """The options an answer of ``assistant`` retrieves with: its own, on one page of ``top_n``."""
    return RetrievalOptions.model_validate({**assistant.retrieval, "page": 1, "page_size": assistant.top_n,
                                            "explain": explain})


def llm_settings(assistant: Assistant) -> LLMSettings:
    return LLMSettings.model_validate(assistant.llm)


def prompt_settings(assistant: Assistant) -> PromptSettings:
    return PromptSettings.model_validate(assistant.prompt)


def scope_settings(assistant: Assistant) -> ScopeSettings:
    return ScopeSettings.model_validate(assistant.scope or {})


def _datasets(session: Session, principal: Principal, refs: list[str]) -> list[dict[str, str]]:
    """``[{"id", "name"}]`` of the requested knowledge bases; each must be readable by the caller
    (404 naming ``dataset_ids`` otherwise), and all must share an embedding model."""
    kbs: list[KnowledgeBase] = []
    for ref in refs:
        try:
            kbs.append(knowledgebases.get(session, principal=principal, kb_id_or_name=ref))
        except NotFoundError as exc:
            raise NotFoundError(f"dataset_ids: {exc.message} (or not readable by you)") from exc
    models = {kb.embedding_model for kb in kbs}
    if len(models) > 1:
        raise InvalidRequestError(f"dataset_ids: the knowledge bases use different embedding models "
                                  f"({sorted(models)}); an assistant searches knowledge bases of one model")
    unique = {kb.id: kb.name for kb in kbs}
    return [{"id": kb_id, "name": name} for kb_id, name in unique.items()]


def _name_free(session: Session, tenant_id: str, name: str, self_id: str | None = None) -> None:
    taken = session.scalar(select(Assistant.id).where(Assistant.tenant_id == tenant_id, Assistant.name == name))
    if taken and taken != self_id:
        raise ConflictError(f"name: an assistant named {name!r} already exists")


def create(ctx: Context, session: Session, *, principal: Principal, spec: AssistantCreate) -> Assistant:
    _check_llm(workspace_models.chat_identity(ctx, session, principal.tenant_id), spec.llm)
    retrieval = _retrieval_json(spec.retrieval, spec.top_n, ctx.settings)
    check_documents(session, principal=principal, doc_ids=spec.retrieval.document_ids)
    datasets = _datasets(session, principal, spec.dataset_ids)
    _name_free(session, principal.tenant_id, spec.name)
    assistant = Assistant(
        tenant_id=principal.tenant_id, name=spec.name, description=spec.description, created_by=principal.user_id,
        knowledge_bases=datasets, llm=spec.llm.model_dump(mode="json"),
        prompt=spec.prompt.model_dump(mode="json"), retrieval=retrieval, top_n=spec.top_n, rerank=spec.rerank,
        permission=spec.permission, scope=spec.scope.model_dump(mode="json"),
    )
    session.add(assistant)
    session.flush()
    return assistant


def get(session: Session, *, principal: Principal, assistant_id_or_name: str) -> Assistant:
    """An assistant the caller may see (``service.sharing``) by id or name; anything else is 'not found'."""
    assistant = session.scalar(select(Assistant).where(
        sharing.visible(Assistant, principal),
        or_(Assistant.id == assistant_id_or_name, Assistant.name == assistant_id_or_name)))
    if assistant is None:
        raise NotFoundError(f"assistant {assistant_id_or_name!r} not found")
    return assistant


def list_all(session: Session, *, principal: Principal) -> list[Assistant]:
    return list(session.scalars(select(Assistant).where(sharing.visible(Assistant, principal))
                                .order_by(Assistant.name)))


def require_edit(principal: Principal, assistant: Assistant, action: str) -> None:
    """Its creator, or a tenant owner or admin, may change or delete an assistant."""
    if principal.role not in (Role.OWNER, Role.ADMIN) and assistant.created_by != principal.user_id:
        raise PermissionDeniedError(
            f"only the creator of assistant {assistant.name!r} or a tenant owner or admin may {action}")


def _merged(field: str, model: type[BaseModel], current: dict[str, Any], changes: dict[str, Any]) -> BaseModel:
    try:
        return model.model_validate({**current, **changes})
    except ValidationError as exc:
        raise InvalidRequestError(_validation_message(field, exc)) from exc


def update(ctx: Context, session: Session, *, principal: Principal, assistant_id_or_name: str,
           spec: AssistantUpdate) -> Assistant:
    assistant = get(session, principal=principal, assistant_id_or_name=assistant_id_or_name)
    require_edit(principal, assistant, "change it")
    changes = spec.model_dump(exclude_unset=True)
    for key in ("name", "dataset_ids", "top_n", "rerank"):
        if key in changes and changes[key] is None:
            raise InvalidRequestError(f"{key}: may not be null")
    if changes.get("name") is not None:
        _name_free(session, assistant.tenant_id, changes["name"], assistant.id)
        assistant.name = changes["name"]
    if changes.get("description") is not None:
        assistant.description = changes["description"]
    if changes.get("dataset_ids") is not None:
        assistant.knowledge_bases = _datasets(session, principal, changes["dataset_ids"])
    if changes.get("llm") is not None:
        llm = _merged("llm", LLMSettings, assistant.llm, changes["llm"])
        assert isinstance(llm, LLMSettings)
        _check_llm(workspace_models.chat_identity(ctx, session, principal.tenant_id), llm)
        assistant.llm = llm.model_dump(mode="json")
    if changes.get("prompt") is not None:
        assistant.prompt = _merged("prompt", PromptSettings, assistant.prompt, changes["prompt"]).model_dump(
            mode="json")
    top_n = changes.get("top_n") or assistant.top_n
    if changes.get("retrieval") is not None or "top_n" in changes:
        given = changes.get("retrieval") or {}
        merged = {**assistant.retrieval, **given}
        try:
            options = RetrievalOptions.model_validate(merged)
        except ValidationError as exc:
            raise InvalidRequestError(_validation_message("retrieval", exc)) from exc
        check_documents(session, principal=principal, doc_ids=options.document_ids)
        assistant.retrieval = _retrieval_json(options, top_n, ctx.settings)
    assistant.top_n = top_n
    if changes.get("rerank") is not None:
        assistant.rerank = changes["rerank"]
    if changes.get("permission") is not None:
        assistant.permission = changes["permission"]
    if spec.scope is not None:
        assistant.scope = spec.scope.model_dump(mode="json")
    session.flush()
    return assistant


def delete(session: Session, *, principal: Principal, assistant_id_or_name: str) -> None:
    """Delete an assistant with its sessions and their messages."""
    assistant = get(session, principal=principal, assistant_id_or_name=assistant_id_or_name)
    require_edit(principal, assistant, "delete it")
    session.delete(assistant)
    session.flush()


def dataset_states(session: Session, *, principal: Principal, assistant: Assistant) -> list[tuple[str, str, str]]:
    """``(id, name, state)`` of each of the assistant's knowledge bases: ``ok``, ``deleted`` or
    ``unreadable`` (it exists, but the caller may not read it)."""
    ids = [kb["id"] for kb in assistant.knowledge_bases]
    visible = set(session.scalars(select(KnowledgeBase.id).where(
        KnowledgeBase.id.in_(ids), knowledgebases.visible_clause(principal))))
    existing = set(session.scalars(select(KnowledgeBase.id).where(
        KnowledgeBase.id.in_(ids), KnowledgeBase.tenant_id == assistant.tenant_id)))
    out = []
    for kb in assistant.knowledge_bases:
        state = "ok" if kb["id"] in visible else "unreadable" if kb["id"] in existing else "deleted"
        out.append((kb["id"], kb["name"], state))
    return out

