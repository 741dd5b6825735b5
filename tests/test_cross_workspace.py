"""Another workspace's ids are 'not found' on every route of /openapi.json (issue 12).

Workspace A has one of every resource a route names (a knowledge base with a PDF and a Markdown
document, so versions, pages, chunks and tasks too; a tag set; an assistant with a session, a
question and its answer; an API key; a member; an invitation; a chat provider); workspace B has the
same of its own. The routes are read from ``/openapi.json`` at test time and called as B's owner,
with B's API key and with a web session of B's:

- every route with ids in its path, with A's ids (or A's names, where routes take names) in the
  path and in every id field of its body and query: 404, and nothing of A in the answer;
- every id field of a body or query (``dataset_ids``, ``session_id``, ``version_id``, ``workspace_id``,
  an OpenAI ``model``...) given A's id, with B's own ids everywhere else (its path too): 404 — a
  route that checks its path but trusts its body fails here;
- every route without an id (a listing, the caller's own account): nothing of A in the answer.

The ids and bodies are checked first: every reading route answers 2xx to each workspace with its
own ids. A route whose path parameter or id field names nothing in :data:`IDS`, or a route without
an id that :data:`NO_IDS` does not classify, fails the suite with what to add — a route added later
is walked, never skipped. The revoked-key (401) and read-only-key (403) walks over the same routes
are in tests/test_api_keys.py.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from ragloom.api.deps import CSRF_HEADER, SESSION_COOKIE
from ragloom.config import Settings
from ragloom.db.models import Task, User
from ragloom.service.accounts import identity, signin, workspaces
from ragloom.worker import run_one
from tests.fakes.openai_server import FakeOpenAIServer
from tests.ingest.docgen import make_pdf
from tests.live import app_client

API = "/api/v1"

# Paths whose first parameter is a bearer credential, not an id: a share link's token opens its assistant to
# whoever holds it, by design, whatever workspace they sign in to (and with no sign-in). The walk's premise (an
# id of another workspace is not found) does not hold for them; tests/test_shares.py walks their abuse cases:
# guessed tokens, another visitor's or the owner's sessions, documents outside the assistant or restricted.
CREDENTIAL_PREFIXES = (f"{API}/share/{{token}}",)

# Paths of /openapi.json outside /api/v1 that are not walked, and why. (The root /, the status page at
# /status and /status.json, /docs, /redoc and the MCP server are not in the schema: nothing to walk.)
NOT_API: dict[str, str] = {}

# Path parameters and id fields of bodies and queries -> the resource of a workspace they name
# (a key of Workspace.ids, filled by _populate). A new kind of id: create the resource in
# _populate and name it here.
IDS: dict[str, str] = {
    "dataset_id": "kb",
    "document_id": "pdf",
    "chat_id": "assistant",
    "session_id": "session",
    "message_id": "answer",
    "key_id": "key",
    "workspace_id": "workspace",
    "user_id": "member",  # a member who is not the owner
    "invitation_id": "invitation",
    "chunk_id": "chunk",  # a chunk of the PDF
    "build_id": "build",  # a RAPTOR build of the knowledge base
    "source_id": "source",  # a folder source of the knowledge base
    "sync_id": "sync",  # a sync of that source
    "group_id": "group",  # a group of the workspace's people
    "share_id": "share",  # a share link of the assistant
    # body and query fields
    "dataset_ids": "kb",
    "knowledge_id": "kb",  # Dify's
    "tag_kb_ids": "tag_set",
    "document_ids": "pdf",
    "ids": "pdf",  # DELETE .../documents
    "version_id": "pdf_version",
}

# Path parameters that name nothing of a workspace (the same for every workspace), and the value sent.
VALUES: dict[str, str] = {
    "page": "1",  # page 1 of the document (the PDF has one)
    "kind": "chat",  # /providers/{kind}: the caller's own workspace's provider of that kind
}

# Per route: parameters naming another resource than IDS says, and body fields that are ids the
# schema does not show as ids (a field is found as an id when it is named id, ids, *_id or *_ids):
# one without an id's name, or inside a free-form object ("a.b": field b of the body's object a).
ROUTE_IDS: dict[tuple[str, str], dict[str, str]] = {
    # the HTML view is of a flowing document: the Markdown one
    ("GET", f"{API}/datasets/{{dataset_id}}/documents/{{document_id}}/preview"):
        {"document_id": "markdown", "version_id": "markdown_version"},
    ("POST", f"{API}/openai/v1/chat/completions"): {"model": "assistant"},  # an assistant's id
    # a figure's picture: the figure chunk of the HTML page with a picture in it
    ("GET", f"{API}/datasets/{{dataset_id}}/documents/{{document_id}}/chunks/{{chunk_id}}/figure.png"):
        {"document_id": "chart", "chunk_id": "figure"},
    ("PATCH", f"{API}/chats/{{chat_id}}"): {"retrieval.document_ids": "pdf"},  # retrieval: any RetrievalOptions keys
}

# Field names that look like ids but name nothing of a workspace (none yet).
NOT_IDS: set[str] = set()

# Routes that take no id of a workspace, and what they may answer another workspace's caller:
LIST = "list"  # the caller's own things: 200, B's own things and none of A's ids or names
OWN = "own"  # acts on the caller's own account or workspace: any answer, none of A's ids or names
# (called when it reads; one that changes the caller's own things is not called: there is no id of
# another workspace to give it)
PUBLIC = "public"  # no sign-in at all: any answer, none of A's ids or names
NO_IDS: dict[tuple[str, str], str] = {
    ("GET", f"{API}/datasets"): LIST,
    ("GET", f"{API}/chats"): LIST,
    ("GET", f"{API}/keys"): LIST,
    ("POST", f"{API}/keys"): OWN,
    ("GET", f"{API}/audit"): LIST,
    ("GET", f"{API}/openai/v1/models"): LIST,
    ("GET", f"{API}/health"): PUBLIC,
    ("POST", f"{API}/auth/signup"): PUBLIC,
    ("POST", f"{API}/auth/login"): PUBLIC,
    ("POST", f"{API}/auth/logout"): OWN,
    ("GET", f"{API}/auth/me"): LIST,
    ("POST", f"{API}/auth/password"): OWN,
    ("GET", f"{API}/admin/signup"): OWN,
    ("PUT", f"{API}/admin/signup"): OWN,
    ("GET", f"{API}/workspaces"): LIST,
    ("POST", f"{API}/workspaces"): OWN,
    ("GET", f"{API}/members"): LIST,
    ("GET", f"{API}/groups"): LIST,
    ("POST", f"{API}/groups"): OWN,
    ("GET", f"{API}/invitations"): LIST,
    ("POST", f"{API}/invitations"): OWN,
    # takes an invitation's token, not an id: whoever holds a token may join its workspace, by design
    ("POST", f"{API}/invitations/accept"): OWN,
    ("GET", f"{API}/providers"): LIST,
    ("GET", f"{API}/chunk-methods"): OWN,  # the server's chunk methods: nobody's data, the same for all
    ("PUT", f"{API}/providers/{{kind}}"): OWN,
    ("DELETE", f"{API}/providers/{{kind}}"): OWN,
    ("POST", f"{API}/providers/{{kind}}/test"): OWN,
}

# Routes one way of signing in may not call at all: the other answers the same refusal whatever
# the ids, so the walks call them only the way that gets to the ids.
ONLY_VIA: dict[tuple[str, str], str] = {
    ("POST", f"{API}/auth/workspace"): "session",  # an API key acts in its own workspace: 403
    ("POST", f"{API}/dify/retrieval"): "key",  # Dify sends a key: no key is a 403 (error_code 1001)
}

# Request bodies where the smallest valid body of the schema is not a valid request (merged over it).
BODIES: dict[tuple[str, str], dict[str, Any]] = {
    # the last message must be the user's question
    ("POST", f"{API}/openai/v1/chat/completions"): {"messages": [{"role": "user", "content": "probe"}]},
    ("PATCH", f"{API}/members/{{user_id}}"): {"role": "member"},  # a plain string in the schema
    ("POST", f"{API}/datasets/{{dataset_id}}/builds"): {"kind": "raptor", "dry_run": True},  # a kind by name
}

# Leaks known and reported, not fixed here: (method, path, id field) -> why. The walk expects them
# still to answer something else than 404; once one is fixed, the walk fails until it is removed.
KNOWN_LEAKS: dict[tuple[str, str, str], str] = {}

ID_NAME = re.compile(r"^(id|ids|.+_id|.+_ids)$")
VIAS = ("key", "session")


# --- the two workspaces ---------------------------------------------------------------------------

@dataclass
class Workspace:
    mark: str  # in every name, address and text of the workspace: must never reach another one
    key: str = ""
    tenant_id: str = ""
    user_id: str = ""
    ids: dict[str, str] = field(default_factory=dict)  # resource -> id (IDS' values)
    names: dict[str, str] = field(default_factory=dict)  # resource -> name, for those routes take by name too
    secrets: set[str] = field(default_factory=set)  # every id (chunks, tasks... too) and token


@dataclass
class World:
    client: TestClient
    ctx: Any
    spec: dict[str, Any]
    a: Workspace
    b: Workspace

    def auth(self, ws: Workspace, via: str) -> dict[str, str]:
        """Headers of the workspace's owner: its API key, or a new web session in it."""
        if via == "key":
            return {"Authorization": f"Bearer {ws.key}"}
        with self.ctx.db.session() as s:
            new = signin.open_session(s, self.ctx.settings, s.get(User, ws.user_id), ws.tenant_id)
        return {"Cookie": f"{SESSION_COOKIE}={new.token}", CSRF_HEADER: new.csrf_token}


def _ok(res: Any) -> Any:
    assert res.status_code in (200, 201, 202), (res.request.method, res.request.url, res.status_code, res.text)
    return res.json()


def _chart_page(mark: str) -> bytes:
    """An HTML page holding a picture (a figure chunk) as a data: URI."""
    import base64
    import io

    from PIL import Image

    png = io.BytesIO()
    Image.new("RGB", (96, 64), (30, 90, 200)).save(png, format="PNG")
    inline = base64.b64encode(png.getvalue()).decode()
    return (f'<html><body><h1>The {mark} chart</h1><figure><img src="data:image/png;base64,{inline}" '
            f'alt="{mark} sales chart"><figcaption>Figure 1: {mark} sales</figcaption></figure></body></html>'
            ).encode()


def _populate(client: Any, ctx: Any, ws: Workspace, tmp: Path, llm_url: str, owner_id: str | None = None) -> None:
    """Workspace ``ws`` with one of every resource, owned by a new person, or by ``owner_id`` (another
    workspace of the same person); ``client`` is a TestClient or an httpx client of a live server."""
    m = ws.mark
    with ctx.db.session() as s:
        if owner_id is None:
            tenant, owner = identity.create_tenant(s, name=f"{m} works", owner_email=f"owner@{m}.test")
        else:
            tenant, owner = workspaces.create(s, user_id=owner_id, name=f"{m} works"), s.get(User, owner_id)
        ws.key = identity.create_api_key(s, tenant_id=tenant.id, user_id=owner.id, name=f"{m}-owner").key
        member = identity.add_member(s, tenant_id=tenant.id, email=f"member@{m}.test")
        ws.tenant_id, ws.user_id, member_id = tenant.id, owner.id, member.id
    h = {"Authorization": f"Bearer {ws.key}"}
    kb = _ok(client.post(f"{API}/datasets", headers=h, json={"name": f"{m}-manuals"}))
    tag_set = _ok(client.post(f"{API}/datasets", headers=h, json={"name": f"{m}-tags", "chunk_method": "tag"}))
    pdf = tmp / f"{m}-pump.pdf"
    make_pdf(pdf, [[f"# The {m} pump", f"The {m} pump needs grease every 450 operating hours."]])
    files = [("file", (pdf.name, pdf.read_bytes(), "application/pdf")),
             ("file", (f"{m}-notes.md", f"# {m} notes\n\nThe {m} valve is blue.\n".encode(), "text/markdown")),
             ("file", (f"{m}-chart.html", _chart_page(m), "text/html"))]
    up = _ok(client.post(f"{API}/datasets/{kb['id']}/documents", headers=h, files=files))["documents"]
    folder = ctx.settings.source_roots[0] / m
    folder.mkdir()
    (folder / f"{m}-guide.md").write_text(f"# The {m} guide\n\nThe {m} filter is changed yearly.\n")
    source = _ok(client.post(f"{API}/datasets/{kb['id']}/sources", headers=h,
                             json={"name": f"{m}-handbook", "type": "folder", "settings": {"path": str(folder)}}))
    sync = _ok(client.post(f"{API}/datasets/{kb['id']}/sources/{source['id']}/sync", headers=h))
    while run_one(ctx, "test"):  # the uploads, the sync, and the document it made
        pass
    docs = {d["name"]: d for d in _ok(client.get(f"{API}/datasets/{kb['id']}/documents", headers=h))["documents"]}
    assert len(up) == 3 and len(docs) == 4 and all(d["status"] == "done" for d in docs.values()), docs
    pdf_doc, md_doc, synced = docs[pdf.name], docs[f"{m}-notes.md"], docs[f"{m}-guide.md"]
    chart = docs[f"{m}-chart.html"]
    figure = next(c["chunk_id"] for c in _ok(client.get(
        f"{API}/datasets/{kb['id']}/documents/{chart['id']}/chunks", headers=h))["chunks"] if c["kind"] == "figure")
    assistant = _ok(client.post(f"{API}/chats", headers=h, json={"name": f"{m}-assistant", "dataset_ids": [kb["id"]]}))
    reply = _ok(client.post(f"{API}/chats/{assistant['id']}/completions", headers=h,
                            json={"question": f"How often does the {m} pump need grease?"}))
    key = _ok(client.post(f"{API}/keys", headers=h, json={"name": f"{m}-key"}))
    share = _ok(client.post(f"{API}/chats/{assistant['id']}/shares", headers=h, json={"name": f"{m}-link"}))
    _ok(client.put(f"{API}/providers/chat", headers=h,  # the same chat model, by another name
                   json={"base_url": llm_url, "model": f"{m}-chat", "api_key": f"sk-{m}-secret"}))
    invitation = _ok(client.post(f"{API}/invitations", headers=h, json={"email": f"invitee@{m}.test"}))
    group = _ok(client.post(f"{API}/groups", headers=h, json={"name": f"{m}-team", "members": [f"member@{m}.test"]}))
    build = _ok(client.post(f"{API}/datasets/{kb['id']}/builds", headers=h, json={"kind": "raptor"}))["builds"][0]
    _ok(client.post(f"{API}/datasets/{kb['id']}/builds", headers=h, json={"kind": "graph"}))  # offline method
    while run_one(ctx, "test"):  # the RAPTOR summaries, by the chat model, and the knowledge graph
        pass
    chunks = [c["chunk_id"] for d in (pdf_doc, md_doc) for c in _ok(client.get(
        f"{API}/datasets/{kb['id']}/documents/{d['id']}/chunks", headers=h))["chunks"]]
    assert chunks
    ws.ids = {
        "kb": kb["id"], "tag_set": tag_set["id"], "pdf": pdf_doc["id"], "markdown": md_doc["id"],
        "pdf_version": pdf_doc["active_version_id"], "markdown_version": md_doc["active_version_id"],
        "assistant": assistant["id"], "session": reply["session_id"], "question": reply["question_id"],
        "answer": reply["message_id"], "key": key["id"], "workspace": ws.tenant_id, "member": member_id,
        "invitation": invitation["id"], "chunk": chunks[0], "build": build["id"], "source": source["id"],
        "sync": sync["id"], "synced": synced["id"], "group": group["id"], "share": share["id"],
        "chart": chart["id"], "figure": figure,
    }
    ws.names = {"kb": kb["name"], "tag_set": tag_set["name"], "pdf": pdf_doc["name"], "markdown": md_doc["name"],
                "assistant": assistant["name"], "source": source["name"], "group": group["name"]}
    with ctx.db.session() as s:
        tasks = list(s.scalars(select(Task.id).where(Task.tenant_id == ws.tenant_id)))
    ws.secrets = (set(ws.ids.values()) | set(chunks) | set(tasks)
                  | {ws.user_id, ws.key, key["key"], invitation["token"], share["token"], f"sk-{m}-secret"})


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("cross-workspace")
    (tmp / "shared").mkdir()
    with FakeOpenAIServer(default_reply="The pump needs grease.") as llm:
        settings = Settings(home=tmp / "home", workers=0, chat_base_url=llm.base_url, chat_model="fake-chat",
                            chat_api_key="sk-test", rate_limit_per_minute=0, _env_file=None,
                            source_roots=[tmp / "shared"],  # the workspaces' folder sources
                            outbound_allow=["127.0.0.1/32"])  # the workspaces' chat providers are the fake
        with app_client(settings) as (client, ctx, _):  # the bootstrap workspace: a third, empty one
            a, b = Workspace("aardvark"), Workspace("bison")
            _populate(client, ctx, a, tmp, llm.base_url)
            _populate(client, ctx, b, tmp, llm.base_url)
            yield World(client, ctx, client.get("/openapi.json").json(), a, b)


# --- the routes of /openapi.json ------------------------------------------------------------------

def _schema(spec: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = spec["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _branches(spec: dict[str, Any], node: dict[str, Any]) -> list[dict[str, Any]]:
    """The non-null alternatives of a schema (anyOf / oneOf / allOf flattened)."""
    node = _schema(spec, node)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in node:
            return [b for sub in node[key] for b in _branches(spec, sub)]
    return [] if node.get("type") == "null" else [node]


def _nullable(spec: dict[str, Any], node: dict[str, Any]) -> bool:
    node = _schema(spec, node)
    return any(_schema(spec, s).get("type") == "null" for k in ("anyOf", "oneOf") for s in node.get(k, []))


def minimal(spec: dict[str, Any], node: dict[str, Any]) -> Any:
    """The smallest instance of a JSON schema: required properties only, a default or null where allowed."""
    node = _schema(spec, node)
    if "const" in node:
        return node["const"]
    if "default" in node:
        return copy.deepcopy(node["default"])
    if _nullable(spec, node):
        return None
    branches = _branches(spec, node)
    if not branches:
        return None
    node = branches[0]
    if "enum" in node:
        return node["enum"][0]
    kind = node.get("type")
    if kind == "object" or "properties" in node:
        props = node.get("properties", {})
        return {k: minimal(spec, props[k]) for k in node.get("required", [])}
    if kind == "array":
        return [minimal(spec, node.get("items", {})) for _ in range(node.get("minItems", 0))]
    if kind in ("integer", "number"):
        low = node.get("minimum", node["exclusiveMinimum"] + 1 if "exclusiveMinimum" in node else 1)
        value = min(low, node.get("maximum", low))
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return False
    return "probe" + "e" * max(0, node.get("minLength", 0) - 5)


@dataclass(frozen=True)
class IdField:
    where: str  # "body" or "query"
    path: tuple[str, ...]  # property names from the body's root; "[]" is an array's item
    many: bool  # a list of ids

    @property
    def name(self) -> str:
        return self.path[-1]

    @property
    def key(self) -> str:
        return ".".join(self.path)


def _body_id_fields(spec: dict[str, Any], node: dict[str, Any], extra: dict[str, str],
                    prefix: tuple[str, ...] = (), depth: int = 0) -> list[IdField]:
    out: list[IdField] = []
    if depth > 6:
        return out
    for branch in _branches(spec, node):
        for name, prop in branch.get("properties", {}).items():
            here = (*prefix, name)
            if (ID_NAME.match(name) and name not in NOT_IDS) or (not prefix and name in extra):
                many = any(b.get("type") == "array" for b in _branches(spec, prop))
                out.append(IdField("body", here, many))
            else:
                out += _body_id_fields(spec, prop, extra, here, depth + 1)
        if branch.get("type") == "array" and "items" in branch:
            out += _body_id_fields(spec, branch["items"], extra, (*prefix, "[]"), depth + 1)
    return list(dict.fromkeys(out))


@dataclass
class Route:
    method: str
    path: str
    op: dict[str, Any]
    path_params: list[str]
    ids_in_path: list[str]  # the path parameters but VALUES
    fields: list[IdField]
    body: dict[str, Any] | None  # JSON body schema
    form: dict[str, Any] | None  # multipart body schema
    resources: dict[str, str]  # parameter or field name (or dotted path) -> resource

    def __str__(self) -> str:
        return f"{self.method} {self.path}"

    def resource(self, name_or_field: str | IdField) -> str | None:
        if isinstance(name_or_field, str):
            return self.resources.get(name_or_field)
        return self.resources.get(name_or_field.key) or self.resources.get(name_or_field.name)

    @property
    def reads(self) -> bool:
        return self.method == "GET" or bool(self.op.get("x-ragloom-reads"))


def plan(spec: dict[str, Any]) -> tuple[list[Route], list[str]]:
    """Every /api/v1 route of the schema with its ids, and the problems: unmapped path parameters and
    id fields, unclassified routes, stale entries of the tables above."""
    routes, problems = [], []
    seen: set[tuple[str, str]] = set()
    for path, ops in spec["paths"].items():
        if not path.startswith(API + "/"):
            if path not in NOT_API:
                problems.append(f"{path} is outside {API}: walk it, or add it to NOT_API with the reason")
            continue
        if path.startswith(CREDENTIAL_PREFIXES):
            continue
        for method, op in ops.items():
            method = method.upper()
            seen.add((method, path))
            extra = ROUTE_IDS.get((method, path), {})
            resources = {**IDS, **extra}
            params = op.get("parameters", [])
            path_params = [p["name"] for p in params if p["in"] == "path"]
            ids_in_path = [p for p in path_params if p not in VALUES]
            fields = [IdField("query", (p["name"],), _schema(spec, p.get("schema", {})).get("type") == "array")
                      for p in params if p["in"] == "query"
                      and ((ID_NAME.match(p["name"]) and p["name"] not in NOT_IDS) or p["name"] in extra)]
            content = op.get("requestBody", {}).get("content", {})
            body = content.get("application/json", {}).get("schema")
            form = content.get("multipart/form-data", {}).get("schema")
            if body is not None:
                fields += _body_id_fields(spec, body, extra)
                fields += [IdField("body", tuple(k.split(".")), k.endswith("ids")) for k in extra
                           if "." in k and k not in {f.key for f in fields}]
            if set(content) - {"application/json", "multipart/form-data"}:
                problems.append(f"route {method} {path} takes {sorted(content)}: teach this test to send it")
            for p in path_params:
                if p not in resources and p not in VALUES:
                    problems.append(f"route {method} {path} has path parameter {p} with no id of workspace A: "
                                    "add it to IDS (and the resource to _populate)")
            for f in fields:
                if f.key not in resources and f.name not in resources:
                    problems.append(f"route {method} {path} takes {f.name} ({f.where}) with no id of workspace A: "
                                    "add it to IDS (and the resource to _populate), or to NOT_IDS if it names "
                                    "nothing of a workspace")
            if not ids_in_path and not fields and (method, path) not in NO_IDS:
                problems.append(f"route {method} {path} takes no id of a workspace: classify it in NO_IDS "
                                "(LIST, OWN or PUBLIC)")
            routes.append(Route(method, path, op, path_params, ids_in_path, fields, body, form, resources))
    for table, name in ((NO_IDS, "NO_IDS"), (ROUTE_IDS, "ROUTE_IDS"), (BODIES, "BODIES"), (ONLY_VIA, "ONLY_VIA")):
        problems += [f"{name} names {m} {p}, which is not in /openapi.json" for m, p in table if (m, p) not in seen]
    known = {(r.method, r.path, f.key) for r in routes for f in r.fields}
    problems += [f"KNOWN_LEAKS names {m} {p} {k}, which that route does not take" for m, p, k in KNOWN_LEAKS
                 if (m, p, k) not in known]
    return routes, problems


# --- requests -------------------------------------------------------------------------------------

def _container(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """The object or array alternative of a schema."""
    return next((b for b in _branches(spec, schema) if b.get("type") in ("array", "object") or "properties" in b),
                {})


def _set(spec: dict[str, Any], schema: dict[str, Any], target: Any, path: tuple[str, ...], value: Any) -> None:
    """Set ``path`` of the body ``target``, creating the smallest valid objects and arrays on the way."""
    node, head, rest = _container(spec, schema), path[0], path[1:]
    if head == "[]":
        if not target:
            target.append(minimal(spec, _container(spec, node["items"])) if rest else value)
        for i in range(len(target)):
            if rest:
                _set(spec, node["items"], target[i], rest, value)
            else:
                target[i] = value
        return
    if not rest:
        target[head] = value
        return
    if "properties" not in node:  # a free-form object
        if not isinstance(target.get(head), dict):
            target[head] = {}
        _set(spec, {}, target[head], rest, value)
        return
    prop = node["properties"][head]
    if not isinstance(target.get(head), dict | list):
        inner = _container(spec, prop)
        target[head] = [] if inner.get("type") == "array" else minimal(spec, inner)
    _set(spec, prop, target[head], rest, value)


@dataclass
class Call:
    route: Route
    what: str
    url: str
    params: dict[str, Any]
    json: Any = None
    files: list[Any] | None = None
    sent: set[str] = field(default_factory=set)  # the ids in the request (a 404 may repeat them)

    def send(self, client: TestClient, headers: dict[str, str]) -> Any:
        kwargs: dict[str, Any] = {"params": self.params, "headers": headers}
        if self.files is not None:
            kwargs["files"] = self.files
        elif self.json is not None:
            kwargs["json"] = self.json
        try:
            return client.request(self.route.method, self.url, **kwargs)
        finally:
            client.cookies.clear()  # a sign-in's cookies are never sent with the next request

    def __str__(self) -> str:
        return f"{self.route} ({self.what})"


def build(spec: dict[str, Any], route: Route, path_ws: Workspace, field_ws: dict[IdField, Workspace],
          what: str, *, by_name: bool = False) -> Call:
    """The request of ``route`` with ``path_ws``' ids in the path and each id field's workspace's id
    (``by_name``: the resource's name instead, where it has one)."""

    def value_of(ws: Workspace, resource: str) -> str:
        return ws.names.get(resource, ws.ids[resource]) if by_name else ws.ids[resource]

    url = route.path
    sent: set[str] = set()
    for p in route.path_params:
        value = VALUES[p] if p in VALUES else value_of(path_ws, route.resources[p])
        url = url.replace("{" + p + "}", value)
        sent.add(value)
    params: dict[str, Any] = {}
    body = None
    if route.body is not None:
        body = minimal(spec, route.body) or {}
        body.update(copy.deepcopy(BODIES.get((route.method, route.path), {})))
    for f, ws in field_ws.items():
        value = value_of(ws, route.resource(f) or "")
        sent.add(value)
        if f.where == "query":
            params[f.name] = [value] if f.many else value
        else:
            _set(spec, route.body or {}, body, f.path, [value] if f.many else value)
    files = None
    if route.form is not None:
        form = _schema(spec, route.form)
        files = []
        for name in form.get("required", []):
            prop = form["properties"][name]
            binary = any(b.get("format") == "binary" or "contentMediaType" in b
                         for p in _branches(spec, prop) for b in (p, _schema(spec, p.get("items", {}))))
            files.append((name, ("probe.txt", b"probe text", "text/plain")) if binary
                         else (name, (None, str(minimal(spec, prop)))))
    return Call(route, what, url, params, body, files, sent)


def _leaks(text: str, owner: Workspace, sent: set[str]) -> list[str]:
    """What of ``owner`` the response text shows but the request's own ids and names: its mark (in
    every name and text), an id or a secret."""
    for value in sent:
        text = text.replace(value, "")
    found = [owner.mark] if owner.mark in text.lower() else []
    return found + sorted(i for i in owner.secrets if i in text)


def _shown(res: Any) -> str:
    kind = res.headers.get("content-type", "")
    if kind.startswith(("application/json", "text/")):
        return res.text[:300]
    return f"<{len(res.content)} bytes of {kind}>"


def _walked(routes: list[Route], via: str) -> list[Route]:
    """The routes to call signed in ``via``; deletes and leaving last, so a route that wrongly deletes
    A's thing does not change another route's answer."""
    mine = [r for r in routes if ONLY_VIA.get((r.method, r.path), via) == via]
    return sorted(mine, key=lambda r: r.method == "DELETE" or r.path.endswith("/leave"))


# --- the tests ------------------------------------------------------------------------------------

def test_every_route_is_walked_every_path_parameter_and_id_field_names_a_resource(world: World) -> None:
    routes, problems = plan(world.spec)
    assert not problems, "\n".join(problems)
    walked = {str(r) for r in routes}
    assert len(walked) >= 40
    for expected in ("POST /api/v1/retrieval", "DELETE /api/v1/keys/{key_id}", "POST /api/v1/dify/retrieval",
                     "PUT /api/v1/chats/{chat_id}/sessions/{session_id}/messages/{message_id}/feedback"):
        assert expected in walked


@pytest.mark.parametrize("via", VIAS)
def test_the_ids_and_bodies_are_right_each_workspace_reads_its_own(world: World, via: str) -> None:
    """The control: every reading route with a workspace's own ids answers 2xx — so the 404s below
    come from the other workspace's ids, not from a wrong id or body."""
    routes, problems = plan(world.spec)
    assert not problems, "\n".join(problems)
    failures = []
    for route in _walked(routes, via):
        if not route.reads or not (route.ids_in_path or route.fields):
            continue
        for ws in (world.a, world.b):
            call = build(world.spec, route, ws, dict.fromkeys(route.fields, ws), f"{ws.mark}'s own ids")
            res = call.send(world.client, world.auth(ws, via))
            if not 200 <= res.status_code < 300:
                failures.append(f"{call}: {res.status_code} {_shown(res)}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("via", VIAS)
def test_routes_without_ids_show_nothing_of_another_workspace(world: World, via: str) -> None:
    routes, problems = plan(world.spec)
    assert not problems, "\n".join(problems)
    failures = []
    for route in _walked(routes, via):
        kind = NO_IDS.get((route.method, route.path))
        if kind is None or route.ids_in_path or route.fields or (kind == OWN and not route.reads):
            continue
        call = build(world.spec, route, world.b, {}, kind)
        res = call.send(world.client, world.auth(world.b, via))  # a new session: POST /auth/logout ends it
        if kind == LIST and res.status_code != 200:
            failures.append(f"{call}: {res.status_code} {_shown(res)}")
        if leaks := _leaks(res.text, world.a, set()):
            failures.append(f"{call}: shows {leaks}: {_shown(res)}")
        if kind == LIST and world.b.mark not in res.text.lower() and route.path != f"{API}/audit":
            failures.append(f"{call}: B's own things are missing (is the listing right?): {_shown(res)}")
    assert not failures, "\n".join(failures)
    _a_is_intact(world)


@pytest.mark.parametrize("via", VIAS)
@pytest.mark.parametrize("by", ["ids", "names"])
def test_every_route_with_another_workspace_s_ids_is_not_found(world: World, via: str, by: str) -> None:
    """B calls every route with path parameters with A's ids everywhere (path, body, query) — or A's
    names, which routes take for knowledge bases, documents and assistants: 404, and the answer
    names nothing of A."""
    routes, problems = plan(world.spec)
    assert not problems, "\n".join(problems)
    headers = world.auth(world.b, via)
    failures, walked = [], 0
    for route in _walked([r for r in routes if r.ids_in_path], via):
        call = build(world.spec, route, world.a, dict.fromkeys(route.fields, world.a), f"A's {by}",
                     by_name=by == "names")
        res = call.send(world.client, headers)
        walked += 1
        if res.status_code != 404:
            failures.append(f"{call}: {res.status_code} {_shown(res)}")
        elif leaks := _leaks(res.text, world.a, call.sent):
            failures.append(f"{call}: the 404 shows {leaks}: {_shown(res)}")
    assert walked >= 30
    assert not failures, "another workspace's ids were not 'not found':\n" + "\n".join(failures)
    _a_is_intact(world)


@pytest.mark.parametrize("via", VIAS)
@pytest.mark.parametrize("by", ["ids", "names"])
def test_every_id_in_a_body_or_query_of_another_workspace_is_not_found(world: World, via: str, by: str) -> None:
    """B calls every route that takes ids in its body or query with A's id (or name) in one of them
    and its own everywhere else (the path too): 404, and nothing of A in the answer — a route that
    checks its path but trusts its body fails here."""
    routes, problems = plan(world.spec)
    assert not problems, "\n".join(problems)
    headers = world.auth(world.b, via)
    failures, walked = [], 0
    for route in _walked([r for r in routes if r.fields], via):
        for f in route.fields:
            others = {g: world.b for g in route.fields if g != f}
            call = build(world.spec, route, world.b, {**others, f: world.a}, f"A's {f.key} ({by})",
                         by_name=by == "names")
            res = call.send(world.client, headers)
            walked += 1
            known = KNOWN_LEAKS.get((route.method, route.path, f.key))
            if known and res.status_code == 404:
                failures.append(f"{call}: 404 now: remove it from KNOWN_LEAKS ({known})")
            elif res.status_code != 404 and not known:
                failures.append(f"{call}: {res.status_code} {_shown(res)}")
            elif leaks := _leaks(res.text, world.a, call.sent):
                failures.append(f"{call}: the 404 shows {leaks}: {_shown(res)}")
    assert walked >= 10
    assert not failures, "another workspace's ids were not 'not found':\n" + "\n".join(failures)
    _a_is_intact(world)


def _a_is_intact(world: World) -> None:
    _intact(world, world.a)


def _intact(world: World, a: Workspace) -> None:
    """Nothing of workspace ``a`` changed: its documents, settings, assistant, messages, key, members,
    invitation, name."""
    client = world.client
    h = world.auth(a, "key")
    docs = _ok(client.get(f"{API}/datasets/{a.ids['kb']}/documents", headers=h))["documents"]
    assert {d["id"] for d in docs} == {a.ids["pdf"], a.ids["markdown"], a.ids["synced"], a.ids["chart"]}
    assert all(d["status"] == "done" and "probe" not in str(d["metadata"]) for d in docs), docs
    kb = _ok(client.get(f"{API}/datasets/{a.ids['kb']}", headers=h))
    assert kb["name"] == f"{a.mark}-manuals" and kb["tag_kb_ids"] == []
    source = _ok(client.get(f"{API}/datasets/{a.ids['kb']}/sources/{a.ids['source']}", headers=h))
    assert source["name"] == f"{a.mark}-handbook" and not source["paused"] and source["schedule_minutes"] is None
    syncs = _ok(client.get(f"{API}/datasets/{a.ids['kb']}/sources/{a.ids['source']}/syncs", headers=h))["syncs"]
    assert [(j["id"], j["status"]) for j in syncs] == [(a.ids["sync"], "done")]
    chat = _ok(client.get(f"{API}/chats/{a.ids['assistant']}", headers=h))
    assert chat["name"] == f"{a.mark}-assistant" and [d["id"] for d in chat["datasets"]] == [a.ids["kb"]]
    messages = _ok(client.get(f"{API}/chats/{a.ids['assistant']}/sessions/{a.ids['session']}/messages",
                              headers=h))["messages"]
    assert [m["id"] for m in messages] == [a.ids["question"], a.ids["answer"]]
    assert all(m.get("feedback") is None for m in messages), messages
    keys = {k["id"]: k["state"] for k in _ok(client.get(f"{API}/keys", headers=h))["keys"]}
    assert keys[a.ids["key"]] == "active"
    members = {m["user_id"]: m["role"] for m in _ok(client.get(f"{API}/members", headers=h))["members"]}
    assert members == {a.user_id: "owner", a.ids["member"]: "member"}
    invitations = _ok(client.get(f"{API}/invitations", headers=h))["invitations"]
    assert [(i["id"], i["state"]) for i in invitations] == [(a.ids["invitation"], "pending")]
    groups = _ok(client.get(f"{API}/groups", headers=h))["groups"]
    assert [(g["id"], g["name"], g["members"]) for g in groups] == [(a.ids["group"], f"{a.mark}-team",
                                                                     [f"member@{a.mark}.test"])]
    spaces = _ok(client.get(f"{API}/workspaces", headers=h))["workspaces"]  # a key sees its own only
    assert [(w["id"], w["name"]) for w in spaces] == [(a.tenant_id, f"{a.mark} works")]
