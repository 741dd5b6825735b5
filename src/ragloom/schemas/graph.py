"""A knowledge base's knowledge graph as the API shows it: entities, relations and community reports."""

from __future__ import annotations

from pydantic import BaseModel, Field


class GraphNode(BaseModel):
    id: str
    name: str
    type: str
    description: str = ""
    weight: float = 0.0
    pagerank: float = 0.0
    aliases: list[str] = Field(default_factory=list)
    doc_ids: list[str] = Field(default_factory=list)
    degree: int = 0
    community: str | None = Field(None, description="the deepest community holding it")


class GraphEdge(BaseModel):
    source: str
    target: str
    description: str = ""
    keywords: list[str] = Field(default_factory=list)
    weight: float = 0.0
    doc_ids: list[str] = Field(default_factory=list)


class GraphCommunity(BaseModel):
    id: str
    level: int
    title: str = ""
    summary: str = ""
    size: int = 0
    rating: float = 0.0
    parent: str | None = None


class GraphView(BaseModel):
    """A dataset's knowledge graph for a UI to draw: the entities of highest PageRank, the relations
    among them, and the communities holding them."""

    entities: int = Field(description="entities in the whole graph")
    relations: int = Field(description="relations in the whole graph")
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    communities: list[GraphCommunity]
