"""A question to answer from the datasets (:class:`AnswerRequest`), and the answer with the evidence it
cites and how well each citation is supported."""

from __future__ import annotations

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from ragloom.schemas.base import Number, Positions, View, absent_unless
from ragloom.schemas.options import EvidenceOptions
from ragloom.schemas.retrieval import Question, ScopeView
from ragloom.schemas.scope import ScopeRequest


class Reference(View):
    """One piece of evidence an answer cites as ``[ID:id]``."""

    id: int = Field(description="the number cited in the answer text as [ID:id]")
    chunk_id: str
    doc_id: str
    version_id: str
    document_name: str
    content: str
    positions: Positions
    figure: str | SkipJsonSchema[None] = absent_unless("a figure chunk: its picture (GET it with the same "
                                                       "credentials)")


class AnswerCitation(View):
    """One ``[ID:id]`` marker of an answer sentence and how well the cited chunk supports it."""

    sentence: int = Field(description="the answer sentence it belongs to (0-based, in reading order)")
    text: str = Field(description="that answer sentence, without markers")
    id: int = Field(description="the evidence cited; among the references unless the verdict is 'unsupported' "
                                "(then the marker was removed from the answer)")
    verdict: str | None = Field(description="supported, weak (kept, but the chunk only shares the sentence's topic) "
                                            "or unsupported (removed); null when not verified")
    support: Number | None = Field(description="the verification score (0..1): 0.5 x calibrated vector similarity "
                                                "+ 0.5 x term similarity to the cited chunk; null when not verified")
    supporting_sentence: str | None = Field(description="the sentence of the cited chunk that best matches the "
                                                        "answer sentence")
    inserted: bool = Field(description="the marker was added by similarity, not written by the model")


class CitedAnswer(View):
    """An answer with the evidence it cites (only the cited evidence, by id)."""

    answer: str = Field(description="the answer text with [ID:n] citation markers")
    model: str = Field(description="the chat model that wrote it; 'extractive' without one")
    insufficient: bool = Field(description="the evidence does not support an answer")
    truncated: bool = Field(False, description="the chat model stopped at its token limit: the answer may end "
                            "mid-sentence")
    references: list[Reference]
    mode: str = Field(description="'extractive' (sentences quoted from the documents, no chat model) or 'model'")
    citations: list[AnswerCitation] = Field(description="every citation checked, with its verdict")
    scope: ScopeView | SkipJsonSchema[None] = absent_unless("the request set scope: the scope decided before "
                                                           "retrieval (clarify and gap: the answer asks or names it)")


class AnswerRequest(EvidenceOptions, Question):
    """A question, the datasets to answer from, which of their chunks may serve as evidence, and how many."""

    top_n: int = Field(6, ge=1, le=64, description="evidence chunks; at most RAGLOOM_MAX_RESULT_WINDOW too")
    stream: bool = False
    scope: ScopeRequest | None = Field(None, description="the applicability scope, as the retrieval's: a missing "
                                       "value is asked for and a value no document carries is named, with nothing "
                                       "retrieved; the answer's scope says what was decided")
