"""RAPTOR summary trees (REFERENCE §8): chunk vectors clustered layer by layer, each cluster summarised
(by the chat model, or extractively without one), until one row is left or the depth limit is reached.

A pure library: :func:`build_tree` receives the leaves, a :class:`Summarizer` and hooks for ids,
storage and progress; :mod:`ragloom.service.builds.raptor_trees` gives it a knowledge base's chunks and stores the
summaries as searchable rows."""

from ragloom.knowledge.raptor.cluster import cluster
from ragloom.knowledge.raptor.summarize import Cluster, ExtractiveSummarizer, LlmSummarizer, Summarizer, budget
from ragloom.knowledge.raptor.tree import Node, Tree, TreeEstimate, TreeHooks, build_tree, estimate_tree, plan_layer

__all__ = [
    "Cluster", "ExtractiveSummarizer", "LlmSummarizer", "Node", "Summarizer",
    "Tree", "TreeEstimate", "TreeHooks", "budget", "build_tree", "cluster", "estimate_tree", "plan_layer",
]
