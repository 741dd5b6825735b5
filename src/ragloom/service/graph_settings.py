"""A knowledge base's knowledge-graph settings (``graphrag``), validated like the RAPTOR ones."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragloom.errors import InvalidRequestError


class GraphSettings(BaseModel):
    """How the knowledge graph of a knowledge base is built (``graphrag``, or ``parser_config.graphrag``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    use_graphrag: bool = Field(False, description="extract a document's subgraph by itself when the document is "
                               "published (new, replaced or re-parsed); builds can always be started by hand")
    method: Literal["offline", "light", "general"] = Field(
        "offline", description="offline: capitalised noun phrases and co-occurrence (no chat model); light: "
        "the chat model, one pass; general: the chat model with gleaning and the entity types below")
    entity_types: list[str] = Field(default_factory=lambda: ["organization", "person", "geo", "event", "category"],
                                    max_length=32, description="entity types the general method extracts")
    resolution: bool = Field(False, description="merge entities that name the same thing (e.g. IBM and I.B.M.)")
    community: bool = Field(False, description="detect communities (Leiden) and write their reports")

    @classmethod
    def parse(cls, data: Any, *, strict: bool = True) -> GraphSettings:
        """Validated settings; :class:`InvalidRequestError` naming every bad field."""
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise InvalidRequestError("graphrag must be an object, e.g. {\"use_graphrag\": true}")
        try:
            return cls.model_validate(data, strict=strict)
        except ValidationError as exc:
            problems = "; ".join(f"graphrag.{'.'.join(str(p) for p in err['loc']) or 'settings'}: {err['msg']}"
                                 for err in exc.errors())
            raise InvalidRequestError(f"invalid knowledge-graph settings: {problems}") from exc
