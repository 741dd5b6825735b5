"""The Python SDK (``ragloom.sdk``): every API operation has a method, and the methods work against
a real server on loopback (uvicorn in a thread, a worker thread, the OpenAI-compatible test double as
chat and embedding model) — with an API key and with a signed-in web session."""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from ragloom.api.app import create_app
from ragloom.config import Settings
from ragloom.errors import ConflictError, LimitExceededError, ModelError, StoreError
from ragloom.schemas.answers import AnswerRequest
from ragloom.schemas.assistants import AssistantCreate, AssistantUpdate
from ragloom.schemas.datasets import KBCreate, KBUpdate
from ragloom.schemas.retrieval import RetrievalRequest
from ragloom.sdk import (
    OPERATIONS,
    AnswerFinal,
    AssistantChanges,
    AssistantFields,
    AuthenticationError,
    ChatFinal,
    DatasetChanges,
    DatasetFields,
    Delta,
    EvidenceFields,
    InvalidRequestError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    Ragloom,
    RagloomError,
    RateLimitedError,
    Route,
    SearchFields,
)
from ragloom.service.accounts import identity
from tests.fakes.openai_server import FakeOpenAIServer
from tests.live import live_server

README = Path(__file__).resolve().parents[1] / "README.md"
README_URL = "http://127.0.0.1:9380"

# Routes for other ecosystems' own clients (OpenAI's SDK, Dify): not methods of ragloom's SDK.
NOT_IN_SDK = {
    ("GET", "/api/v1/openai/v1/models"),
    ("POST", "/api/v1/openai/v1/chat/completions"),
    ("POST", "/api/v1/dify/retrieval"),
}

FACT = "The Orion pump must be serviced every 450 operating hours."
MANUAL = (f"# Orion pump\n\n## Maintenance\n\n{FACT} Use synthetic grease type K7.\n\n"
          "## Warranty\n\nThe warranty covers manufacturing defects for two years.\n")


# --- every operation has a method -----------------------------------------------------------------

def _api_operations(tmp_path: Path) -> set[tuple[str, str]]:
    spec = create_app(Settings(home=tmp_path / "home", _env_file=None)).openapi()
    return {(method.upper(), path) for path, ops in spec["paths"].items() for method in ops}


def test_every_api_operation_has_an_sdk_method(tmp_path: Path) -> None:
    """A route added to the API without a method in ragloom.sdk fails here, by name."""
    api = _api_operations(tmp_path)
    missing = sorted(api - set(OPERATIONS) - NOT_IN_SDK)
    assert not missing, ("API operations without an SDK method (add one, declared with @operation, to "
                         "src/ragloom/sdk/): " + ", ".join(f"{m} {p}" for m, p in missing))
    stale = sorted(set(OPERATIONS) - api)
    assert not stale, f"SDK methods calling routes the API does not have: {stale}"
    assert api >= NOT_IN_SDK, f"routes left out of the SDK that no longer exist: {sorted(NOT_IN_SDK - api)}"
    assert len(api) >= 68, len(api)


def test_every_registered_method_is_a_public_method_of_the_client() -> None:
    names = [n for methods in OPERATIONS.values() for n in methods]
    assert len(names) == len(set(names)), "a method is registered for two operations"
    for name in names:
        assert not name.startswith("_") and callable(getattr(Ragloom, name, None)), name
        method = getattr(Ragloom, name)
        assert Route not in typing.get_type_hints(method).values(), name  # the route is not an argument
        assert list(inspect.signature(method).parameters)[0] == "self", name


@pytest.mark.parametrize(("fields", "model", "positional"), [
    (DatasetFields, KBCreate, {"name"}), (DatasetChanges, KBUpdate, set()),
    (SearchFields, RetrievalRequest, {"question", "dataset_ids", "scope"}),  # scope: retrieve's own keyword
    (EvidenceFields, AnswerRequest, {"question", "dataset_ids", "top_n", "stream", "scope"}),
    (AssistantFields, AssistantCreate, {"name", "dataset_ids"}), (AssistantChanges, AssistantUpdate, set()),
], ids=lambda v: getattr(v, "__name__", ""))
def test_keyword_options_are_the_request_models_fields(fields: Any, model: type[BaseModel],
                                                       positional: set[str]) -> None:
    """The keyword arguments of create_dataset, update_dataset, retrieve, answer, create_assistant and
    update_assistant are exactly the fields of the API's request body (the others are positional)."""
    assert set(fields.__required_keys__ | fields.__optional_keys__) == set(model.model_fields) - positional


# --- errors ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("status", "payload", "headers", "cls"), [
    (404, {"error": "NotFoundError", "message": "knowledge base 'x' not found"}, {}, NotFoundError),
    (401, {"error": "AuthenticationError", "message": "invalid API key"}, {}, AuthenticationError),
    (403, {"error": "PermissionDeniedError", "message": "read-only"}, {}, PermissionDeniedError),
    (409, {"error": "ConflictError", "message": "exists"}, {}, ConflictError),
    (413, {"error": "PayloadTooLargeError", "message": "too large"}, {}, PayloadTooLargeError),
    (413, {"error": "LimitExceededError", "message": "too many pages"}, {}, LimitExceededError),
    (422, {"error": "InvalidRequestError", "message": "page: too small"}, {}, InvalidRequestError),
    (400, {"error": "HTTPError", "message": "bad"}, {}, InvalidRequestError),
    (429, {"error": "RateLimitedError", "message": "slow down"}, {"Retry-After": "7"}, RateLimitedError),
    (502, {"error": "ModelError", "message": "the chat model failed"}, {}, ModelError),
    (503, {"error": "StoreError", "message": "the index is down"}, {}, StoreError),
    (500, "Internal Server Error", {}, RagloomError),
], ids=lambda v: str(v) if isinstance(v, int) else "")
def test_an_error_response_raises_its_class_with_the_servers_message(
        status: int, payload: Any, headers: dict[str, str], cls: type[RagloomError]) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if isinstance(payload, str):
            return httpx.Response(status, text=payload, headers=headers)
        return httpx.Response(status, json=payload, headers=headers)

    with Ragloom("http://ragloom.test", "rl-key", transport=httpx.MockTransport(answer)) as rag, \
            pytest.raises(RagloomError) as caught:
        rag.get_dataset("x")
    assert type(caught.value) is cls and caught.value.status == status
    assert caught.value.message == (payload if isinstance(payload, str) else payload["message"])
    if cls is RateLimitedError:
        assert caught.value.retry_after == 7  # type: ignore[attr-defined]


def test_a_body_that_does_not_fit_the_request_model_is_refused_before_it_is_sent() -> None:
    sent: list[httpx.Request] = []
    with Ragloom("http://ragloom.test", "rl-key", transport=httpx.MockTransport(
            lambda r: sent.append(r) or httpx.Response(500))) as rag:
        with pytest.raises(InvalidRequestError, match="similarity_threshold"):
            rag.create_dataset("manuals", similarity_threshold=3.0)
        with pytest.raises(InvalidRequestError, match="question"):
            rag.retrieve("", "manuals")
    assert sent == []


def test_an_unreachable_server_raises_a_ragloom_error() -> None:
    with Ragloom("http://127.0.0.1:9", "rl-key", timeout=5) as rag, \
            pytest.raises(RagloomError, match="cannot reach the server"):
        rag.list_datasets()


# --- against a real server ------------------------------------------------------------------------

def _responder(body: dict[str, Any]) -> str:
    """The chat model: cites the evidence that holds the fact, else does not know."""
    prompt = "\n".join(m["content"] for m in body["messages"])
    for block in prompt.split("ID: ")[1:]:
        if "450 operating hours" in block:
            return f"The Orion pump must be serviced every 450 operating hours [ID:{block.split()[0]}]."
    return "I do not know."


@dataclass
class Server:
    url: str
    key: str  # the bootstrapped admin's
    model: FakeOpenAIServer
    kb: str  # a knowledge base holding MANUAL, processed


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("sdk") / "home"
    with FakeOpenAIServer(responder=_responder) as model:
        settings = Settings(home=home, workers=0, worker_poll_seconds=0.05, rate_limit_per_minute=0,
                            chat_base_url=model.base_url, chat_model="fake-chat", chat_api_key="sk-test",
                            embedding_model="openai", embedding_base_url=model.base_url,
                            embedding_model_name="fake-embed", _env_file=None,
                            outbound_allow=["127.0.0.1/32"])  # a workspace's provider is the fake too
        with live_server(settings, workers=1) as live:
            with live.ctx.db.session() as s:
                boot = identity.bootstrap(s)
            assert boot.new_key is not None
            with Ragloom(live.url, boot.new_key.key) as rag:
                kb = rag.create_dataset("manuals", description="pump manuals")
                rag.upload_documents(kb.id, [("orion.md", MANUAL.encode())])
                rag.wait_for_documents(kb.id, timeout=120)
            yield Server(live.url, boot.new_key.key, model, kb.id)


@pytest.fixture
def rag(server: Server) -> Iterator[Ragloom]:
    with Ragloom(server.url, server.key) as client:
        yield client


def test_datasets_documents_chunks_and_files(rag: Ragloom, server: Server, tmp_path: Path) -> None:
    kb = rag.create_dataset("notes", description="field notes", permission="team", chunk_method="naive")
    assert kb.name == "notes" and kb.permission == "team" and kb.document_count == 0
    note = tmp_path / "note.md"
    note.write_text("# Seal\n\nThe seal of the Orion pump was replaced in May.\n")
    uploaded = rag.upload_documents(kb.id, [note, ("second.txt", b"The filter was cleaned in June.")])
    assert [d.name for d in uploaded.documents] == ["note.md", "second.txt"]
    docs = rag.wait_for_documents(kb.id, timeout=120)
    assert sorted(d.status for d in docs) == ["done", "done"], docs
    doc = next(d for d in docs if d.name == "note.md")
    assert rag.get_document(kb.id, doc.id).chunk_count == doc.chunk_count > 0
    assert rag.list_documents(kb.id, page=1, page_size=1).total == 2
    assert [d.id for d in rag.iter_documents(kb.id, page_size=1)] == [d.id for d in rag.list_documents(kb.id).documents]
    assert len(list(rag.iter_documents(kb.id, page_size=1, status="done"))) == 2
    assert list(rag.iter_documents(kb.id, status="queued")) == []

    chunks = rag.list_chunks(kb.id, doc.id)
    assert chunks.total == len(chunks.chunks) > 0 and "replaced in May" in chunks.chunks[0].content
    assert [c.chunk_id for c in rag.iter_chunks(kb.id, doc.id)] == [c.chunk_id for c in chunks.chunks]
    file = rag.download_file(kb.id, doc.id)
    assert (file.name, file.content) == ("note.md", note.read_bytes())
    assert "replaced in May" in rag.preview(kb.id, doc.id, highlight=[1])
    assert rag.list_pages(kb.id, doc.id).pages == []
    metadata = rag.update_metadata(kb.id, doc.id, {"author": "Ada", "year": 2024}).metadata
    assert (metadata["author"], metadata["year"]) == ("Ada", 2024)
    assert "author" not in rag.update_metadata(kb.id, doc.id, {"author": None}).metadata

    renamed = rag.update_dataset(kb.id, name="field-notes", pagerank=3)
    assert (renamed.name, renamed.pagerank, rag.get_dataset("field-notes").id) == ("field-notes", 3, kb.id)
    assert "field-notes" in [d.name for d in rag.list_datasets().datasets]
    assert rag.dataset_tags(kb.id).total == 0
    assert rag.delete_documents(kb.id, [doc.id]).deleted == 1
    rag.delete_dataset(kb.id)
    with pytest.raises(NotFoundError):
        rag.get_dataset(kb.id)


def test_retrieval_and_answers(rag: Ragloom, server: Server) -> None:
    found = rag.retrieve("How often is the Orion pump serviced?", server.kb, page_size=3, explain=True)
    assert found.chunks and FACT in found.chunks[0].content and found.explain is not None
    answer = rag.answer("How often is the Orion pump serviced?", [server.kb], top_n=4)
    assert answer.model == "fake-chat" and "450 operating hours" in answer.answer and answer.references

    events = list(rag.answer_stream("How often is the Orion pump serviced?", server.kb))
    assert all(isinstance(e, Delta) for e in events[:-1]) and isinstance(events[-1], AnswerFinal)
    assert "450" in "".join(e.text for e in events if isinstance(e, Delta))
    assert events[-1].answer.references and "450 operating hours" in events[-1].answer.answer


def test_assistants_sessions_and_a_streamed_chat(rag: Ragloom, server: Server) -> None:
    bot = rag.create_assistant("pump helper", server.kb, top_n=4, prompt={"opening": "Ask me."},
                               retrieval={"mode": "hybrid"})
    assert bot.dataset_ids == [server.kb] and bot.prompt.opening == "Ask me." and bot.top_n == 4
    assert rag.get_assistant("pump helper").id == bot.id
    assert [a.name for a in rag.list_assistants().assistants] == ["pump helper"]
    assert rag.update_assistant(bot.id, description="pumps", llm={"temperature": 0.2}).llm.temperature == 0.2

    reply = rag.chat(bot.id, "How often is the Orion pump serviced?")
    assert "450 operating hours" in reply.answer and reply.references and reply.model == "fake-chat"
    events = list(rag.chat_stream(bot.id, "And how often must it be serviced?", session_id=reply.session_id))
    deltas = [e.text for e in events if isinstance(e, Delta)]
    final = events[-1]
    assert deltas and isinstance(final, ChatFinal) and len([e for e in events if isinstance(e, ChatFinal)]) == 1
    assert final.reply.session_id == reply.session_id and "450" in "".join(deltas)

    sessions = rag.list_sessions(bot.id, page=1, page_size=10)
    assert [s.id for s in sessions.sessions] == [reply.session_id] and sessions.sessions[0].message_count == 4
    detail = rag.get_session(bot.id, reply.session_id)
    assert [m.role for m in detail.messages] == ["user", "assistant", "user", "assistant"]
    assert rag.list_messages(bot.id, reply.session_id).total == 4
    rated = rag.set_feedback(bot.id, reply.session_id, reply.message_id, "up", "right")
    assert rated.feedback is not None and rated.feedback.rating == "up"
    assert rag.rename_session(bot.id, reply.session_id, "servicing").name == "servicing"
    assert set(rag.delete_message_pair(bot.id, reply.session_id, reply.message_id).deleted) == {
        reply.question_id, reply.message_id}
    other = rag.create_session(bot.id, "empty")
    assert other.name == "empty" and other.opening == "Ask me."
    rag.delete_session(bot.id, other.id)
    with pytest.raises(NotFoundError):
        list(rag.chat_stream(bot.id, "anything?", session_id=other.id))
    rag.delete_assistant(bot.id)


def test_keys_are_created_listed_and_revoked(rag: Ragloom, server: Server) -> None:
    new = rag.create_key(name="reader", scope="read", expires_in_days=30)
    assert new.key and new.scope == "read" and new.state == "active" and new.expires_at
    listed = {k.id: k for k in rag.list_keys().keys}
    assert listed[new.id].prefix == new.prefix and "key" not in listed[new.id].model_dump()
    with Ragloom(server.url, new.key) as reader:
        assert server.kb in [d.id for d in reader.list_datasets().datasets]
        assert reader.retrieve("pump", server.kb).chunks  # a POST that reads: allowed
        with pytest.raises(PermissionDeniedError, match="read-only") as denied:
            reader.create_dataset("not-allowed")
        assert denied.value.status == 403
        assert rag.revoke_key(new.id).state == "revoked"
        with pytest.raises(AuthenticationError) as refused:
            reader.list_datasets()
        assert refused.value.status == 401
    assert new.id in rag.audit_log(action="key.revoked", limit=1).events[0].target


def test_a_signed_in_session_sends_its_csrf_token(server: Server) -> None:
    with Ragloom.signup(server.url, "ann@example.org", "correct horse battery", name="Ann") as ann:
        me = ann.me()
        assert me.via == "session" and me.user.email == "ann@example.org" and ann.api_key is None
        acme = ann.create_workspace("Acme")  # a state-changing request: it needs the CSRF token
        assert ann.switch_workspace(acme.id).workspace is not None
        assert ann.create_dataset("ann-notes").permission == "me"
        token, ann.csrf_token = ann.csrf_token, None
        with pytest.raises(PermissionDeniedError, match="CSRF"):
            ann.create_workspace("Refused")
        ann.csrf_token = token
        ann.log_out()
        with pytest.raises(AuthenticationError):
            ann.me()
    with Ragloom.login(server.url, "ann@example.org", "correct horse battery") as again:
        again.change_password("correct horse battery", "a new staple horse")
        assert [w.name for w in again.list_workspaces().workspaces].count("Acme") == 1
    with pytest.raises(AuthenticationError):
        Ragloom.login(server.url, "ann@example.org", "correct horse battery")


def test_members_invitations_and_providers(rag: Ragloom, server: Server) -> None:
    invitation = rag.invite(email="bob@example.org", role="member", expires_in_hours=1)
    assert invitation.token and invitation.state == "pending"
    assert invitation.id in [i.id for i in rag.list_invitations().invitations]
    with Ragloom.signup(server.url, "bob@example.org", "Tr0ub4dor&3 of B", invitation=invitation.token) as bob:
        assert bob.me().workspace is not None and bob.me().workspace.role == "member"  # type: ignore[union-attr]
        bob_id = bob.me().user.id
    assert rag.change_role(bob_id, "admin").role == "admin"
    assert {m.email for m in rag.list_members().members} >= {"bob@example.org"}
    rag.remove_member(bob_id)
    assert "bob@example.org" not in {m.email for m in rag.list_members().members}
    spare = rag.invite()
    assert rag.revoke_invitation(spare.id).state == "revoked"

    shown = rag.set_provider("chat", base_url=server.model.base_url, model="fake-chat", api_key="sk-workspace")
    assert shown.has_api_key and shown.model == "fake-chat"
    assert "chat" in [p.kind for p in rag.list_providers().providers]
    assert rag.test_provider("chat").ok
    rag.delete_provider("chat")
    assert rag.list_providers().total == 0
    assert rag.signup_state().open is True
    assert rag.health().status in ("ok", "degraded")


def test_errors_carry_the_servers_message_and_status(rag: Ragloom, server: Server) -> None:
    raw = httpx.get(f"{server.url}/api/v1/datasets/no-such-kb", headers={"Authorization": f"Bearer {server.key}"})
    with pytest.raises(NotFoundError) as caught:
        rag.get_dataset("no-such-kb")
    assert caught.value.status == 404 and caught.value.message == raw.json()["message"]
    assert "no-such-kb" in caught.value.message
    with pytest.raises(ConflictError) as conflict:
        rag.create_dataset("manuals")
    assert conflict.value.status == 409
    with pytest.raises(InvalidRequestError) as invalid:
        rag.list_documents(server.kb, page=0)
    assert invalid.value.status == 422 and "page" in invalid.value.message
    with pytest.raises(NotFoundError):
        list(rag.answer_stream("anything?", "no-such-kb"))


# --- the README's example -------------------------------------------------------------------------

def test_the_readme_example_runs(server: Server, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The "Python SDK" section's example, run as shown against the server (its address substituted)."""
    section = README.read_text().split("### Python SDK", 1)[1].split("\n#", 1)[0]
    code = re.search(r"^```python\n(.*?)^```", section, re.M | re.S)
    assert code, "the README's Python SDK section has no python example"
    monkeypatch.setenv("RAGLOOM_API_KEY", server.key)
    exec(compile(code.group(1).replace(README_URL, server.url), "README.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "450 operating hours" in printed and "[ID:" in printed, printed
