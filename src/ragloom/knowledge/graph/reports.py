"""Community reports: written by the chat model when there is one, else built offline.

* ``llm`` (REFERENCE §9 step 6): the community's entities (most central first) and relations (heaviest
  first), as many as fit in ``max_input_tokens``, go to the model, which answers a JSON object
  ``{title, summary, findings: [{summary, explanation}], rating, rating_explanation}``. A reply that
  cannot be read gives the offline report instead (counted in :attr:`ReportStats.unreadable`).
* ``offline``: the title names the top entities by PageRank, the summary says what the community holds
  and its strongest relations, the findings are those relations with their descriptions; not rated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ragloom.knowledge.graph.communities import detect_communities
from ragloom.knowledge.graph.describe import language_of
from ragloom.knowledge.graph.llm import LlmRunner
from ragloom.knowledge.graph.merged import Graph
from ragloom.knowledge.graph.model import Community, Finding, Relation
from ragloom.knowledge.graph.prompts import COMMUNITY_REPORT_PROMPT
from ragloom.knowledge.graph.text import clip, rough_tokens
from ragloom.knowledge.toc_llm import parse_json_reply

MAX_INPUT_TOKENS = 3000
TOP_NAMES = 3
TOP_RELATIONS = 5


@dataclass(slots=True)
class ReportStats:
    llm: int = 0
    offline: int = 0
    unreadable: int = 0


def _keys(graph: Graph, community: Community) -> list[str]:
    return [k for k in (graph.key_of(n) for n in community.entities) if k in graph.entities]


def _inner_relations(graph: Graph, keys: Sequence[str]) -> list[Relation]:
    """The relations between entities of ``keys``, heaviest first."""
    inside = set(keys)
    found: dict[tuple[str, str], Relation] = {}
    for k in keys:
        for other, r in graph.neighbours(k):
            if other in inside:
                found[(min(k, other), max(k, other))] = r
    return sorted(found.values(), key=lambda r: (-r.weight, r.source, r.target))


def _one_line(text: str, tokens: int = 40) -> str:
    return clip(" ".join(text.split()), tokens)


def offline_report(graph: Graph, community: Community) -> Community:
    """``community`` with an offline report (see the module docstring)."""
    keys = _keys(graph, community)
    names = [graph.entities[k].name for k in keys]
    top = names[:TOP_NAMES]
    title = ", ".join(top)
    relations = _inner_relations(graph, keys)[:TOP_RELATIONS]
    types = sorted({graph.entities[k].type for k in keys})
    summary = (f"{len(names)} related entities ({', '.join(types)}), the most central being {', '.join(top)}.")
    if relations:
        summary += " Strongest relations: " + "; ".join(f"{r.source} – {r.target}" for r in relations[:3]) + "."
    findings = [Finding(f"{r.source} – {r.target}", _one_line(r.description)) for r in relations]
    return replace(community, title=title, summary=summary, findings=findings, rating=0.0,
                   rating_explanation="not rated: offline report", method="offline")


def _prompt(graph: Graph, community: Community, max_tokens: int) -> str:
    keys = _keys(graph, community)
    used = 0
    entity_lines: list[str] = []
    for i, k in enumerate(keys):
        e = graph.entities[k]
        line = f"{i},{e.name},{e.type},{_one_line(e.description, 80)}"
        used += rough_tokens(line)
        if used > max_tokens // 2 and entity_lines:
            break
        entity_lines.append(line)
    relation_lines: list[str] = []
    for i, r in enumerate(_inner_relations(graph, keys)):
        line = f"{i},{r.source},{r.target},{_one_line(r.description, 60)}"
        used += rough_tokens(line)
        if used > max_tokens and relation_lines:
            break
        relation_lines.append(line)
    text = "\n".join(entity_lines + relation_lines)
    return COMMUNITY_REPORT_PROMPT.format(language=language_of(text), entities="\n".join(entity_lines),
                                          relations="\n".join(relation_lines) or "(none)")


def _read_report(reply: str) -> dict[str, object] | None:
    """The report object of a reply: the outermost ``{...}`` (code fences and prose around it ignored;
    trailing commas and single quotes repaired), or None."""
    start, end = reply.find("{"), reply.rfind("}")
    if start == -1 or end <= start:
        return None
    data = parse_json_reply(f"[{reply[start : end + 1]}]")  # bracketed: the object is the outermost value
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if not isinstance(data, dict) or not str(data.get("title", "")).strip():
        return None
    return data


def _findings(raw: object) -> list[Finding]:
    out = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict) and str(item.get("summary", "")).strip():
            out.append(Finding(str(item["summary"]).strip(), str(item.get("explanation", "")).strip()))
        elif isinstance(item, str) and item.strip():
            out.append(Finding(item.strip()))
    return out


def _rating(raw: object) -> float:
    try:
        return min(10.0, max(0.0, float(str(raw))))
    except ValueError:
        return 0.0


def llm_report(graph: Graph, community: Community, runner: LlmRunner, *,
               max_input_tokens: int = MAX_INPUT_TOKENS) -> Community | None:
    """``community`` with the chat model's report, or None when its reply cannot be read."""
    data = _read_report(runner.ask_text(_prompt(graph, community, max_input_tokens)))
    if data is None:
        return None
    return replace(community, title=" ".join(str(data["title"]).split()),
                   summary=str(data.get("summary", "")).strip(), findings=_findings(data.get("findings")),
                   rating=_rating(data.get("rating", 0)),
                   rating_explanation=str(data.get("rating_explanation", "")).strip(), method="llm")


def write_reports(graph: Graph, communities: Sequence[Community], *, runner: LlmRunner | None = None,
                  max_input_tokens: int = MAX_INPUT_TOKENS) -> tuple[list[Community], ReportStats]:
    """Every community with its report (the chat model's when ``runner`` is given), in the same order."""
    stats = ReportStats()
    if runner is None:
        stats.offline = len(communities)
        return [offline_report(graph, c) for c in communities], stats
    written = runner.map(lambda c: llm_report(graph, c, runner, max_input_tokens=max_input_tokens),
                         list(communities))
    out = []
    for community, report in zip(communities, written, strict=True):
        if report is None:
            stats.unreadable += 1
            stats.offline += 1
            out.append(offline_report(graph, community))
        else:
            stats.llm += 1
            out.append(report)
    return out, stats


def build_communities(graph: Graph, *, runner: LlmRunner | None = None, max_cluster_size: int = 12,
                      max_input_tokens: int = MAX_INPUT_TOKENS) -> tuple[list[Community], ReportStats]:
    """:func:`~ragloom.knowledge.graph.communities.detect_communities` then :func:`write_reports`.
    Compute PageRank first (it orders the entities); the reports of unchanged communities come from the
    runner's cache on a rebuild."""
    found = detect_communities(graph, max_cluster_size=max_cluster_size)
    return write_reports(graph, found, runner=runner, max_input_tokens=max_input_tokens)
