"""A question to an assistant (:class:`CompletionRequest`) and its reply: the answer, the references
it cites (with their status now: current, superseded or deleted), each citation's verification and
how the question was understood and searched."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from ragloom.schemas.base import Number, Positions, View, absent_unless
from ragloom.schemas.chunks import TableRows
from ragloom.schemas.retrieval import Explain, ScopeView
from ragloom.states import ReferenceStatus

MAX_VARIABLES = 32


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
    figure: str | SkipJsonSchema[None] = absent_unless("a cited figure whose document still exists: its picture")
    similarity: Number | None = Field(None, description="the retrieval's score of the chunk when it was cited "
                                      "(null on answers stored before scores were kept)")
    vector_similarity: Number | None = Field(None, description="its vector side")
    term_similarity: Number | None = Field(None, description="its full-text side")
    source_url: str | None = Field(None, description="a document a source's sync made: the item's URL at its "
                                   "source (a page of the web site, the file in the bucket...), as when cited")
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


class CompletionRequest(BaseModel):
    """A question to an assistant, in a session (a new one when ``session_id`` is not given)."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=4000)
    session_id: str | None = Field(None, description="continue this session; null = start a new one")
    stream: bool = Field(False, description="server-sent events: answer deltas, then the reply, then [DONE]")
    explain: bool = Field(False, description="add the retrieval's candidates and scores to the reply's explain")
    variables: dict[str, str] = Field(default_factory=dict, max_length=MAX_VARIABLES,
                                      description="values of the system prompt's {name} slots")
