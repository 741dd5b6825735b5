"""Tag sets and tag rank features (REFERENCE §5.5, §5.3) through the service layer, on real engines."""

from __future__ import annotations

import csv
import io

import openpyxl
import pytest

from ragloom.context import Principal
from ragloom.dataflow import ChunkRecord
from ragloom.docstore.base import Hit
from ragloom.errors import InvalidRequestError, NotFoundError
from ragloom.knowledge.tags import TagPrior, score_tags
from ragloom.retrieval.features import TAG_WEIGHT, RankFeatures, tag_cosine
from ragloom.schemas.datasets import KBCreate, KBUpdate
from ragloom.schemas.options import RetrievalOptions
from ragloom.service import knowledgebases
from ragloom.service.accounts import identity
from ragloom.service.documents import catalog
from ragloom.service.documents.chunks import list_chunks
from ragloom.service.search.retrieval import search
from ragloom.service.search.tags import kb_tags
from ragloom.worker import run_until

TAG_ROWS = [
    ("Reset the wireless router and check the network cable", "network, hardware"),
    ("Configure the firewall rules of the office network", "network,security"),
    ("Bake sourdough bread with a mature starter", "cooking"),
    ("Store green tea in a cool dark place", "cooking,tea"),
    ("Replace the toner cartridge of the laser printer", "hardware，printing"),
    ("An orphan row that nobody tagged", ""),
]
NOTE = "Restart the router when the network connection drops."
QUESTION = "my network keeps dropping, what should I do with the router?"


def tag_csv(rows=TAG_ROWS) -> bytes:
    buf = io.StringIO()
    csv.writer(buf).writerows(rows)
    return buf.getvalue().encode()


def tag_xlsx(rows=TAG_ROWS) -> bytes:
    book = openpyxl.Workbook()
    for row in rows:
        book.active.append(list(row))
    buf = io.BytesIO()
    book.save(buf)
    return buf.getvalue()


def make_kb(ctx, principal, name: str, **fields) -> str:
    with ctx.db.session() as s:
        return knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(name=name, **fields)).id


def upload(ctx, principal, kb: str, files: dict[str, bytes]) -> list[str]:
    with ctx.db.session() as s:
        ups = [catalog.Upload(filename=n, data=d) for n, d in files.items()]
        ids = [d.id for d in catalog.add_documents(ctx, s, principal=principal, kb_id=kb, uploads=ups)]
    drain(ctx, principal, kb, ids)
    return ids


def drain(ctx, principal, kb: str, ids: list[str]) -> None:
    def done() -> bool:
        with ctx.db.session() as s:
            docs, _ = catalog.list_documents(s, principal=principal, kb_id=kb)
            return all(d.status in ("done", "failed") for d in docs if d.id in ids)

    run_until(ctx, done, poll=0.01)


def chunks_of(ctx, principal, kb: str, doc_id: str):
    with ctx.db.session() as s:
        return list_chunks(ctx, s, principal=principal, kb_id=kb, doc_id=doc_id).chunks


def status(ctx, principal, kb: str, doc_id: str):
    with ctx.db.session() as s:
        return catalog.get(s, principal=principal, kb_id=kb, doc_id=doc_id)


@pytest.fixture
def tag_set(ctx, principal) -> str:
    kb = make_kb(ctx, principal, "it-tags", chunk_method="tag")
    upload(ctx, principal, kb, {"tags.csv": tag_csv()})
    return kb


# ---------------------------------------------------------------- pure parts


def test_score_follows_the_reference_formula_without_rounding_to_zero() -> None:
    prior = TagPrior(counts={"network": 2, "hardware": 2, "security": 1, "cooking": 2})
    got = score_tags({"network": 2, "hardware": 1, "security": 1}, prior, topn=2)
    total, cnt = 7, 4
    expected = {t: 0.1 * (c + 1) / (cnt + 1000) / ((prior.counts[t] + 1) / (total + 1000))
                for t, c in {"network": 2, "security": 1}.items()}
    assert list(got) == ["network", "security"]  # hardware (same hits as security, more common) is cut by topn
    assert got == pytest.approx(expected, rel=1e-3)
    # the reference rounds these to integers: with a small tag set every one would be 0
    assert all(round(v) == 0 for v in got.values())


def test_tag_cosine_and_rank_feature() -> None:
    assert tag_cosine({"a": 1.0}, {"a": 2.0}) == pytest.approx(1.0)
    assert tag_cosine({"a": 1.0, "b": 1.0}, {"a": 1.0}) == pytest.approx(2 ** -0.5)
    assert tag_cosine({"a": 1.0}, {"b": 1.0}) == 0.0 and tag_cosine({}, {"a": 1.0}) == 0.0
    rec = ChunkRecord(id="1", kb_id="k", doc_id="d", version_id="v", content="x", vector=None, tags={"a": 0.1})
    assert RankFeatures({"k": 20}, {"a": 3.0})(rec) == pytest.approx(0.2 + TAG_WEIGHT)
    assert RankFeatures({"k": 20}, None)(rec) == pytest.approx(0.2)


def test_score_stage_ranks_a_tagged_chunk_above_an_otherwise_equal_one() -> None:
    import numpy as np

    from ragloom.nlp import QueryAnalysis
    from ragloom.retrieval.retriever import Query, score
    from ragloom.retrieval.types import RetrievalParams

    vec = np.ones(4, dtype=np.float32) / 2
    plain = ChunkRecord(id="plain", kb_id="k", doc_id="d", version_id="v", content="x", vector=vec)
    tagged = ChunkRecord(id="tagged", kb_id="k", doc_id="d", version_id="v", content="x", vector=vec,
                         tags={"network": 0.1})
    hits = [Hit(plain, 1.0, 0.5), Hit(tagged, 1.0, 0.5)]
    query = Query(analysis=QueryAnalysis(fulltext=None, keywords=[], is_chinese=False, normalized="",  # type: ignore[arg-type]
                                         min_match=0.3, gate_terms=0), vector=vec)
    untagged = score(hits, query, RetrievalParams())
    assert untagged[0].similarity == untagged[1].similarity
    ranked = sorted(score(hits, query, RetrievalParams(), None, {"network": 0.1}), key=lambda c: -c.similarity)
    assert [c.record.id for c in ranked] == ["tagged", "plain"]
    assert ranked[0].similarity - ranked[1].similarity == pytest.approx(TAG_WEIGHT)
    assert ranked[0].rank_feature == pytest.approx(TAG_WEIGHT)


# ---------------------------------------------------------------- end to end


@pytest.mark.parametrize(("name", "data"), [("tags.csv", tag_csv()), ("tags.xlsx", tag_xlsx())])
def test_tag_set_rows_become_chunks_with_their_tags(ctx, principal, name, data) -> None:
    kb = make_kb(ctx, principal, "tags", chunk_method="tag")
    (doc,) = upload(ctx, principal, kb, {name: data})
    assert status(ctx, principal, kb, doc).status == "done"
    rows = chunks_of(ctx, principal, kb, doc)
    assert [r.content for r in rows] == [c for c, t in TAG_ROWS if t]  # the untagged row is skipped
    assert rows[0].tag_keywords == ["network", "hardware"] and rows[4].tag_keywords == ["hardware", "printing"]
    with ctx.db.session() as s:
        listed = kb_tags(ctx, s, principal=principal, kb_id_or_name=kb)
    assert listed.is_tag_set and listed.model_dump()["tags"][:3] == [
        {"tag": "cooking", "count": 2}, {"tag": "hardware", "count": 2}, {"tag": "network", "count": 2}]


def test_a_tag_file_without_usable_rows_fails_with_a_reason(ctx, principal) -> None:
    kb = make_kb(ctx, principal, "tags", chunk_method="tag")
    (doc,) = upload(ctx, principal, kb, {"tags.csv": b"only content here\nand here too\n"})
    got = status(ctx, principal, kb, doc)
    assert got.status == "failed" and "no usable row" in got.message and "2 rows" in got.message


def test_chunks_get_tags_and_a_matching_question_lifts_them(ctx, principal, tag_set) -> None:
    # the same note in two knowledge bases: only "notes" uses the tag set; "others" ranks higher by pagerank
    notes = make_kb(ctx, principal, "notes", tag_kb_ids=["it-tags"], topn_tags=2)
    others = make_kb(ctx, principal, "others", pagerank=2)
    (doc,) = upload(ctx, principal, notes, {"note.md": NOTE.encode()})
    upload(ctx, principal, others, {"note.md": NOTE.encode()})
    (chunk,) = chunks_of(ctx, principal, notes, doc)
    assert set(chunk.tags) == {"network", "security"}  # the two rows about networks; topn_tags=2

    res = search(ctx, principal=principal, kb_ids=[notes, others], question=QUESTION,
                 options=RetrievalOptions(explain=True))
    first, second = res.chunks[:2]
    assert first.record.kb_id == notes and second.record.kb_id == others
    assert first.vector_similarity == pytest.approx(second.vector_similarity, abs=1e-6)
    assert 0.05 < first.rank_feature <= TAG_WEIGHT and second.rank_feature == pytest.approx(0.02)  # pagerank 2
    assert first.similarity - second.similarity == pytest.approx(first.rank_feature - 0.02, abs=1e-6)
    assert "network" in res.explain_query["query_tags"]
    row = next(r for r in res.explain if r.chunk_id == first.record.id)
    assert row.rank_feature == pytest.approx(first.rank_feature)

    # without the tag set the question has no tags: the pagerank alone decides, the order flips
    with ctx.db.session() as s:
        knowledgebases.update(s, principal=principal, kb_id_or_name=notes,
                              spec=KBUpdate(tag_kb_ids=[]))
    res = search(ctx, principal=principal, kb_ids=[notes, others], question=QUESTION)
    assert [c.record.kb_id for c in res.chunks[:2]] == [others, notes]
    with ctx.db.session() as s:
        assert kb_tags(ctx, s, principal=principal, kb_id_or_name=notes).tags[0].count == 1


def test_reindex_keeps_tags(ctx, principal, tag_set) -> None:
    notes = make_kb(ctx, principal, "notes", tag_kb_ids=[tag_set])
    upload(ctx, principal, notes, {"note.md": NOTE.encode()})
    with ctx.db.session() as s:
        docs = catalog.reindex(ctx, s, principal=principal, drop=True)
    for kb in (tag_set, notes):
        drain(ctx, principal, kb, [d.id for d in docs if d.kb_id == kb])
    (doc_id,) = [d.id for d in docs if d.kb_id == notes]
    (chunk,) = chunks_of(ctx, principal, notes, doc_id)
    assert "network" in chunk.tags


def test_a_changed_tag_set_is_seen_by_new_chunks(ctx, principal, tag_set) -> None:
    notes = make_kb(ctx, principal, "notes", tag_kb_ids=[tag_set])
    (first,) = upload(ctx, principal, notes, {"bread.md": b"Feed the starter before you bake bread."})
    assert "cooking" in chunks_of(ctx, principal, notes, first)[0].tags
    upload(ctx, principal, tag_set, {"more.csv": tag_csv([("Knead the bread dough for ten minutes", "baking")])})
    (second,) = upload(ctx, principal, notes, {"dough.md": b"Knead the dough well before you bake bread."})
    assert "baking" in chunks_of(ctx, principal, notes, second)[0].tags  # the cached prior was refreshed


def test_tag_kb_ids_are_validated(ctx, principal, tag_set) -> None:
    plain = make_kb(ctx, principal, "plain")
    with pytest.raises(InvalidRequestError, match="not a tag set"):
        make_kb(ctx, principal, "bad", tag_kb_ids=[plain])
    with pytest.raises(NotFoundError):
        make_kb(ctx, principal, "bad", tag_kb_ids=["no-such-kb"])
    with ctx.db.session() as s, pytest.raises(InvalidRequestError, match="own tag set"):
        knowledgebases.update(s, principal=principal, kb_id_or_name=tag_set,
                              spec=KBUpdate(tag_kb_ids=[tag_set]))
    with pytest.raises(ValueError, match="topn_tags"):
        KBCreate(name="x", topn_tags=0)
    # the reference keeps both settings in parser_config: accepted there too
    spec = KBCreate(name="compat", parser_config={"tag_kb_ids": [tag_set], "topn_tags": 5})
    assert spec.tag_kb_ids == [tag_set] and spec.topn_tags == 5 and spec.parser_config == {}


def test_another_tenants_tag_set_is_not_found(ctx, principal, tag_set) -> None:
    with ctx.db.session() as s:
        tenant, user = identity.create_tenant(s, name="other", owner_email="owner@other.test")
    other = Principal(tenant_id=tenant.id, user_id=user.id, role="owner")
    with pytest.raises(NotFoundError):
        make_kb(ctx, other, "theirs", tag_kb_ids=[tag_set])
    with ctx.db.session() as s, pytest.raises(NotFoundError):
        kb_tags(ctx, s, principal=other, kb_id_or_name=tag_set)


def test_untaggable_chunks_go_to_the_chat_model_when_one_is_configured(tmp_path) -> None:
    from ragloom.config import Settings
    from ragloom.context import Context
    from tests.fakes.openai_server import FakeOpenAIServer

    with FakeOpenAIServer(responder=lambda body: 'Sure: {"cooking": 7, "invented": 9}') as server:
        settings = Settings(home=tmp_path / "home", chat_base_url=server.base_url, chat_model="fake-chat",
                            worker_poll_seconds=0.05, _env_file=None)
        ctx = Context(settings)
        ctx.init_storage()
        try:
            with ctx.db.session() as s:
                principal = identity.bootstrap(s).principal
            tags = make_kb(ctx, principal, "tags", chunk_method="tag")
            upload(ctx, principal, tags, {"tags.csv": tag_csv()})
            notes = make_kb(ctx, principal, "notes", tag_kb_ids=[tags])
            (doc,) = upload(ctx, principal, notes, {"odd.md": b"Quantum chromodynamics lecture, week seven."})
            (chunk,) = chunks_of(ctx, principal, notes, doc)
        finally:
            ctx.close()
        assert chunk.tags == {"cooking": 7.0}  # a tag outside the tag sets is dropped
        prompt = server.requests[-1].body["messages"][0]["content"]
        assert prompt.count("\nTags: ") == 2 and "printing" in prompt and "Quantum" in prompt


def test_without_a_chat_model_untaggable_chunks_stay_untagged(ctx, principal, tag_set) -> None:
    notes = make_kb(ctx, principal, "notes", tag_kb_ids=[tag_set])
    (doc,) = upload(ctx, principal, notes, {"odd.md": b"Quantum chromodynamics lecture, week seven."})
    assert chunks_of(ctx, principal, notes, doc)[0].tags == {}
