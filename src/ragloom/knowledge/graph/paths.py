"""n-hop paths from an entity of the merged graph (REFERENCE §9: ``n_hop_with_weight``).

From the start entity, every simple path of 1 to ``hops`` relations, following at each entity its
``fanout`` heaviest relations (ties by key). Deterministic; paths are listed shortest first, then in the
order they were walked.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragloom.knowledge.graph.merged import Graph
from ragloom.knowledge.graph.model import Relation

HOPS = 2
FANOUT = 8


@dataclass(frozen=True, slots=True)
class GraphPath:
    """A walk through the graph: entity keys ``keys`` (``len(relations) + 1`` of them) and the relations
    between consecutive ones."""

    keys: tuple[str, ...]
    relations: tuple[Relation, ...]

    @property
    def hops(self) -> int:
        return len(self.relations)

    def names(self, graph: Graph) -> list[str]:
        return [graph.entities[k].name if k in graph.entities else k for k in self.keys]

    def to_dict(self, graph: Graph) -> dict[str, object]:
        return {"path": self.names(graph), "weights": [r.weight for r in self.relations],
                "descriptions": [r.description for r in self.relations]}


def n_hop_paths(graph: Graph, key: str, *, hops: int = HOPS, fanout: int = FANOUT) -> list[GraphPath]:
    """The paths from entity ``key`` (a canonical key) of 1 to ``hops`` relations (see the module docstring)."""
    if key not in graph.entities or hops < 1:
        return []
    out: list[GraphPath] = []
    frontier = [GraphPath((key,), ())]
    for _ in range(hops):
        grown: list[GraphPath] = []
        for path in frontier:
            for other, relation in graph.neighbours(path.keys[-1])[:fanout]:
                if other not in path.keys:
                    grown.append(GraphPath((*path.keys, other), (*path.relations, relation)))
        out.extend(grown)
        frontier = grown
    return out
