"""A configured reranker takes part in retrieval (real wire protocol, test server on loopback)."""

from __future__ import annotations

from ragloom.config import Settings
from ragloom.context import Context
from ragloom.schemas.options import RetrievalOptions
from ragloom.service.accounts import identity
from ragloom.service.search.retrieval import search
from tests.fakes.openai_server import FakeOpenAIServer
from tests.test_retrieval import MIXED, _ingest


def test_http_reranker_rescores_the_window(tmp_path) -> None:
    with FakeOpenAIServer() as server:
        settings = Settings(home=tmp_path / "home", rerank_provider="http", rerank_base_url=server.base_url,
                            rerank_model="fake-rerank", rerank_window=4, _env_file=None)
        ctx = Context(settings)
        ctx.init_storage()
        try:
            with ctx.db.session() as s:
                principal = identity.bootstrap(s).principal
            _ingest(ctx, principal, "mixed", MIXED)
            res = search(ctx, principal=principal, kb_ids=["mixed"], question="reset the router button",
                         options=RetrievalOptions(explain=True, similarity_threshold=0.0, page_size=6))
            assert res.chunks[0].record.document_name == "router.md"
            reranked = [c for c in res.chunks if c.rerank_score is not None]
            assert 0 < len(reranked) <= 4
            assert all(c.rerank_score is not None for c in res.chunks[: len(reranked)])  # reranked stay on top
            assert any(r.path.endswith("/rerank") for r in server.requests)
            assert res.explain_query["reranker"]
            plain = search(ctx, principal=principal, kb_ids=["mixed"], question="reset the router button",
                           rerank=False)
            assert all(c.rerank_score is None for c in plain.chunks)
            # a request may skip the reranker too (the retrieval bench compares with and without), and
            # the API's results carry each chunk's rerank score
            calls = len(server.requests)
            asked = search(ctx, principal=principal, kb_ids=["mixed"], question="reset the router button",
                           options=RetrievalOptions(rerank=False, similarity_threshold=0.0))
            assert all(c.rerank_score is None for c in asked.chunks) and len(server.requests) == calls
            from ragloom.service.search.views import chunk_view

            shown = [chunk_view(c) for c in res.chunks]
            assert shown[0].rerank_score == round(res.chunks[0].rerank_score, 6)
        finally:
            ctx.close()
