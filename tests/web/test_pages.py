"""The web UI's pages in process: who may see them, what they are served with, and that they stay
out of the API's contract. The browser tests (test_browser.py) drive them for real."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html.parser import HTMLParser
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


# --- interface text comes from the catalogues --------------------------------------------------------------
# Words a page may show as they are: product and technical names, file types.
NAMES = {"ragloom", "PageRank", "JSON", "API", "Bearer", "pdf", "docx"}
WORD = re.compile(r"[^\W\d_]{3,}")  # three or more letters, of any script
ADDRESS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b[a-z][a-z0-9+.-]*://\S+")  # e-mail addresses and URLs
SHOWN_ATTRIBUTES = {"title", "placeholder", "aria-label", "aria-description", "alt", "label"}


def hard_coded_words(text: str) -> list[str]:
    return [w for w in WORD.findall(ADDRESS.sub(" ", text)) if w not in NAMES]


class _TemplateText(HTMLParser):
    """A template's text between tags and its shown attributes, as (line, where, text); <script> and <style>
    contents are left out, and so are attribute values that are JSON (a code sample shown as it is)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[int, str, str]] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.hidden += tag in ("script", "style")
        button = tag == "input" and dict(attrs).get("type") in ("submit", "button", "reset")
        for name, value in attrs:
            shown = name in SHOWN_ATTRIBUTES or (name == "value" and button)
            if shown and value and not self._json(value):
                self.found.append((self.getpos()[0], f"<{tag} {name}>", value))

    def handle_endtag(self, tag: str) -> None:
        self.hidden -= tag in ("script", "style") and self.hidden > 0

    def handle_data(self, data: str) -> None:
        if not self.hidden and data.strip():
            self.found.append((self.getpos()[0], "text", data.strip()))

    @staticmethod
    def _json(value: str) -> bool:
        try:
            return isinstance(json.loads(value), dict | list)
        except ValueError:
            return False


# a / after one of these starts a regular expression, not a division
_BEFORE_REGEX = set("(,=:[!&|?{};+-*%<>~^") | {"return", "typeof", "=>", "&&", "||", "??", "===", "!==", "==", "!="}


def _js_tokens(src: str, i: int = 0, in_expression: bool = False) -> tuple[list[tuple[str, str, int]], int]:
    """A script's tokens as (kind, text, offset): "str" for a string literal or a template literal's text (its
    ${...} parts follow it between "${" and "}$"), "id" for a name (a.b.c), "op" for the rest. Comments and
    regular expressions are left out. Returns the tokens and the offset after them."""
    out: list[tuple[str, str, int]] = []
    depth = 0
    while i < len(src):
        c = src[i]
        if c.isspace():
            i += 1
        elif src.startswith("//", i):
            end = src.find("\n", i)
            i = len(src) if end < 0 else end
        elif src.startswith("/*", i):
            i = src.index("*/", i) + 2
        elif c in "\"'":
            j = i + 1
            while src[j] != c:
                j += 2 if src[j] == "\\" else 1
            out.append(("str", src[i + 1:j], i))
            i = j + 1
        elif c == "`":
            start, text, parts = i, "", []
            i += 1
            while src[i] != "`":
                if src.startswith("${", i):
                    inner, i = _js_tokens(src, i + 2, in_expression=True)
                    parts += [("op", "${", i), *inner, ("op", "}$", i)]
                    text += " "
                else:
                    step = 2 if src[i] == "\\" else 1
                    text += src[i:i + step]
                    i += step
            out += [("str", text, start), *parts]
            i += 1
        elif c == "/" and (not out or out[-1][1] in _BEFORE_REGEX):
            j, in_class = i + 1, False
            while in_class or src[j] != "/":
                in_class = (in_class or src[j] == "[") and src[j] != "]"
                j += 2 if src[j] == "\\" else 1
            i = j + 1
            while i < len(src) and src[i].isalpha():
                i += 1
        elif c.isalnum() or c in "_$":
            name = re.compile(r"[\w$]+(?:\.[\w$]+)*").match(src, i)
            assert name
            out.append(("id", name.group(), i))
            i = name.end()
        else:
            if in_expression and c == "}" and depth == 0:
                return out, i + 1
            depth += {"{": 1, "}": -1}.get(c, 0)
            op = re.compile(r"===|!==|==|!=|=>|\?\?|\|\||&&|\.\.\.|\S").match(src, i)
            assert op
            out.append(("op", op.group(), i))
            i = op.end()
    return out, i


_BRACKETS = {"(": ")", "[": "]", "{": "}", "${": "}$"}
_CHILDREN = {"el", "RL.el", "node", "document.createTextNode"}  # el(tag, attrs, ...children): shown from the 3rd on
_FIRST = {"RL.button", "button", "RL.flash", "flash", "confirm", "window.confirm", "alert", "Error"}  # shown: 1st
_SECOND = {"RL.showError", "showError", "RL.ApiError", "ApiError"}  # shown: the 2nd argument
_PROPERTIES = ("textContent", "innerText", "title", "placeholder", "alt", "label", "ariaLabel")
_COMPARISONS = {"===", "!==", "==", "!=", "case", "in"}


def shown_script_literals(src: str) -> list[tuple[int, str]]:
    """The string literals of a script that end up on the page, as (offset, text): the children of el(...),
    a button's label, a flash, an error shown, a confirm() prompt, a shown attribute (title, placeholder,
    aria-label, alt, label) in an attribute object or set with setAttribute, and what is assigned to
    textContent, title and the like. A literal compared with (=== "done") is a value, not text."""
    tokens, _ = _js_tokens(src)
    follows: dict[int, str] = {}  # an opening bracket's index -> the token after its closing one
    opened: list[int] = []
    for k, (kind, text, _at) in enumerate(tokens):
        if kind == "op" and text in _BRACKETS:
            opened.append(k)
        elif kind == "op" and text in _BRACKETS.values() and opened:
            follows[opened.pop()] = tokens[k + 1][1] if k + 1 < len(tokens) else ""
    frames = [{"open": "", "callee": "", "arg": 0, "key": None, "assign": "", "first": "", "data": False}]
    found: list[tuple[int, str]] = []
    for k, (kind, text, at) in enumerate(tokens):
        before = tokens[k - 1][1] if k else ";"
        after = tokens[k + 1][1] if k + 1 < len(tokens) else ""
        frame = frames[-1]
        if kind == "op" and text in _BRACKETS:
            callee = before if text == "(" and tokens[k - 1][0] == "id" else ""
            frames.append({"open": text, "callee": callee, "arg": 0, "key": None, "assign": "", "first": "",
                           "data": text == "[" and follows.get(k) == "."})  # ["a", "b"].map(...): data
        elif kind == "op" and text in _BRACKETS.values() and len(frames) > 1:
            frames.pop()
        elif kind == "op" and text in ",;":
            frame.update(arg=frame["arg"] + (text == ","), key=None, assign="")
        elif kind == "op" and text == ":" and frame["open"] == "{" and frame["key"] is None:
            frame["key"] = before
        elif kind == "op" and text == "=" and tokens[k - 1][0] == "id":
            frame["assign"] = before
        elif kind == "str":
            if before == "(" and frame["arg"] == 0:
                frame["first"] = text
            if before in _COMPARISONS or after in _COMPARISONS or not hard_coded_words(text):
                continue
            # the call, object or statement the literal is part of: through (grouping) and [lists of children]
            where = next(f for f in reversed(frames) if not (f["open"] == "[" and not f["data"])
                         and not (f["open"] == "(" and not f["callee"]))
            callee, arg = where["callee"], where["arg"]
            if ((callee in _CHILDREN and arg >= 2) or (callee in _FIRST and arg == 0)
                    or (callee in _SECOND and arg == 1) or callee.endswith("replaceChildren")
                    or (callee.endswith("setAttribute") and arg == 1 and where["first"] in SHOWN_ATTRIBUTES)
                    or (where["open"] == "{" and where["key"] in SHOWN_ATTRIBUTES)
                    or where["assign"].endswith(_PROPERTIES)):
                found.append((at, text))
    return found


def test_the_script_scanner_finds_shown_text_and_leaves_values_alone() -> None:
    shown = {
        'el("p", { class: "hint" }, t("a.b"), " Loading")': "Loading",
        'el("p", { "aria-label": `Row ${n}` })': "Row",
        'x.textContent = open ? "Show all" : t("a.b");': "Show all",
        'RL.showError("page-error", "Something failed");': "Something failed",
        'if (!confirm(`Delete ${name}?`)) return;': "Delete",
        'RL.button("Remove", () => go(), "small danger")': "Remove",
        'b.setAttribute("title", "Close the panel")': "Close the panel",
        'el("ul", {}, ["One item", x])': "One item",
        'const re = /it "is" not/g; el("b", {}, (a ? "Yes please" : ""))': "Yes please",
        'document.title = `${x} · Settings`;': "Settings",
    }
    for src, text in shown.items():
        assert [text in found for _at, found in shown_script_literals(src)] == [True], src
    for src in ['x.textContent = doc.status === "failed" ? doc.message : "";', 'form.append("file", f)',
                'el("select", {}, ["member", "admin"].map((r) => el("option", { value: r }, t(`role.${r}`))))',
                'el("input", { placeholder: "name@example.com", "data-testid": "some-input" })',
                'b.setAttribute("aria-expanded", "true")', 'document.title = `${kb.name} · ragloom`;']:
        assert shown_script_literals(src) == [], src


def test_no_interface_text_is_hard_coded() -> None:
    """Every word a page shows comes from the catalogues (locales/*.json), through t(). Templates: the text
    between tags and the attributes title, placeholder, aria-label, aria-description, alt and label (and the
    value of an <input> button), with {{ ... }}, {% ... %}, {# ... #} and the contents of <script> and
    <style> taken out. Scripts: the literals shown_script_literals finds (el(...) children, textContent,
    title, placeholder, aria-label, flash, showError, confirm, button labels). Any run of three or more
    letters fails, in any script, but for the names in NAMES, e-mail addresses, URLs and attribute values
    that are JSON (code samples shown as they are). An example value to type (a placeholder) belongs in the
    catalogue too: see sharing.origins_example or sources.include_example."""
    found: list[str] = []
    for path in sorted(TEMPLATES.glob("*.html")):
        source = re.sub(r"\{#.*?#\}|\{%.*?%\}|\{\{.*?\}\}", lambda m: "\n" * m.group().count("\n"),
                        path.read_text(encoding="utf-8"), flags=re.S)
        parser = _TemplateText()
        parser.feed(source)
        parser.close()
        found += [f"{path.name}:{line} {where}: {text!r}" for line, where, text in parser.found
                  if hard_coded_words(text)]
    for path in sorted(STATIC.glob("*.js")):
        source = path.read_text(encoding="utf-8")
        found += [f"{path.name}:{source.count(chr(10), 0, at) + 1}: {text!r}"
                  for at, text in shown_script_literals(source)]
    assert not found, "interface text not from the catalogues (add a key to every locales/*.json and use t()):\n" \
        + "\n".join(found)


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
