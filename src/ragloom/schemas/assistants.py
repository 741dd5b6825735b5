"""Chat assistants: the chat model's settings, the prompt, a new assistant or the fields to change
(request bodies), and an assistant as the API shows it."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ragloom.schemas.base import Timestamp, View
from ragloom.schemas.names import DisplayName
from ragloom.schemas.options import RetrievalOptions
from ragloom.schemas.scope import ScopeSettings

MAX_DATASETS = 100


MAX_TOP_N = 64


KNOWLEDGE = "knowledge"  # the prompt slot the evidence goes into: {knowledge}


_SLOT = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class LLMSettings(BaseModel):
    """The chat model and how it writes (the reference's defaults, but ``max_tokens``: ragloom's)."""

    model_config = ConfigDict(extra="forbid")

    provider: str | None = Field(None, description="the configured chat provider (RAGLOOM_CHAT_PROVIDER); "
                                 "null = the configured one")
    model: str | None = Field(None, description="the configured chat model (RAGLOOM_CHAT_MODEL); null = the "
                              "configured one, or extractive answers when none is configured")
    temperature: float = Field(0.1, ge=0.0, le=2.0)
    top_p: float = Field(0.3, ge=0.0, le=1.0)
    max_tokens: int = Field(1024, ge=16, le=32768, description="tokens kept for the answer")
    presence_penalty: float = Field(0.4, ge=-2.0, le=2.0)
    frequency_penalty: float = Field(0.7, ge=-2.0, le=2.0)


class PromptVariable(BaseModel):
    """A ``{name}`` slot of the system prompt, filled by each question's ``variables``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=64)
    optional: bool = Field(True, description="false: every question must give a value")


class PromptSettings(BaseModel):
    """How the assistant talks: its system prompt, greeting, refusal, and what it does with a question."""

    model_config = ConfigDict(extra="forbid")

    system: str | None = Field(None, max_length=20_000, description="system prompt; the evidence goes at its "
                               "{knowledge} slot (appended when missing); null = ragloom's default prompt")
    variables: list[PromptVariable] = Field(default_factory=list, max_length=32,
                                            description="other {name} slots of the system prompt")
    opening: str = Field("", max_length=2000, description="the greeting shown when a session starts")
    empty_response: str | None = Field(None, max_length=2000, description="the reply when the documents do not "
                                       "answer; null = ragloom's ('The documents do not contain enough ...')")
    quote: bool = Field(True, description="cite the evidence with [ID:n] markers")
    rewrite_followups: bool = Field(True, description="rewrite a follow-up question into a standalone one "
                                    "with the session's last turns before searching")
    cross_languages: list[str] = Field(default_factory=list, max_length=8, description="languages the question "
                                       "is also searched in (needs a chat model), e.g. ['English', 'Chinese']")
    keyword: bool = Field(False, description="add keywords the chat model extracts to the search (needs one)")

    @field_validator("cross_languages")
    @classmethod
    def _languages(cls, value: list[str]) -> list[str]:
        cleaned = [v.strip() for v in value]
        if any(not v or len(v) > 32 for v in cleaned):
            raise ValueError("each language is a name of 1 to 32 characters")
        return list(dict.fromkeys(cleaned))

    @model_validator(mode="after")
    def _slots(self) -> PromptSettings:
        names = [v.name for v in self.variables]
        if KNOWLEDGE in names:
            raise ValueError("variables: 'knowledge' is the evidence slot, not a variable")
        if len(set(names)) != len(names):
            raise ValueError("variables: a name is declared twice")
        undeclared = sorted(set(_SLOT.findall(self.system or "")) - set(names) - {KNOWLEDGE})
        if undeclared:
            raise ValueError(f"system uses {', '.join('{' + n + '}' for n in undeclared)}, not declared in variables")
        return self


def _hoist_toc_enhance(data: Any) -> Any:
    """Accept ``toc_enhance`` among the prompt settings (where the reference keeps it): it is a
    retrieval option, moved there."""
    if isinstance(data, dict) and isinstance(data.get("prompt"), dict) and "toc_enhance" in data["prompt"]:
        data = dict(data)
        prompt = dict(data["prompt"])
        retrieval = dict(data.get("retrieval") or {})
        retrieval.setdefault("toc_enhance", prompt.pop("toc_enhance"))
        data["prompt"], data["retrieval"] = prompt, retrieval
    return data


class AssistantCreate(BaseModel):
    """A new assistant (also the API's request body)."""

    model_config = ConfigDict(extra="forbid")

    name: DisplayName = Field(min_length=1, max_length=128)
    description: str = Field("", max_length=4000)
    dataset_ids: list[str] = Field(min_length=1, max_length=MAX_DATASETS,
                                   description="knowledge bases (ids or names) the caller can read")
    llm: LLMSettings = Field(default_factory=LLMSettings)
    prompt: PromptSettings = Field(default_factory=PromptSettings)
    retrieval: RetrievalOptions = Field(default_factory=RetrievalOptions, description="the retrieval API's options; "
                                        "page, page_size and explain are per answer (page_size is top_n)")
    top_n: int = Field(6, ge=1, le=MAX_TOP_N, description="evidence chunks per answer")
    rerank: bool = Field(True, description="use the configured reranker, if any")
    permission: Literal["me", "team"] = Field("me", description="me: only you see it; team: the whole workspace")
    scope: ScopeSettings = Field(default_factory=ScopeSettings, description="the applicability scope: document "
                                 "metadata keys every answer needs a value for (asked for when missing)")

    @model_validator(mode="before")
    @classmethod
    def _hoist(cls, data: Any) -> Any:
        return _hoist_toc_enhance(data)


class AssistantUpdate(BaseModel):
    """Fields to change; unset fields stay. ``llm``, ``prompt`` and ``retrieval`` are merged key by key
    into the assistant's (send ``{"prompt": {"quote": false}}`` to change only that)."""

    model_config = ConfigDict(extra="forbid")

    name: DisplayName | None = Field(None, min_length=1, max_length=128)
    description: str | None = Field(None, max_length=4000)
    dataset_ids: list[str] | None = Field(None, min_length=1, max_length=MAX_DATASETS)
    llm: dict[str, Any] | None = Field(None, description="LLMSettings keys to change")
    prompt: dict[str, Any] | None = Field(None, description="PromptSettings keys to change")
    retrieval: dict[str, Any] | None = Field(None, description="RetrievalOptions keys to change")
    top_n: int | None = Field(None, ge=1, le=MAX_TOP_N)
    rerank: bool | None = None
    permission: Literal["me", "team"] | None = None
    scope: ScopeSettings | None = Field(None, description="replaces the assistant's scope ({\"keys\": []}: none)")

    @model_validator(mode="before")
    @classmethod
    def _hoist(cls, data: Any) -> Any:
        return _hoist_toc_enhance(data)


DatasetState = Literal["ok", "deleted", "unreadable"]


class AssistantDataset(View):
    id: str
    name: str = Field(description="its name when it was set on the assistant, or now")
    state: DatasetState = Field(description="ok; deleted; unreadable: it exists but the caller may not read it")


class AssistantView(View):
    """A chat assistant. ``retrieval`` is the retrieval API's options as each answer runs them: page 1
    of ``top_n`` chunks."""

    id: str
    name: str
    description: str
    dataset_ids: list[str]
    datasets: list[AssistantDataset]
    llm: LLMSettings
    prompt: PromptSettings
    retrieval: RetrievalOptions
    top_n: int
    rerank: bool
    scope: ScopeSettings = Field(description="the applicability scope: required document metadata keys")
    permission: str = Field(description="me: only its creator sees it; team: the whole workspace")
    created_by: str | None
    created_at: Timestamp | None
    updated_at: Timestamp | None


class AssistantList(View):
    assistants: list[AssistantView]
    total: int
