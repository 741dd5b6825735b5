"""The ``raptor`` kind of knowledge build: estimate, run, discard, and the document life-cycle hooks
(the trees themselves: :mod:`ragloom.service.builds.raptor_trees`).

A build of a dataset (``document_id`` None) rebuilds the branches that are not current and skips the
others; a build of one document rebuilds that branch. With scope ``dataset`` the knowledge-base tree
is then refreshed over the current roots (by the last build waiting for the dataset: a burst of
uploads refreshes it once); with scope ``file`` a knowledge-base tree left from before is dropped.

Hooks: when a document is published its old branch went with the old version, so its part is
forgotten; with ``use_raptor`` a build of the document is queued (a new or re-parsed document rebuilds
only its branch), without it a knowledge-base tree (which summarised the old text) is dropped. When
documents are deleted their branches went with them; the knowledge-base tree, which summarised them
too, is dropped at once, and rebuilt without them when ``use_raptor`` is on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from ragloom.context import Context
from ragloom.db.models import KnowledgeBase, KnowledgeBuild
from ragloom.knowledge.raptor import LlmSummarizer, estimate_tree
from ragloom.service.builds import raptor_trees
from ragloom.service.builds.jobs import BuildJob, Estimate, enqueue
from ragloom.states import TaskStatus

log = logging.getLogger(__name__)

LLM_KEYS = ("calls", "cache_hits", "retries", "prompt_tokens", "completion_tokens")


class RaptorKind:
    name = raptor_trees.KIND

    # --- estimate ---

    def estimate(self, ctx: Context, kb: KnowledgeBase, document_id: str | None) -> Estimate:
        """Chat-model calls and tokens of building the branches that are not current (their first layer
        planned for real, the rest projected), plus the knowledge-base tree's (an upper bound: one call
        per merge of two rows)."""
        b = raptor_trees.builder(ctx, kb)
        todo = raptor_trees.branches(ctx, b, document_id)
        stale = [t for t in todo if not t.current]
        llm = isinstance(b.summarizer, LlmSummarizer)
        count = b.embedder.count_tokens

        def prompt_tokens(texts: Sequence[str]) -> int:
            if not isinstance(b.summarizer, LlmSummarizer):
                return 0
            return sum(count(m["content"]) for m in b.summarizer.messages(texts))

        calls = tokens = completion = chunks = layers = first = 0
        keys: list[str] = []
        for branch in stale:
            nodes = raptor_trees.leaves(ctx, b, branch)
            chunks += len(nodes)
            est = estimate_tree(nodes, b.settings, count_tokens=count, budget=b.budget, prompt_tokens=prompt_tokens)
            calls, tokens = calls + est.calls, tokens + est.prompt_tokens
            completion += est.completion_tokens
            layers = max(layers, est.layers)
            first += len(est.first_layer)
            if b.chat is not None and isinstance(b.summarizer, LlmSummarizer):
                keys += [b.chat.key(b.summarizer.messages(texts), temperature=0.0, max_tokens=b.settings.max_token)
                         for texts in est.first_layer]
        kb_calls = 0
        with ctx.db.session() as s:
            tree = raptor_trees.has_kb_tree(s, kb.id)
        if b.settings.scope == "dataset" and len(todo) > 1 and (stale or not tree):
            kb_calls = len(todo) - 1
            tokens += kb_calls * prompt_tokens(()) + 2 * kb_calls * b.settings.max_token
            completion += kb_calls * b.settings.max_token
        cached = len(b.chat.cache.get_many(keys)) if b.chat is not None and keys else 0
        summaries = calls + kb_calls
        note = ("layer 1 is planned from the chunks' vectors (exact); higher layers are projected from its "
                "reduction, each summary counted at max_token tokens")
        if not llm:
            note = "no chat model: summaries are extractive (no LLM call); " + note
        return Estimate(
            kind=self.name, mode=b.mode, model=b.chat.name if b.chat is not None else None, documents=len(todo),
            documents_to_build=len(stale), llm_calls=summaries if llm else 0, llm_calls_cached=cached,
            prompt_tokens=tokens if llm else 0, completion_tokens=completion if llm else 0, note=note,
            details={"chunks": chunks, "summaries": summaries, "first_layer_calls": first, "layers": layers,
                     "knowledge_base_tree": b.settings.scope == "dataset", "knowledge_base_tree_calls": kb_calls})

    # --- run ---

    def run(self, job: BuildJob) -> str:
        ctx = job.ctx
        kb = job.knowledge_base()
        b = raptor_trees.builder(ctx, kb, build_id=job.build_id)
        todo = raptor_trees.branches(ctx, b, job.document_id)
        stale = [t for t in todo if not t.current]
        kb_step = b.settings.scope == "dataset" and not _another_waits(ctx, job)
        steps = max(1, len(stale) + (1 if kb_step else 0))
        base = {k: int(job.stats.get("llm", {}).get(k, 0)) for k in LLM_KEYS}
        job.stats.update(mode=b.mode, model=b.chat.name if b.chat is not None else None, documents=len(todo),
                         documents_current=len(todo) - len(stale), documents_built=0, summaries_made=0,
                         summaries_reused=0)

        def counts() -> None:
            used = b.chat.usage.as_dict() if b.chat is not None else {}
            job.stats["llm"] = {k: base[k] + int(used.get(k, 0)) for k in LLM_KEYS}

        try:
            self._branches(job, b, stale, steps, counts)
            tree_note = self._kb_tree(job, b, kb, kb_step, len(stale), steps, counts)
        finally:
            counts()  # a run that fails keeps the costs it had in the build's stats
        llm = job.stats["llm"]
        cost = (f"; chat model: {llm['calls']} calls, {llm['cache_hits']} answered from the cache"
                if b.chat is not None else "; extractive summaries (no chat model)")
        return (f"{job.stats['documents_built']} of {len(todo)} documents summarised "
                f"({job.stats['summaries_made']} summaries made, {job.stats['summaries_reused']} reused), "
                f"{len(todo) - len(stale)} up to date{tree_note}{cost}")

    def _branches(self, job: BuildJob, b: raptor_trees.Builder, stale: list[raptor_trees.Branch], steps: int,
                  counts: Callable[[], None]) -> None:
        ctx = job.ctx
        for i, branch in enumerate(stale):
            target = raptor_trees.branch_target(branch)
            job.current = (b, target)

            def report(message: str, done: int, total: int, i: int = i, name: str = branch.name) -> None:
                counts()
                job.progress("document", (i + 0.9 * done / max(1, total)) / steps,
                             f"{name} ({i + 1}/{len(stale)}): {message}")

            report("reading its chunks", 0, 1)
            tree = raptor_trees.build(ctx, b, target, raptor_trees.leaves(ctx, b, branch), report)
            job.stored += tree.made
            if raptor_trees.publish(ctx, b, target, tree):
                job.stats["documents_built"] += 1
            job.stats["summaries_made"] += tree.made
            job.stats["summaries_reused"] += tree.reused
            job.current = None

    def _kb_tree(self, job: BuildJob, b: raptor_trees.Builder, kb: KnowledgeBase, kb_step: bool, done: int, steps: int,
                 counts: Callable[[], None]) -> str:
        ctx = job.ctx
        if not kb_step:
            with ctx.db.session() as s:
                if b.settings.scope == "file" and raptor_trees.has_kb_tree(s, kb.id):
                    raptor_trees.drop_kb_tree(ctx, s, kb.tenant_id, kb.id)
                    return "; the knowledge-base tree was removed (scope is file)"
            return ""
        job.progress("dataset", done / steps, "the knowledge-base tree over the documents' roots", force=True)
        nodes = raptor_trees.kb_leaves(ctx, b)
        if len(nodes) < 2:
            with ctx.db.session() as s:
                raptor_trees.drop_kb_tree(ctx, s, kb.tenant_id, kb.id)
            return "; no knowledge-base tree (fewer than two roots)"
        ids = [n.id for n in nodes]
        if raptor_trees.kb_tree_current(ctx, b, ids):
            return "; the knowledge-base tree is up to date"
        target = raptor_trees.kb_target(b)
        job.current = (b, target)

        def report(message: str, finished: int, total: int) -> None:
            counts()
            job.progress("dataset", (done + 0.9 * finished / max(1, total)) / steps, f"all documents: {message}")

        tree = raptor_trees.build(ctx, b, target, nodes, report)
        job.stored += tree.made
        raptor_trees.publish(ctx, b, target, tree, leaf_ids=ids)
        job.stats["summaries_made"] += tree.made
        job.stats["summaries_reused"] += tree.reused
        job.stats["knowledge_base_tree"] = {"roots": len(ids), "rows": len(tree.nodes), "layers": tree.layers}
        job.current = None
        return f"; the knowledge-base tree has {len(tree.nodes)} summaries over {len(ids)} roots"

    def discard(self, job: BuildJob) -> None:
        if job.current is None:
            return
        b, target = job.current
        dropped = raptor_trees.discard_hidden(job.ctx, b, target)
        log.info("build %s: %d unfinished summaries of %s deleted", job.build_id, dropped, target.document_name)

    # --- hooks ---

    def on_published(self, ctx: Context, kb: KnowledgeBase, doc_id: str) -> None:
        with ctx.db.session() as s:
            raptor_trees.forget_branch(s, kb.id, doc_id)
            if raptor_trees.settings_of(kb).use_raptor:
                enqueue(s, kb, kind=self.name, document_id=doc_id, trigger="publish")
            elif raptor_trees.has_kb_tree(s, kb.id):
                raptor_trees.drop_kb_tree(ctx, s, kb.tenant_id, kb.id)

    def on_deleted(self, ctx: Context, session: Session, kb: KnowledgeBase, doc_ids: Sequence[str]) -> None:
        if not raptor_trees.has_kb_tree(session, kb.id):
            return
        raptor_trees.drop_kb_tree(ctx, session, kb.tenant_id, kb.id)
        if raptor_trees.settings_of(kb).use_raptor:
            enqueue(session, kb, kind=self.name, document_id=None, trigger="delete")

    def drop(self, ctx: Context, session: Session, kb: KnowledgeBase) -> int:
        return raptor_trees.drop_all(ctx, session, kb)


def _another_waits(ctx: Context, job: BuildJob) -> bool:
    """Whether a later RAPTOR build of the same dataset waits (it will refresh the knowledge-base tree)."""
    with ctx.db.session() as s:
        return s.scalar(select(KnowledgeBuild.id).where(
            KnowledgeBuild.kb_id == job.kb_id, KnowledgeBuild.kind == raptor_trees.KIND,
            KnowledgeBuild.status == TaskStatus.QUEUED, KnowledgeBuild.id != job.build_id).limit(1)) is not None
