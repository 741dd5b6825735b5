"""Moving a knowledge base to another embedding model: a re-index.

A knowledge base keeps the embedding model its vectors were made with (``embedding_model``): vectors of
two models cannot be compared, so questions are embedded with that same model. Changing it means
re-embedding every document: :func:`reindex` records the new model and queues a new version of every
document (the same re-parse as ``POST .../documents/{doc}/reparse``). Each document keeps answering from
its current version until its new one is published; until then its vectors are the old model's, so
searches lean on keywords. When the new model's vectors have another size, the workspace's search index
is recreated (possible only when no other knowledge base of the workspace uses it: all share one), and
the documents are searchable again as their new versions are published.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from ragloom.context import Context, Principal
from ragloom.schemas.datasets import Reindexed
from ragloom.service import knowledgebases
from ragloom.service.accounts import audit, workspace_models
from ragloom.service.documents import catalog
from ragloom.service.knowledgebases import kb_view


def reindex(ctx: Context, session: Session, *, principal: Principal, kb_id_or_name: str,
            embedding_model: str | None = None, fusion: str = "normalized") -> Reindexed:
    """Switch the knowledge base to ``embedding_model`` (default: the workspace's current one) and queue
    every document for re-embedding. Its creator or a workspace owner or admin."""
    kb = knowledgebases.get_editable(session, principal=principal, kb_id_or_name=kb_id_or_name,
                                     action="re-index it")
    name = workspace_models.new_kb_embedding_model(ctx, session, tenant_id=principal.tenant_id,
                                                   requested=embedding_model)
    embedder = workspace_models.embedder(ctx, name)  # a provider's endpoint answers here, or the re-index is refused
    previous = kb.embedding_model
    knowledgebases.fit_index(ctx, session, kb=kb, dim=embedder.dim)
    kb.embedding_model, kb.embedding_dim = name, embedder.dim
    session.flush()
    docs = catalog.reindex(ctx, session, principal=principal, kb_ids=[kb.id])
    audit.record_by(session, principal, "kb.reindexed", target=f"kb:{kb.id}",
                    detail=f"{kb.name}: {previous} -> {name}, {len(docs)} documents")
    count = knowledgebases.document_counts(session, [kb], principal=principal).get(kb.id, 0)
    return Reindexed(
        dataset=kb_view(kb, count, fusion=fusion), previous_embedding_model=previous, embedding_model=name,
        documents_queued=len(docs),
        message=f"{len(docs)} documents queued to be embedded with {name!r}; each answers from its current "
                "version until its new one is ready (GET .../documents shows their progress)",
    )
