"""RAGFlow's own Python client, the published ``ragflow-sdk`` 0.27.3, driven against a live ragloom server at
``http://127.0.0.1:<port>/ragflow`` with a ragloom API key, changing nothing else: the datasets, documents,
chunks and retrieval workflow of issue 31 part 1, and its error cases (unknown ids, another workspace's
ids, bad parameters, a bad key, a route ragloom does not serve), and the README's example.

The SDK needs Python 3.13 (``Requires-Python >=3.13,<3.14``): these tests run in ``make test-newest`` and
skip, saying so, on older Pythons."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ragflow_sdk = pytest.importorskip(
    "ragflow_sdk", reason="ragflow-sdk 0.27.3 needs Python >= 3.13 (pinned in the dev extra for 3.13): these "
    "tests run in `make test-newest`")

TEXT = (b"ragloom is a document QA platform. It answers questions from your documents with citations, and "
        b"serves RAGFlow's HTTP API so that RAGFlow's clients work against it.")


@dataclass
class Server:
    url: str
    key: str
    other_key: str
    other_ds: str


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    import httpx

    from ragloom.config import Settings
    from ragloom.service.accounts import identity
    from tests.live import live_server

    home: Path = tmp_path_factory.mktemp("ragflow-sdk") / "home"
    settings = Settings(home=home, workers=0, worker_poll_seconds=0.05, _env_file=None)
    with live_server(settings, workers=1) as live:
        with live.ctx.db.session() as s:
            boot = identity.bootstrap(s)
            assert boot.new_key is not None
            tenant, user = identity.create_tenant(s, name="other", owner_email="owner@other.test")
            other_key = identity.create_api_key(s, tenant_id=tenant.id, user_id=user.id).key
        r = httpx.post(f"{live.url}/ragflow/api/v1/datasets", json={"name": "theirs"},
                       headers={"Authorization": f"Bearer {other_key}"})
        yield Server(live.url, boot.new_key.key, other_key, r.json()["data"]["id"])


def _rag(server: Server, key: str | None = None) -> Any:
    return ragflow_sdk.RAGFlow(api_key=key or server.key, base_url=f"{server.url}/ragflow")


def test_the_sdk_workflow(server: Server) -> None:
    rag = _rag(server)
    ds = rag.create_dataset(name="e2e-ds", chunk_method="naive")
    assert len(ds.id) == 32 and ds.name == "e2e-ds" and ds.chunk_method == "naive"
    assert rag.list_datasets(name="e2e-ds")[0].id == ds.id
    assert rag.get_dataset(name="e2e-ds").id == ds.id
    assert ds.id in [d.id for d in rag.list_datasets(page=1, page_size=10, orderby="update_time", desc=False)]
    ds.update({"description": "updated"})
    assert ds.description == "updated" and rag.list_datasets(id=ds.id)[0].description == "updated"

    docs = ds.upload_documents([{"display_name": "a.txt", "blob": TEXT}])
    doc = docs[0]
    assert doc.dataset_id == ds.id and doc.name == "a.txt" and doc.run == "UNSTART"  # parsed when asked
    doc.update({"name": "b.txt", "meta_fields": {"author": "alice"}})
    assert doc.name == "b.txt" and doc.meta_fields.author == "alice"  # the SDK makes dicts attribute objects
    assert [d.id for d in ds.list_documents(keywords="b", page=1, page_size=10)] == [doc.id]
    assert doc.download() == TEXT

    finished = ds.parse_documents([doc.id])  # POST .../chunks, then polls list_documents(id=...) until done
    assert finished[0][0] == doc.id and finished[0][1] == "DONE" and finished[0][2] >= 1
    chunks = doc.list_chunks(page=1, page_size=30)
    assert chunks and chunks[0].document_id == doc.id and chunks[0].dataset_id == ds.id
    ck = doc.add_chunk(content="ragloom supports RAGFlow clients.", important_keywords=["ragloom"],
                       questions=["What does ragloom support?"])
    assert ck.id and ck.document_id == doc.id and ck.dataset_id == ds.id
    ck.update({"content": "ragloom supports RAGFlow SDK clients.", "available": False})
    listed = {c.id: c for c in doc.list_chunks()}
    assert listed[ck.id].available is False and listed[ck.id].content == "ragloom supports RAGFlow SDK clients."
    assert listed[ck.id].important_keywords == ["ragloom"] and listed[ck.id].questions == ["What does ragloom support?"]
    hits = rag.retrieve(dataset_ids=[ds.id], question="Which clients does ragloom support?", page_size=5,
                        similarity_threshold=0.0)
    assert ck.id not in [h.id for h in hits]  # a disabled chunk is never retrieved
    ck.update({"available": True})

    hits = rag.retrieve(dataset_ids=[ds.id], question="What is ragloom?", page_size=5, similarity_threshold=0.0)
    assert hits and hits[0].document_id == doc.id and hits[0].document_name == "b.txt"
    assert hits[0].similarity >= hits[-1].similarity and hits[0].vector_similarity > 0
    assert ck.id in [h.id for h in rag.retrieve(dataset_ids=[ds.id], document_ids=[doc.id],
                                                question="Which clients does ragloom support?",
                                                similarity_threshold=0.0)]

    doc.delete_chunks(ids=[ck.id])
    assert ck.id not in [c.id for c in doc.list_chunks()]
    ds.delete_documents(ids=[doc.id])
    assert ds.list_documents() == []
    rag.delete_datasets(ids=[ds.id])
    assert ds.id not in [d.id for d in rag.list_datasets()]


def test_chat_assistant_session_and_ask(server: Server) -> None:
    rag = _rag(server)
    ds = rag.create_dataset(name="chat-ds")
    doc = ds.upload_documents([{"display_name": "about.txt", "blob": TEXT}])[0]
    ds.parse_documents([doc.id])
    chat = rag.create_chat("e2e-chat", dataset_ids=[ds.id])
    assert chat.id and chat.dataset_ids == [ds.id]
    chat.update({"prompt_config": {"empty_response": "Nothing found."}, "llm_setting": {"temperature": 0.2}})
    again = rag.list_chats(id=chat.id)[0]
    assert again.llm_setting.temperature == 0.2 and again.prompt_config.empty_response == "Nothing found."
    sess = chat.create_session("s1")
    assert sess.id and sess.name == "s1"
    msg = next(sess.ask("What is ragloom?", stream=False))
    assert msg.content and msg.reference and msg.reference[0]["document_id"] == doc.id
    assert all(int(n) < len(msg.reference) for n in re.findall(r"\[ID:(\d+)\]", msg.content))  # index chunks
    parts = list(sess.ask("Which clients does it work with?", stream=True))
    assert "".join(p.content for p in parts)
    assert [p.reference for p in parts if p.reference][-1][0]["document_id"] == doc.id
    listed = chat.list_sessions()
    assert [x.id for x in listed] == [sess.id]
    assert [m["role"] for m in listed[0].messages][-4:] == ["user", "assistant", "user", "assistant"]
    sess.update({"name": "renamed"})
    assert chat.list_sessions(id=sess.id)[0].name == "renamed"
    chat.delete_sessions(ids=[sess.id])
    assert chat.list_sessions() == []
    with pytest.raises(Exception, match="no authorization"):
        rag.get_chat("0" * 32)
    rag.delete_chats(ids=[chat.id])
    assert chat.id not in [c.id for c in rag.list_chats()]
    rag.delete_datasets(ids=[ds.id])


def test_bulk_deletes(server: Server) -> None:
    rag = _rag(server)
    made = [rag.create_dataset(name=f"bulk-{i}") for i in range(3)]
    ds = made[0]
    docs = ds.upload_documents([{"display_name": f"{n}.txt", "blob": TEXT} for n in ("one", "two")])
    ds.delete_documents(delete_all=True)
    assert ds.list_documents() == [] and len(docs) == 2
    rag.delete_datasets()  # neither ids nor delete_all: nothing, as RAGFlow
    rag.delete_datasets(ids=[d.id for d in made])
    left = {d.id for d in rag.list_datasets(page_size=100)}
    assert not left & {d.id for d in made}


def test_errors_get_ragflows_codes(server: Server) -> None:
    rag = _rag(server)
    with pytest.raises(Exception, match="lacks permission"):
        rag.list_datasets(id="0" * 32)
    with pytest.raises(Exception, match="lacks permission"):  # another workspace's dataset: not found
        rag.list_datasets(id=server.other_ds)
    with pytest.raises(Exception, match="lacks permission"):
        rag.delete_datasets(ids=[server.other_ds])
    with pytest.raises(Exception, match="don't own the dataset"):
        rag.retrieve(dataset_ids=[server.other_ds], question="anything")
    assert isinstance(rag.list_datasets(page_size=1000), list)  # RAGFlow sets no limit (its MCP server asks 1,000)
    with pytest.raises(Exception, match="page_size"):
        rag.list_datasets(page_size=10_001)
    with pytest.raises(Exception, match="at least 1 character"):
        rag.create_dataset(name="")
    ds = rag.create_dataset(name="errors")
    with pytest.raises(Exception, match="either provide doc ids"):
        ds.delete_documents()
    with pytest.raises(Exception, match="don't own the document"):
        ds.list_documents(id="0" * 32)
    with pytest.raises(Exception, match="at least one dataset"):
        rag.create_chat("assistant", dataset_ids=[])
    with pytest.raises(Exception, match="not supported by ragloom"):
        rag.list_agents()
    with pytest.raises(Exception, match="Unauthorized"):
        _rag(server, "ragloom-not-a-key").list_datasets()
    theirs = _rag(server, server.other_key).list_datasets()
    assert [d.id for d in theirs] == [server.other_ds]  # each key sees its own workspace
    rag.delete_datasets(ids=[ds.id])


def test_the_readme_example_runs_as_shown(server: Server, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The README's RAGFlow example, run as it is written but for the server's address."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("### RAGFlow clients", 1)[1].split("\n### ", 1)[0]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found, "the README's RAGFlow section has no Python example"
    code = found.group(1)
    assert 'base_url="http://127.0.0.1:9380/ragflow"' in code
    monkeypatch.setenv("RAGLOOM_API_KEY", server.key)
    exec(compile(code.replace("http://127.0.0.1:9380", server.url), "README.md", "exec"), {})  # noqa: S102
    printed = capsys.readouterr().out.splitlines()
    assert printed and printed[0].endswith("pump.txt: Service the pump every 500 hours."), printed
    assert 0 < float(printed[0].split()[0]) <= 1
