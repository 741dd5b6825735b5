"""The chat resources ragloom shows — assistants, sessions, messages, replies — one pydantic model
each and the function that builds it (the conventions of :mod:`ragloom.service.views`).

A stored reference is shown with its ``status`` at read time: ``current`` while its version is the
one searches see, ``superseded`` once the document was re-parsed or replaced, ``deleted`` when the
document is gone; ``file`` and ``pages`` open the cited version (absent once the document is deleted).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from ragloom.db import models as db
from ragloom.schemas.base import Number, Positions, Timestamp, View, absent_unless, iso_utc
from ragloom.schemas.chunks import TableRows
from ragloom.schemas.options import RetrievalOptions
from ragloom.schemas.retrieval import Explain, ScopeView
from ragloom.schemas.scope import ScopeSettings
from ragloom.service.assistants import (
    LLMSettings,
    PromptSettings,
    llm_settings,
    prompt_settings,
    retrieval_options,
    scope_settings,
)
from ragloom.service.views import table_rows_view, view_link
from ragloom.states import MessageRole, ReferenceStatus

DatasetState = Literal["ok", "deleted", "unreadable"]


# --- assistants -------------------------------------------------------------------------------------

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


def assistant_view(assistant: db.Assistant, states: Sequence[tuple[str, str, str]]) -> AssistantView:
    """``states``: :func:`ragloom.service.assistants.dataset_states` of the assistant."""
    return AssistantView(
        id=assistant.id, name=assistant.name, description=assistant.description,
        dataset_ids=[kb["id"] for kb in assistant.knowledge_bases],
        datasets=[AssistantDataset(id=i, name=n, state=s) for i, n, s in states],
        llm=llm_settings(assistant), prompt=prompt_settings(assistant), retrieval=retrieval_options(assistant),
        top_n=assistant.top_n, rerank=assistant.rerank, scope=scope_settings(assistant),
        permission=assistant.permission,
        created_by=assistant.created_by, created_at=iso_utc(assistant.created_at),
        updated_at=iso_utc(assistant.updated_at),
    )


# --- references, citations, explain -----------------------------------------------------------------

class ChatReference(View):
    """One piece of evidence an answer cites as ``[ID:id]``, locked to the version it was cited from."""

    id: int = Field(description="the number cited in the answer text as [ID:id]")
    chunk_id: str
    doc_id: str
    kb_id: str | None
    version_id: str = Field(description="the document version the text was cited from")
    document_name: str
    content: str = Field(description="the cited text as it was when the answer was written")
    positions: Positions
    status: ReferenceStatus = Field(description="current: the version searches see; superseded: the document "
                                    "has a newer version; deleted: the document is gone")
    active_version_id: str | None = Field(description="the document's version searches see now")
    file: str | None = Field(description="the original file of the cited version (null once deleted)")
    pages: str | None = Field(description="page sizes and images of the cited version (null once deleted)")
    preview: str | None = Field(description="the cited version's HTML view scrolled to the cited blocks, marked "
                                "(formats without pages; null for paged ones and once deleted)")
    changes: str | None = Field(None, description="superseded: what changed from the cited version to the one "
                                "searches see now (.../versions/diff; it answers 409 once the cited version's "
                                "chunks were dropped); null otherwise")
    table: TableRows | SkipJsonSchema[None] = absent_unless(
        "a table's chunk: its rows with their columns' header paths, as they were when the answer was written")


class CitationView(View):
    """One [ID:id] marker of the answer, on sentence ``sentence`` (0-based), with its verification."""

    sentence: int
    id: int
    support: Number | None = Field(description="verification score; null when not verified")
    supported: bool = Field(description="false: verification rejected it (it is no longer in the text)")
    inserted: bool = Field(description="added by similarity rather than written by the model")
    verdict: str | None = Field(description="supported, weak (the chunk only shares the topic) or unsupported; "
                                "null when not verified")
    sentence_text: str | None = Field(description="the answer's sentence the marker is on (without markers)")
    supporting_sentence: str | None = Field(description="the cited chunk's sentence that best matches it")


class ChatExplain(View):
    """How the question was understood and searched."""

    question: str = Field(description="the question as asked")
    standalone_question: str = Field(description="the question rewritten with the session's last turns "
                                     "(the same as asked when it needed no rewriting)")
    rewrite_method: str = Field(description="how it was rewritten: e.g. llm, rule, unchanged, off")
    search_query: str = Field(description="what was searched: the standalone question, plus translations and "
                              "keywords when the assistant asks for them")
    retrieval: Explain | SkipJsonSchema[None] = absent_unless("the question asked for explain: every "
                                                               "candidate's scores and the stage that dropped it")
    scope: ScopeView | SkipJsonSchema[None] = absent_unless("the assistant requires scope keys: the scope "
                                                           "decided before retrieval, and why")


def reference_view(ref: Mapping[str, Any], active: Mapping[str, str | None]) -> ChatReference:
    """A stored reference; ``active``: the active version id of each of the referenced documents that
    still exist (a missing document is deleted)."""
    doc_id, version_id, kb_id = ref["doc_id"], ref["version_id"], ref.get("kb_id")
    gone = doc_id not in active
    status = (ReferenceStatus.DELETED if gone else
              ReferenceStatus.CURRENT if active[doc_id] == version_id else ReferenceStatus.SUPERSEDED)
    base = f"/api/v1/datasets/{kb_id}/documents/{doc_id}"
    return ChatReference(
        id=ref["id"], chunk_id=ref["chunk_id"], doc_id=doc_id, kb_id=kb_id, version_id=version_id,
        document_name=ref["document_name"], content=ref["content"], positions=ref["positions"], status=status,
        active_version_id=None if gone else active[doc_id],
        file=None if gone or not kb_id else f"{base}/file?version_id={version_id}",
        pages=None if gone or not kb_id else f"{base}/pages?version_id={version_id}",
        preview=None if gone or not kb_id else view_link(base, version_id, ref["positions"]),
        changes=f"{base}/versions/diff?from={version_id}&to={active[doc_id]}"
        if status == ReferenceStatus.SUPERSEDED and kb_id and active[doc_id] else None,
        table=table_rows_view(ref.get("table")),
    )


def citation_view(c: Mapping[str, Any]) -> CitationView:
    support = c.get("support")
    return CitationView(sentence=c["sentence"], id=c["index"], support=None if support is None else round(support, 4),
                        supported=c.get("supported", True), inserted=c.get("inserted", False),
                        verdict=c.get("verdict"), sentence_text=c.get("sentence_text"),
                        supporting_sentence=c.get("supporting_sentence"))


# --- sessions and messages --------------------------------------------------------------------------

class Feedback(View):
    rating: Literal["up", "down"]
    comment: str


class Message(View):
    """A question (role user) or an answer (role assistant) of a session."""

    id: str
    session_id: str
    turn: int = Field(description="a question and its answer share their turn")
    role: MessageRole
    content: str
    created_at: Timestamp | None
    model: str | SkipJsonSchema[None] = absent_unless("an answer: the chat model that wrote it, or 'extractive'")
    insufficient: bool | SkipJsonSchema[None] = absent_unless("an answer: true when the documents do not support "
                                                              "one")
    references: list[ChatReference] = Field(description="an answer's cited evidence; [] for a question")
    citations: list[CitationView]
    explain: ChatExplain | SkipJsonSchema[None] = absent_unless("an answer")
    feedback: Feedback | None = Field(description="the user's rating of an answer")


class MessageList(View):
    messages: list[Message]
    total: int


class DeletedMessages(View):
    deleted: list[str] = Field(description="ids of the messages deleted (a question and its answer)")


class SessionView(View):
    id: str
    assistant_id: str
    name: str
    opening: str = Field(description="the assistant's greeting")
    message_count: int
    created_at: Timestamp | None
    updated_at: Timestamp | None


class SessionList(View):
    """Newest first."""

    sessions: list[SessionView]
    total: int
    page: int
    page_size: int


class SessionDetail(SessionView):
    messages: list[Message]


def session_view(s: db.ChatSession, assistant: db.Assistant, message_count: int) -> SessionView:
    return SessionView(id=s.id, assistant_id=s.assistant_id, name=s.name, opening=prompt_settings(assistant).opening,
                       message_count=message_count, created_at=iso_utc(s.created_at), updated_at=iso_utc(s.updated_at))


def message_view(m: db.ChatMessage, active: Mapping[str, str | None]) -> Message:
    answer = m.role == MessageRole.ASSISTANT
    feedback = Feedback(rating=m.feedback, comment=m.feedback_comment) if m.feedback in ("up", "down") else None
    return Message(
        id=m.id, session_id=m.session_id, turn=m.turn, role=MessageRole(m.role), content=m.content,
        created_at=iso_utc(m.created_at), model=m.model if answer else None,
        insufficient=m.insufficient if answer else None,
        references=[reference_view(r, active) for r in m.refs or []],
        citations=[citation_view(c) for c in m.citations or []],
        explain=ChatExplain.model_validate(m.explain) if answer and m.explain else None, feedback=feedback,
    )


def session_detail(s: db.ChatSession, assistant: db.Assistant, messages: Sequence[db.ChatMessage],
                   active: Mapping[str, str | None]) -> SessionDetail:
    head = session_view(s, assistant, len(messages))
    return SessionDetail(**dict(head), messages=[message_view(m, active) for m in messages])


# --- a reply ----------------------------------------------------------------------------------------

class ChatAnswer(View):
    """An assistant's answer that is not stored (the OpenAI-compatible API: the caller sends the
    conversation): the completions reply's payload without the session and message ids."""

    answer: str = Field(description="the answer text with [ID:n] citation markers")
    model: str = Field(description="the chat model that wrote it; 'extractive' without one")
    insufficient: bool = Field(description="the documents do not support an answer (the text is then the "
                               "assistant's empty response)")
    truncated: bool = Field(False, description="the chat model stopped at the assistant's max_tokens: the answer "
                            "may end mid-sentence")
    references: list[ChatReference]
    citations: list[CitationView]
    notes: list[str] = Field(description="what the answer could not use, e.g. a deleted knowledge base")
    explain: ChatExplain


class ChatReply(View):
    """An assistant's answer to one question of a session (the JSON reply, and the final event of a
    stream: the same payload)."""

    session_id: str = Field(description="the session (created by this question when none was given)")
    question_id: str = Field(description="the stored question's message id")
    message_id: str = Field(description="the stored answer's message id")
    answer: str = Field(description="the answer text with [ID:n] citation markers")
    model: str = Field(description="the chat model that wrote it; 'extractive' without one")
    insufficient: bool = Field(description="the documents do not support an answer (the text is then the "
                               "assistant's empty response)")
    truncated: bool = Field(False, description="the chat model stopped at the assistant's max_tokens: the answer "
                            "may end mid-sentence")
    references: list[ChatReference]
    citations: list[CitationView]
    notes: list[str] = Field(description="what the answer could not use, e.g. a deleted knowledge base")
    explain: ChatExplain
