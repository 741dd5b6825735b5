"""The knowledge graph of a knowledge base (REFERENCE §9): pure, storage-agnostic building blocks.

A build, per document then per knowledge base::

    extractor = make_extractor("offline", analyzer=analyzer)       # or "light"/"general" with a chat model
    subgraph = extractor.extract(chunks)                             # [(chunk_id, doc_id, text)] of one document
    graph = Graph.from_dict(stored) if stored else Graph()
    change = graph.merge(subgraph)                                   # graph.remove(doc_id) undoes it
    resolve_entities(graph, only=change.touched)                     # optional; runner= to confirm by LLM
    compute_pagerank(graph)
    communities, _ = build_communities(graph, runner=runner)         # offline reports without a runner
    stored = graph.to_dict()

and per question::

    index = GraphIndex(graph, analyzer)                              # once per graph version
    evidence = graph_evidence(question, index, communities)          # evidence.text, evidence.chunk_ids

Modules: :mod:`.model` (data types), :mod:`.offline` and :mod:`.llm_extract` (extraction, behind
:class:`Extractor` in :mod:`.extract`), :mod:`.records` and :mod:`.prompts` (the model's record format),
:mod:`.llm` (cache, retries, bounded concurrency), :mod:`.describe` (description merging),
:mod:`.merged` (the merged graph), :mod:`.resolution`, :mod:`.rank` (PageRank), :mod:`.communities`
and :mod:`.reports` (Leiden and reports), :mod:`.paths`, :mod:`.index` and :mod:`.query` (question
side), :mod:`.view` (nodes and links for a UI).
"""

from ragloom.knowledge.graph.communities import detect_communities
from ragloom.knowledge.graph.describe import DescriptionPolicy
from ragloom.knowledge.graph.extract import (
    EXTRACTION_METHODS,
    CostEstimate,
    Extractor,
    estimate_cost,
    make_extractor,
)
from ragloom.knowledge.graph.index import EmbedFn, EntityMatch, GraphIndex, entity_text
from ragloom.knowledge.graph.llm import LlmCache, LlmRunner, LlmUsage, MemoryLlmCache, llm_cache_key
from ragloom.knowledge.graph.llm_extract import LlmExtractor
from ragloom.knowledge.graph.merged import Graph, GraphChange, readable_part, summarize_long_descriptions
from ragloom.knowledge.graph.model import (
    ChunkText,
    Community,
    Entity,
    ExtractionStats,
    Finding,
    ProgressFn,
    Relation,
    Subgraph,
    canonical_name,
    entity_key,
)
from ragloom.knowledge.graph.offline import OfflineExtractor
from ragloom.knowledge.graph.paths import GraphPath, n_hop_paths
from ragloom.knowledge.graph.query import GraphEvidence, ScoredEntity, ScoredRelation, graph_evidence
from ragloom.knowledge.graph.rank import compute_pagerank
from ragloom.knowledge.graph.reports import ReportStats, build_communities, offline_report, write_reports
from ragloom.knowledge.graph.resolution import Candidate, Resolution, find_candidates, resolve_entities
from ragloom.knowledge.graph.view import node_link

__all__ = [
    "EXTRACTION_METHODS",
    "Candidate",
    "ChunkText",
    "Community",
    "CostEstimate",
    "DescriptionPolicy",
    "EmbedFn",
    "Entity",
    "EntityMatch",
    "ExtractionStats",
    "Extractor",
    "Finding",
    "Graph",
    "readable_part",
    "GraphChange",
    "GraphEvidence",
    "GraphIndex",
    "GraphPath",
    "LlmCache",
    "LlmExtractor",
    "LlmRunner",
    "LlmUsage",
    "MemoryLlmCache",
    "OfflineExtractor",
    "ProgressFn",
    "Relation",
    "ReportStats",
    "Resolution",
    "ScoredEntity",
    "ScoredRelation",
    "Subgraph",
    "build_communities",
    "canonical_name",
    "compute_pagerank",
    "detect_communities",
    "entity_key",
    "entity_text",
    "estimate_cost",
    "find_candidates",
    "graph_evidence",
    "llm_cache_key",
    "make_extractor",
    "n_hop_paths",
    "node_link",
    "offline_report",
    "resolve_entities",
    "summarize_long_descriptions",
    "write_reports",
]
