"""What the MCP server's tools return (``ragloom mcp``, ``/mcp``): the knowledge bases the caller may
read, a search's passages with document and pages, and an answer with its references."""

from __future__ import annotations

from pydantic import BaseModel, Field


class KnowledgeBase(BaseModel):
    id: str
    name: str
    description: str
    language: str
    documents: int = Field(description="documents in the knowledge base")


class KnowledgeBases(BaseModel):
    knowledge_bases: list[KnowledgeBase]


class FoundChunk(BaseModel):
    document: str = Field(description="the document's file name")
    document_id: str
    knowledge_base_id: str
    page: int | None = Field(description="the first page the chunk is on (1-based); null when the format "
                                         "has no pages")
    pages: list[int] = Field(description="every page the chunk is on")
    score: float = Field(description="similarity to the question, 0..1; the best first")
    text: str


class SearchResult(BaseModel):
    chunks: list[FoundChunk]
    total: int = Field(description="matching chunks in all (the best top_n are returned)")


class AnswerReference(BaseModel):
    id: int = Field(description="n of the answer's [ID:n] citations")
    document: str
    document_id: str
    pages: list[int]
    text: str = Field(description="the cited chunk")


class CitedAnswer(BaseModel):
    answer: str = Field(description="the answer, citing its sources as [ID:n]")
    model: str = Field(description="the chat model that wrote it, or 'extractive' (sentences of the sources)")
    insufficient: bool = Field(description="true when the knowledge bases do not answer the question")
    references: list[AnswerReference]
