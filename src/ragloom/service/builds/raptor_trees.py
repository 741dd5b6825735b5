"""RAPTOR builds of a knowledge base: one summary tree per document (a *branch*), and with scope
``dataset`` one more tree over the documents' roots.

**Where summaries live.** A branch's summaries are search-store rows of kind ``summary`` with the
document's id and *the version they were built from* as their keys: searches match them like chunks
(and drop them with the version, DESIGN §3), a superseded version's rows are deleted with it when the
new version is published, and a deleted document's rows with the document. The knowledge-base tree's
rows have :data:`KB_TREE_DOC` / :data:`KB_TREE_VERSION` as their keys (retrieval treats that pair as
always active: ``ragloom.service.search.retrieval``), and no positions (they span documents).

**Incremental.** :class:`~ragloom.db.models.KnowledgePart` records, per document, the version and the
*recipe* (settings, summariser and embedder) its branch was built from: a build skips the documents
whose branch is current and rebuilds only the others. The knowledge-base tree is rebuilt when the set
of roots under it changed; its node ids depend only on what they summarise, so clusters whose members
did not change are found stored and cost nothing.

**Resume.** A node's id is a hash of (scope, recipe, layer, source ids). New nodes are written hidden
(``available=False``) layer by layer; a run that stopped finds them and goes on; the chat model's
replies are in the LLM cache (:mod:`ragloom.service.builds.llm_cache`) as soon as they arrive. When a tree is
complete its nodes are made visible in one write and the rows of an earlier tree that are not part of
it are deleted, so readers never see two trees of one document, and a re-run never duplicates one.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import xxhash
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ragloom.context import Context
from ragloom.dataflow import ChunkKind, ChunkRecord, Position
from ragloom.db.models import Document, KnowledgeBase, KnowledgePart, utcnow
from ragloom.docstore.base import Filters
from ragloom.generation.sentences import split_sentences
from ragloom.ingest.job import ORDER_STRIDE, telling_name
from ragloom.knowledge.raptor import (
    ExtractiveSummarizer,
    LlmSummarizer,
    Node,
    Summarizer,
    Tree,
    TreeHooks,
    budget,
    build_tree,
)
from ragloom.models.embedding import Embedder
from ragloom.schemas.builds import RaptorSettings
from ragloom.service import knowledgebases
from ragloom.service.accounts import workspace_models
from ragloom.service.builds import llm_cache
from ragloom.service.builds.jobs import DocumentPart, document_parts

log = logging.getLogger(__name__)

KIND = "raptor"
KB_SCOPE = "kb"
KB_TREE_DOC = "raptor-kb-tree"  # doc_id and version_id of the knowledge-base tree's rows
KB_TREE_VERSION = "raptor-kb-tree"
SUMMARY_ORDER = 2_000_000 * ORDER_STRIDE  # summaries list after every parsed and added chunk
LAYER_STRIDE = 1_000_000
SKIPPED_METHODS = ("table", "tag")  # rows of data, not prose (the reference skips structured data too)
MAX_POSITIONS = 64  # a summary's positions: its sources' regions, at most this many
PAGE = 1000
LEAF_KINDS = (ChunkKind.PARENT, ChunkKind.TOC, ChunkKind.SUMMARY)  # rows that are never leaves


def settings_of(kb: KnowledgeBase) -> RaptorSettings:
    return knowledgebases.raptor_settings(kb)


@dataclass(slots=True)
class Builder:
    """What one RAPTOR build of a knowledge base works with."""

    ctx: Context
    tenant_id: str
    kb_id: str
    kb_name: str
    settings: RaptorSettings
    embedder: Embedder
    summarizer: Summarizer
    chat: llm_cache.CachedChat | None
    budget: int
    recipe: str
    build_id: str | None = None
    positions: dict[str, list[Position]] = field(default_factory=dict)
    language: str = "en"  # the knowledge base's (its summaries are analysed as its chunks are)

    @property
    def mode(self) -> str:
        return "llm" if self.chat is not None else "extractive"


def builder(ctx: Context, kb: KnowledgeBase, *, build_id: str | None = None, backoff: float = 1.0) -> Builder:
    """The summariser, embedder and recipe of a knowledge base's RAPTOR builds: the workspace's chat model
    behind the LLM cache, else the extractive summariser."""
    settings = settings_of(kb)
    embedder = workspace_models.embedder(ctx, kb.embedding_model)
    chat = llm_cache.cached_chat(ctx, kb.tenant_id, count_tokens=embedder.count_tokens, backoff=backoff)
    context_tokens = ctx.settings.chat_max_context_tokens
    summarizer: Summarizer
    if chat is not None:
        summarizer = LlmSummarizer(chat, prompt=settings.prompt, max_token=settings.max_token,
                                   context_tokens=context_tokens, count_tokens=embedder.count_tokens,
                                   workers=ctx.settings.llm_concurrency)
        identity = chat.identity
    else:
        summarizer = ExtractiveSummarizer(lambda texts: embedder.embed_passages(list(texts)), split_sentences,
                                          max_token=settings.max_token, count_tokens=embedder.count_tokens)
        identity = ""
    shape = settings.model_dump(exclude={"use_raptor", "scope"})
    recipe = hashlib.sha256(json.dumps([shape, summarizer.built_by, identity, embedder.name],
                                       sort_keys=True).encode()).hexdigest()
    return Builder(ctx, kb.tenant_id, kb.id, kb.name, settings, embedder, summarizer, chat,
                   budget(context_tokens, settings.max_token, settings.prompt, embedder.count_tokens), recipe,
                   build_id, language=kb.language)


# --- what is there to build ------------------------------------------------------------------------

Branch = DocumentPart  # a document whose branch a build considers


def branches(ctx: Context, b: Builder, document_id: str | None) -> list[Branch]:
    """The documents with a published version (one, or all of the knowledge base) and whether their
    branch is current; documents of data methods (table, tag) are left out."""
    return document_parts(ctx, kb_id=b.kb_id, kind=KIND, recipe=b.recipe, document_id=document_id,
                          skipped_methods=SKIPPED_METHODS)


def leaves(ctx: Context, b: Builder, branch: Branch) -> list[Node]:
    """A document version's chunks in reading order (parents, TOC rows and summaries left out)."""
    rows = _rows(ctx, b.tenant_id,
                 Filters(kb_ids=[b.kb_id], doc_ids=[branch.doc_id], version_ids=[branch.version_id]))
    out = []
    for r in rows:
        if r.kind in LEAF_KINDS or not r.content.strip():
            continue
        b.positions[r.id] = list(r.positions)
        out.append(Node(r.id, r.content, np.asarray(r.vector, dtype=np.float32)))
    return out


def _rows(ctx: Context, tenant_id: str, filters: Filters) -> list[ChunkRecord]:
    out: list[ChunkRecord] = []
    while True:
        page, total = ctx.docstore.list_chunks(tenant_id, filters, offset=len(out), limit=PAGE)
        out.extend(page)
        if not page or len(out) >= total:
            return out


# --- building a tree -----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Target:
    """Where a tree's rows go: the document (version) of a branch, or the knowledge base's tree."""

    scope: str  # part scope: a document id, or "kb"
    doc_id: str
    version_id: str
    document_name: str
    title: str


def branch_target(branch: Branch) -> Target:
    return Target(branch.doc_id, branch.doc_id, branch.version_id, branch.name, telling_name(branch.name) or "")


def kb_target(b: Builder) -> Target:
    return Target(KB_SCOPE, KB_TREE_DOC, KB_TREE_VERSION, f"{b.kb_name} (all documents)", "")


def build(ctx: Context, b: Builder, target: Target, nodes: Sequence[Node],
          progress: Callable[[str, int, int], None]) -> Tree:
    """The tree over ``nodes``, its new rows stored hidden (see the module docstring)."""
    scope_key = target.version_id if target.scope != KB_SCOPE else f"kb:{b.kb_id}"

    def node_id(layer: int, sources: Sequence[str]) -> str:
        return xxhash.xxh3_128_hexdigest(f"{scope_key}:raptor:{b.recipe}:{layer}:{','.join(sources)}".encode())

    def stored(ids: Sequence[str]) -> dict[str, Node]:
        found = {}
        for r in ctx.docstore.get(b.tenant_id, list(ids)):
            if r.kind == ChunkKind.SUMMARY and r.doc_id == target.doc_id and r.kb_id == b.kb_id:
                b.positions[r.id] = list(r.positions)
                found[r.id] = Node(r.id, r.content, np.asarray(r.vector, dtype=np.float32), r.layer,
                                   tuple(r.source_ids))
        return found

    def save(new: Sequence[Node]) -> None:
        ctx.docstore.upsert(b.tenant_id, [_record(ctx, b, target, n, False) for n in new])

    hooks = TreeHooks(node_id=node_id, stored=stored, embed=lambda texts: b.embedder.embed_passages(list(texts)),
                      save=save, progress=progress)
    return build_tree(nodes, b.settings, b.summarizer, count_tokens=b.embedder.count_tokens, budget=b.budget,
                      hooks=hooks)


def _record(ctx: Context, b: Builder, target: Target, node: Node, available: bool, order: int = 0) -> ChunkRecord:
    from ragloom.nlp import analyze_chunk

    terms = analyze_chunk(ctx.analyzers.for_text(node.text, b.language), node.text, title=target.title)
    positions: list[Position] = []
    if target.scope != KB_SCOPE:
        seen = dict.fromkeys(p for s in node.source_ids for p in b.positions.get(s, []))
        positions = list(seen)[:MAX_POSITIONS]
    b.positions[node.id] = positions
    return ChunkRecord(
        id=node.id, kb_id=b.kb_id, doc_id=target.doc_id, version_id=target.version_id, content=node.text,
        vector=node.vector, document_name=target.document_name, content_terms=terms.content_terms,
        content_fine_terms=terms.content_fine_terms, title_terms=terms.title_terms,
        title_fine_terms=terms.title_fine_terms, available=available,
        order=order or SUMMARY_ORDER + node.layer * LAYER_STRIDE, kind=ChunkKind.SUMMARY, positions=positions,
        layer=node.layer, source_ids=list(node.source_ids), built_by=b.summarizer.built_by)


def summary_rows(ctx: Context, b: Builder, target: Target) -> list[ChunkRecord]:
    """Every summary row of a target (visible or not)."""
    rows = _rows(ctx, b.tenant_id, Filters(kb_ids=[b.kb_id], doc_ids=[target.doc_id],
                                           version_ids=[target.version_id], available_only=False))
    return [r for r in rows if r.kind == ChunkKind.SUMMARY]


def publish(ctx: Context, b: Builder, target: Target, tree: Tree, *, leaf_ids: Sequence[str] = ()) -> bool:
    """Make a finished tree the one searches see: its rows visible (in layer order), the other summary
    rows of the target deleted, its part recorded. False (and its rows deleted) when the document's
    published version changed meanwhile: the build of the new version makes the new branch."""
    keep = {n.id for n in tree.nodes}
    if target.scope != KB_SCOPE and not _still_active(ctx, target):
        if keep:
            ctx.docstore.delete(b.tenant_id, Filters(kb_ids=[b.kb_id], ids=list(keep)))
        return False
    rows = {r.id: r for r in summary_rows(ctx, b, target)}
    shown = []
    for i, node in enumerate(tree.nodes):
        row = rows.get(node.id)
        order = SUMMARY_ORDER + node.layer * LAYER_STRIDE + i
        shown.append(replace(row, available=True, order=order) if row is not None
                     else _record(ctx, b, target, node, True, order))
    if shown:
        ctx.docstore.upsert(b.tenant_id, shown)
    stale = [r for r in rows if r not in keep]
    if stale:
        ctx.docstore.delete(b.tenant_id, Filters(kb_ids=[b.kb_id], ids=stale))
    recipe = b.recipe if target.scope != KB_SCOPE else kb_recipe(b, leaf_ids)
    with ctx.db.session() as s:
        part = s.scalar(select(KnowledgePart).where(KnowledgePart.kb_id == b.kb_id, KnowledgePart.kind == KIND,
                                                    KnowledgePart.scope == target.scope))
        if part is None:
            part = KnowledgePart(kb_id=b.kb_id, kind=KIND, scope=target.scope)
            s.add(part)
        part.document_id = target.doc_id if target.scope != KB_SCOPE else None
        part.version_id = target.version_id if target.scope != KB_SCOPE else None
        part.recipe, part.root_ids = recipe, [n.id for n in tree.roots]
        part.rows, part.layers, part.build_id = len(tree.nodes), tree.layers, b.build_id
        part.built_at = utcnow()
    return True


def _still_active(ctx: Context, target: Target) -> bool:
    with ctx.db.session() as s:
        return s.scalar(select(Document.active_version_id).where(Document.id == target.doc_id)) == target.version_id


def discard_hidden(ctx: Context, b: Builder, target: Target) -> int:
    """Delete a target's summary rows that no finished build made visible (a cancelled or failed build's)."""
    hidden = [r.id for r in summary_rows(ctx, b, target) if not r.available]
    if hidden:
        ctx.docstore.delete(b.tenant_id, Filters(kb_ids=[b.kb_id], ids=hidden))
    return len(hidden)


# --- the knowledge base's tree ------------------------------------------------------------------------

def kb_recipe(b: Builder, leaf_ids: Sequence[str]) -> str:
    """The knowledge-base tree's recipe: the builder's and the roots it was built over."""
    return hashlib.sha256(f"{b.recipe}:{','.join(leaf_ids)}".encode()).hexdigest()


def kb_leaves(ctx: Context, b: Builder) -> list[Node]:
    """The roots of the current branches, document by document: the knowledge-base tree's leaves."""
    with ctx.db.session() as s:
        rows = s.execute(select(KnowledgePart.root_ids).join(Document, Document.id == KnowledgePart.document_id)
                         .where(KnowledgePart.kb_id == b.kb_id, KnowledgePart.kind == KIND,
                                KnowledgePart.version_id == Document.active_version_id,
                                KnowledgePart.recipe == b.recipe)
                         .order_by(Document.created_at, Document.name)).all()
    ids = [i for (root_ids,) in rows for i in root_ids]
    return [Node(r.id, r.content, np.asarray(r.vector, dtype=np.float32))
            for r in ctx.docstore.get(b.tenant_id, ids) if r.content.strip()]


def kb_tree_current(ctx: Context, b: Builder, leaf_ids: Sequence[str]) -> bool:
    with ctx.db.session() as s:
        part = s.scalar(select(KnowledgePart).where(KnowledgePart.kb_id == b.kb_id, KnowledgePart.kind == KIND,
                                                    KnowledgePart.scope == KB_SCOPE))
        return part is not None and part.recipe == kb_recipe(b, leaf_ids)


def drop_kb_tree(ctx: Context, session: Session, tenant_id: str, kb_id: str) -> int:
    """Remove the knowledge-base tree (its rows, and its part in ``session``); returns the rows deleted."""
    session.execute(delete(KnowledgePart).where(KnowledgePart.kb_id == kb_id, KnowledgePart.kind == KIND,
                                                KnowledgePart.scope == KB_SCOPE))
    return ctx.docstore.delete(tenant_id, Filters(kb_ids=[kb_id], doc_ids=[KB_TREE_DOC]))


def drop_all(ctx: Context, session: Session, kb: KnowledgeBase) -> int:
    """Remove every RAPTOR summary of the knowledge base (each document's branch, finished or not, and the
    knowledge-base tree) and their parts; returns the rows deleted."""
    doc_ids = list(session.scalars(select(Document.id).where(Document.kb_id == kb.id)))
    scopes = [Filters(kb_ids=[kb.id], doc_ids=doc_ids[i:i + PAGE], available_only=False)
              for i in range(0, len(doc_ids), PAGE)]
    stale = [r.id for scope in scopes for r in _rows(ctx, kb.tenant_id, scope) if r.kind == ChunkKind.SUMMARY]
    deleted = ctx.docstore.delete(kb.tenant_id, Filters(kb_ids=[kb.id], ids=stale)) if stale else 0
    deleted += drop_kb_tree(ctx, session, kb.tenant_id, kb.id)
    session.execute(delete(KnowledgePart).where(KnowledgePart.kb_id == kb.id, KnowledgePart.kind == KIND))
    return deleted


def has_kb_tree(session: Session, kb_id: str) -> bool:
    return session.scalar(select(KnowledgePart.id).where(KnowledgePart.kb_id == kb_id, KnowledgePart.kind == KIND,
                                                         KnowledgePart.scope == KB_SCOPE)) is not None


def forget_branch(session: Session, kb_id: str, doc_id: str) -> None:
    """A document's branch is gone (its version was superseded): forget its part."""
    session.execute(delete(KnowledgePart).where(KnowledgePart.kb_id == kb_id, KnowledgePart.kind == KIND,
                                                KnowledgePart.scope == doc_id))
