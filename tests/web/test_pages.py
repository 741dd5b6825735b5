"""The web UI's pages in process: who may see them, what they are served with, and that they stay
out of the API's contract. The browser tests (test_browser.py) drive them for real."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import markupsafe
import pytest
from fastapi.testclient import TestClient

from ragloom.web import messages
from ragloom.web.pages import PAGE_POLICY, WORKSPACE_PAGES
from tests.live import app_client

STATIC = Path(__file__).parents[2] / "src" / "ragloom" / "web" / "static"
TEMPLATES = STATIC.parent / "templates"
PAGES = ["/ui/kb", "/ui/kb/some-id", "/ui/kb/some-id/settings", "/ui/kb/some-id/documents/some-doc", "/ui/bench",
         "/ui/kb/some-id/knowledge", "/ui/kb/some-id/graph", "/ui/kb/some-id/sources",
         "/ui/chat", "/ui/chat/some-id", "/ui/account", *(f"/ui/workspace/{p}" for p in WORKSPACE_PAGES)]


@pytest.fixture
def client(settings) -> Iterator[TestClient]:
    with app_client(settings) as (c, _ctx, _auth):
        yield c


def sign_up(client: TestClient, email: str = "ana@example.com") -> dict:
    r = client.post("/api/v1/auth/signup", json={"email": email, "password": "correct horse battery"})
    assert r.status_code == 201, r.text
    return r.json()


def test_pages_redirect_to_sign_in_without_a_session_and_come_back(client: TestClient) -> None:
    for path in PAGES:
        r = client.get(path + "?x=1", follow_redirects=False)
        assert r.status_code == 303, path
        assert r.headers["location"] == f"/ui/login?next={path}%3Fx%3D1", path
    login = client.get("/ui/login?next=/ui/kb/abc")
    assert login.status_code == 200 and 'data-next="/ui/kb/abc"' in login.text
    for hostile in ("https://evil.example/", "//evil.example/ui/", "/ui\\..\\x", "/api/v1/keys"):
        page = client.get("/ui/login", params={"next": hostile})
        assert 'data-next="/ui/kb"' in page.text, hostile


def test_signed_in_pages_render_with_a_strict_policy_and_no_outside_requests(client: TestClient) -> None:
    me = sign_up(client)
    for path in PAGES:
        r = client.get(path)
        assert r.status_code == 200, path
        assert r.headers["content-security-policy"] == PAGE_POLICY
        assert r.headers["cache-control"] == "no-store"
        assert str(markupsafe.escape(me["workspace"]["name"])) in r.text  # the top bar's workspace switcher
        assert not re.search(r"""(src|href)=["'](https?:)?//""", r.text), path  # nothing from another host
    assert client.get("/ui/login", follow_redirects=False).status_code == 303  # signed in: on to the page
    assert client.get("/", follow_redirects=False).headers["location"] == "/ui/kb"
    assert client.get("/ui/workspace/nope").status_code == 200  # a page of its own, not a stack trace


def test_static_files_are_served_from_the_package_and_load_nothing_from_outside() -> None:
    names = {p.name for p in STATIC.iterdir()}
    assert {"app.js", "app.css", "documents.js", "chunks.js", "workspace.js"} <= names
    for path in [*STATIC.iterdir(), *TEMPLATES.iterdir()]:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"https?://(?!127\.0\.0\.1|www\.w3\.org/2000/svg)", text), path
        assert ".innerHTML" not in text and "insertAdjacentHTML" not in text, path  # text goes in as text


def test_static_route(client: TestClient) -> None:
    r = client.get("/ui/static/app.js")
    assert r.status_code == 200 and "X-CSRF-Token" in r.text
    assert r.headers["x-content-type-options"] == "nosniff"


def test_every_catalogue_has_the_same_keys_and_placeholders() -> None:
    assert set(messages.CATALOGUES) == {"en", "zh", "ja", "de", "fr", "es"}
    for code, catalogue in messages.CATALOGUES.items():
        assert catalogue.keys() == messages.EN.keys(), (code, catalogue.keys() ^ messages.EN.keys())
        for key, text in messages.EN.items():
            assert set(re.findall(r"\{\w+\}", text)) == set(re.findall(r"\{\w+\}", catalogue[key])), (code, key)
            assert catalogue[key].strip(), (code, key)
        if code != "en":  # translated: only names, codes and words the languages share stay as in English
            same = [k for k, v in catalogue.items() if v == messages.EN[k]]
            assert len(same) < 0.08 * len(catalogue), (code, same)


def test_every_key_the_pages_use_is_in_the_catalogue() -> None:
    used: set[str] = set()
    for path in [*STATIC.glob("*.js"), *TEMPLATES.glob("*.html")]:
        used |= set(re.findall(r"""\bt\(\s*['"]([a-z_]+\.[a-z_.-]+)['"]""", path.read_text(encoding="utf-8")))
    assert used and not used - messages.EN.keys(), used - messages.EN.keys()


def test_every_chunk_method_and_parameter_is_explained_in_both_languages() -> None:
    from ragloom.service.documents.chunking_preview import methods

    for method in methods().methods:
        params = [f"param.{p.name}{end}" for p in method.parameters for end in ("", ".hint")]
        for key in [f"method.{method.name}", *params]:
            assert key in messages.EN and key in messages.ZH, key


def test_language_from_cookie_then_browser(client: TestClient) -> None:
    for header, lang in [("zh-CN,zh;q=0.9", "zh-CN"), ("fr, en;q=0.5", "fr"), ("de-CH,de;q=0.9,en;q=0.8", "de"),
                         ("en;q=0.3, ja;q=0.9", "ja"), ("es-419", "es"), ("ko, sv;q=0.8", "en"), ("", "en"),
                         ("fr;q=0, es;q=bad", "en")]:
        page = client.get("/ui/login", headers={"Accept-Language": header}).text
        assert f'<html lang="{lang}">' in page, header
    assert messages.CATALOGUES["ja"]["signin.title"] in client.get("/ui/login", headers={"Accept-Language": "ja"}).text
    client.cookies.set(messages.LANGUAGE_COOKIE, "zh")
    page = client.get("/ui/login")
    assert 'lang="zh-CN"' in page.text and messages.ZH["signin.title"] in page.text


def test_ui_routes_stay_out_of_the_api_contract(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert not [p for p in paths if p.startswith("/ui")]


def test_root_sends_a_visitor_to_sign_in_and_an_api_client_to_the_status_page(settings) -> None:
    with app_client(settings) as (client, _ctx, auth):
        root = client.get("/", follow_redirects=False)
        assert root.status_code == 303 and root.headers["location"] == "/ui/login"
        assert client.get("/").url.path == "/ui/login"  # a browser lands on the sign-in form
        page = client.get("/status", follow_redirects=False)
        assert page.status_code == 200 and "/api/v1/health" in page.text and 'href="/ui/kb"' in page.text
        assert "Documents by status" not in page.text
        for path in ("/", "/status"):  # monitoring and API clients: the status page with their counts
            counted = client.get(path, headers=auth, follow_redirects=False)
            assert counted.status_code == 200 and "Documents by status" in counted.text, path
        assert client.get("/", headers={"Authorization": "Bearer ragloom-wrong"}).status_code == 401
        assert set(client.get("/status.json").json()) == {"version", "health"}


def test_workspace_owners_and_admins_find_the_status_page(client: TestClient) -> None:
    from sqlalchemy import update

    from ragloom.db.models import Membership
    from ragloom.states import Role

    sign_up(client)
    members = client.get("/ui/workspace/members")
    assert 'href="/status"' in members.text and messages.EN["nav.status"] in members.text
    page = client.get("/status")
    assert "Your workspace: 0 knowledge bases" in page.text and "Documents by status" in page.text
    client.cookies.set(messages.LANGUAGE_COOKIE, "zh")
    assert messages.ZH["status.documents"] in client.get("/status").text
    client.cookies.delete(messages.LANGUAGE_COOKIE)
    ctx = client.app.state.ctx  # type: ignore[attr-defined]
    with ctx.db.session() as s:
        s.execute(update(Membership).values(role=Role.MEMBER))
    assert 'href="/status"' not in client.get("/ui/workspace/members").text
    assert "Documents by status" not in client.get("/status").text  # a member sees no counts
    assert set(client.get("/status.json").json()) == {"version", "health"}  # the JSON reads only a key
