"""One conformance suite over every connector (issue 30): each is driven by a harness that makes its
source real — a folder on disk, a web site served by Python's http.server on loopback, a bucket of
moto's S3 server on loopback, a Git repository made with git, a WebDAV collection of wsgidav, a mailbox
of dovecot (skipped without it), the fakes of Confluence and Notion (tests/fakes) — and changes it
between listings. Every connector lists each item once under an id that stays while the item lives,
with a change token that changes with the content and only then, a file name, a URL back to the
source; reads an item's exact bytes; forgets a removed item; and refuses a setting it does not have.
Where items are immutable (IMAP messages), a changed item is a new item and the old one is gone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import pytest

from ragloom.errors import InvalidRequestError
from ragloom.ingest.connectors import Connector, ConnectorSpec, Item, connectors, open_connector
from ragloom.ingest.connectors.confluence import page_html
from tests.fakes.confluence import FakeConfluence
from tests.fakes.notion import FakeNotion, block
from tests.sources import mailserver
from tests.sources.dav import PASSWORD, USER, DavServer, dav_server
from tests.sources.helpers import write
from tests.sources.mailserver import MailServer, mail_server
from tests.sources.sites import page, web_site
from tests.storage.engines import ACCESS_KEY, SECRET_KEY, S3Server, s3_server


class Harness(Protocol):
    type: str
    settings: dict[str, object]
    spec_extra: dict[str, object]

    def put(self, name: str, text: str) -> None: ...
    def remove(self, name: str) -> None: ...
    def id_of(self, name: str) -> str: ...
    def content_of(self, name: str) -> bytes: ...


LOOPBACK = ("127.0.0.1/32",)


class FolderHarness:
    type = "folder"

    def __init__(self, root: Path) -> None:
        self.root = root / "src"
        self.root.mkdir()
        self.settings = {"path": str(self.root)}
        self.spec_extra = {"roots": (root,)}

    def put(self, name: str, text: str) -> None:
        write(self.root / "docs" / f"{name}.md", text)

    def remove(self, name: str) -> None:
        (self.root / "docs" / f"{name}.md").unlink()

    def id_of(self, name: str) -> str:
        return f"docs/{name}.md"

    def content_of(self, name: str) -> bytes:
        return (self.root / "docs" / f"{name}.md").read_bytes()


class WebHarness:
    type = "web"

    def __init__(self, root: Path, url: str) -> None:
        self.root, self.url = root, url
        self.names: list[str] = []
        self.settings = {"urls": [url + "/"], "max_depth": 2}
        self.spec_extra = {"outbound_allow": ("127.0.0.1/32",)}
        self._index()

    def _index(self) -> None:
        (self.root / "index.html").write_text(page("Home", "The site.", links=[f"/{n}.html" for n in self.names]))

    def put(self, name: str, text: str) -> None:
        (self.root / f"{name}.html").write_text(page(name, text))
        if name not in self.names:
            self.names.append(name)
            self._index()

    def remove(self, name: str) -> None:
        (self.root / f"{name}.html").unlink()
        self.names.remove(name)
        self._index()

    def id_of(self, name: str) -> str:
        return f"{self.url}/{name}.html"

    def content_of(self, name: str) -> bytes:
        return (self.root / f"{name}.html").read_bytes()


class S3Harness:
    type = "s3"

    def __init__(self, server: S3Server) -> None:
        self.client = server.client()
        self.bucket = server.new_bucket()
        self.client.put_object(Bucket=self.bucket, Key="elsewhere/outside.md", Body=b"# Not under the prefix")
        self.client.put_object(Bucket=self.bucket, Key="docs/folder/", Body=b"")  # a folder marker: no item
        self.settings = {"bucket": self.bucket, "prefix": "docs/", "endpoint_url": server.endpoint_url}
        self.spec_extra = {"outbound_allow": ("127.0.0.1/32",),
                           "credentials": {"access_key_id": ACCESS_KEY, "secret_access_key": SECRET_KEY}}
        self.data: dict[str, bytes] = {}

    def put(self, name: str, text: str) -> None:
        self.data[name] = text.encode()
        self.client.put_object(Bucket=self.bucket, Key=f"docs/{name}.md", Body=self.data[name])

    def remove(self, name: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=f"docs/{name}.md")

    def id_of(self, name: str) -> str:
        return f"docs/{name}.md"

    def content_of(self, name: str) -> bytes:
        return self.data[name]


class GitHarness:
    type = "git"

    def __init__(self, root: Path) -> None:
        self.repo = root / "repo"
        self.repo.mkdir()
        self.git("init", "-q", "-b", "main")
        write(self.repo / "src" / "code.py", "print('not a doc')\n")
        self.commit()
        self.settings = {"repository": str(self.repo), "branch": "main", "paths": ["docs/"]}
        self.spec_extra = {"roots": (root,)}

    def git(self, *args: str) -> None:
        import subprocess

        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=self.repo,
                       check=True, capture_output=True)

    def commit(self) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "change")

    def put(self, name: str, text: str) -> None:
        write(self.repo / "docs" / f"{name}.md", text)
        self.commit()

    def remove(self, name: str) -> None:
        (self.repo / "docs" / f"{name}.md").unlink()
        self.commit()

    def id_of(self, name: str) -> str:
        return f"docs/{name}.md"

    def content_of(self, name: str) -> bytes:
        return (self.repo / "docs" / f"{name}.md").read_bytes()


class WebDAVHarness:
    type = "webdav"

    def __init__(self, server: DavServer) -> None:
        self.root = server.root
        write(self.root / "elsewhere" / "outside.md", "# Not under the paths")
        self.settings = {"url": server.url, "paths": ["docs"]}
        self.spec_extra = {"outbound_allow": LOOPBACK, "credentials": {"username": USER, "password": PASSWORD}}

    def put(self, name: str, text: str) -> None:
        write(self.root / "docs" / "sub" / f"{name}.md", text)

    def remove(self, name: str) -> None:
        (self.root / "docs" / "sub" / f"{name}.md").unlink()

    def id_of(self, name: str) -> str:
        return f"docs/sub/{name}.md"

    def content_of(self, name: str) -> bytes:
        return (self.root / "docs" / "sub" / f"{name}.md").read_bytes()


class IMAPHarness:
    """A folder of its own in dovecot's one mailbox; a message's subject is its name. Messages are
    immutable: ``put`` of a known name replaces the message (a new UID)."""

    type = "imap"
    immutable = True
    _folders = iter(range(1_000_000))

    def __init__(self, server: MailServer) -> None:
        self.server = server
        self.folder = f"Conformance{next(self._folders)}"
        server.append(self.folder, b"Subject: seed\r\n\r\nmakes the folder\r\n")
        self.server.delete(self.folder, "seed")
        self.settings = {"host": server.host, "port": server.port, "ssl": False, "folders": [self.folder]}
        self.spec_extra = {"outbound_allow": LOOPBACK,
                           "credentials": {"username": mailserver.USER, "password": mailserver.PASSWORD}}
        self.data: dict[str, bytes] = {}

    def put(self, name: str, text: str) -> None:
        if name in self.data:
            self.remove(name)
        self.data[name] = (f"From: Carol <carol@example.com>\r\nTo: {mailserver.USER}\r\nSubject: {name}\r\n"
                           f"Message-ID: <{name}.{len(text)}@example.com>\r\n\r\n{text}\r\n").encode()
        self.server.append(self.folder, self.data[name])

    def remove(self, name: str) -> None:
        self.server.delete(self.folder, name)

    def id_of(self, name: str) -> str:
        conn = self.server.client()
        try:
            conn.select(f'"{self.folder}"', readonly=True)
            validity = conn.response("UIDVALIDITY")[1][0].decode()  # type: ignore[union-attr]
            uids = conn.uid("SEARCH", "SUBJECT", f'"{name}"')[1][0].split()  # type: ignore[index]
        finally:
            conn.logout()
        return f"{self.folder}/{validity}/{uids[-1].decode()}" if uids else f"{self.folder}/-/{name}"

    def content_of(self, name: str) -> bytes:
        return self.data[name]


class ConfluenceHarness:
    """A space of the fake Confluence (two pages a request: a listing pages); a page's title is its name."""

    type = "confluence"

    def __init__(self, wiki: FakeConfluence) -> None:
        self.wiki = wiki
        self.home = wiki.add_page("DOCS", "Home", "<p>The space's home.</p>")
        wiki.add_page("OTHER", "Elsewhere", "<p>Another space.</p>")
        self.settings = {"url": wiki.url, "spaces": ["DOCS"], "cloud": True}
        self.spec_extra = {"outbound_allow": LOOPBACK,
                           "credentials": {"email": wiki.email, "api_token": wiki.api_token}}
        self.ids: dict[str, str] = {}

    def put(self, name: str, text: str) -> None:
        if name in self.ids:
            self.wiki.edit(self.ids[name], body=f"<p>{text}</p>")
        else:
            self.ids[name] = self.wiki.add_page("DOCS", name, f"<p>{text}</p>", parent=self.home.id).id

    def remove(self, name: str) -> None:
        self.wiki.remove(self.ids[name])

    def id_of(self, name: str) -> str:
        return f"page:{self.ids[name]}"

    def content_of(self, name: str) -> bytes:
        return page_html(name, self.wiki.pages[self.ids[name]].body)


class NotionHarness:
    """Pages shared with the integration of the fake Notion (two results a request: listings page)."""

    type = "notion"

    def __init__(self, notion: FakeNotion) -> None:
        self.notion = notion
        self.settings = {"api_url": notion.url}
        self.spec_extra = {"outbound_allow": LOOPBACK, "credentials": {"token": notion.token}}
        self.ids: dict[str, str] = {}
        self.texts: dict[str, str] = {}

    def put(self, name: str, text: str) -> None:
        self.texts[name] = text
        blocks = [block("paragraph", text), block("bulleted_list_item", "one"), block("bulleted_list_item", "two")]
        if name in self.ids:
            self.notion.edit(self.ids[name], blocks)
        else:
            self.ids[name] = self.notion.add_page(name, blocks).id

    def remove(self, name: str) -> None:
        self.notion.remove(self.ids[name])

    def id_of(self, name: str) -> str:
        return self.ids[name]

    def content_of(self, name: str) -> bytes:
        return f"# {name}\n\n{self.texts[name]}\n\n- one\n- two\n".encode()


@pytest.fixture(scope="module")
def mail() -> Iterator[MailServer]:
    if mailserver.DOVECOT is None:
        pytest.skip("dovecot is not installed (apt-get install dovecot-imapd; .ci/run installs it)")
    with mail_server() as server:
        yield server


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        yield server


@pytest.fixture(params=["folder", "web", "s3", "git", "webdav", "imap", "confluence", "notion"])
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    if request.param == "webdav":
        with dav_server(tmp_path) as dav:
            yield WebDAVHarness(dav)
        return
    if request.param == "imap":
        yield IMAPHarness(request.getfixturevalue("mail"))
        return
    if request.param == "confluence":
        with FakeConfluence() as wiki:
            yield ConfluenceHarness(wiki)
        return
    if request.param == "notion":
        with FakeNotion() as notion:
            yield NotionHarness(notion)
        return
    if request.param == "folder":
        yield FolderHarness(tmp_path)
        return
    if request.param == "git":
        yield GitHarness(tmp_path)
        return
    if request.param == "s3":
        yield S3Harness(request.getfixturevalue("s3"))
        return
    site = tmp_path / "site"
    site.mkdir()
    with web_site(site) as server:
        yield WebHarness(site, server.url)


def _connector(h: Harness) -> Connector:
    return open_connector(h.type, ConnectorSpec(settings=h.settings, **h.spec_extra))  # type: ignore[arg-type]


def _listing(h: Harness) -> dict[str, Item]:
    made = _connector(h)
    try:
        items = list(made.list_items())
        assert made.problems() == []
    finally:
        made.close()
    ids = [i.id for i in items]
    assert len(ids) == len(set(ids)), "an item is listed once"
    for item in items:
        assert item.token and item.url and "." in item.name, item
    return {i.id: i for i in items}


def test_every_builtin_connector_is_covered() -> None:
    assert set(connectors.builtins) == {"confluence", "folder", "git", "imap", "notion", "s3", "web", "webdav"}


def test_items_are_listed_once_with_stable_ids_and_tokens(harness: Harness) -> None:
    for name in ("alpha", "beta", "gamma"):
        harness.put(name, f"The {name} page says {name}.")
    first = _listing(harness)
    assert {harness.id_of(n) for n in ("alpha", "beta", "gamma")} <= set(first)
    second = _listing(harness)
    assert {i: it.token for i, it in second.items()} == {i: it.token for i, it in first.items()}


def test_a_changed_item_keeps_its_id_and_gets_another_token(harness: Harness) -> None:
    for name in ("alpha", "beta"):
        harness.put(name, f"The {name} page.")
    before = _listing(harness)
    old = harness.id_of("alpha")
    harness.put("alpha", "The alpha page, rewritten at more length.")
    after = _listing(harness)
    a, b = harness.id_of("alpha"), harness.id_of("beta")
    if getattr(harness, "immutable", False):  # a changed message is a new message: a new id, the old one gone
        assert a != old and a in after and old not in after
    else:
        assert after[a].token != before[a].token
    assert after[b].token == before[b].token


def test_a_removed_item_is_not_listed(harness: Harness) -> None:
    for name in ("alpha", "beta"):
        harness.put(name, f"The {name} page.")
    assert harness.id_of("beta") in _listing(harness)
    harness.remove("beta")
    after = _listing(harness)
    assert harness.id_of("beta") not in after and harness.id_of("alpha") in after


def test_read_gives_the_item_s_bytes(harness: Harness) -> None:
    harness.put("alpha", "The alpha page: 42 bolts.")
    made = _connector(harness)
    try:
        item = next(i for i in made.list_items() if i.id == harness.id_of("alpha"))
        assert b"".join(made.read(item)) == harness.content_of("alpha")
        assert made.check()
    finally:
        made.close()


def test_an_unknown_setting_is_refused(harness: Harness) -> None:
    with pytest.raises(InvalidRequestError, match="unknown setting"):
        open_connector(harness.type, ConnectorSpec(settings={**harness.settings, "colour": "blue"},
                                                   **harness.spec_extra))  # type: ignore[arg-type]


def test_an_unknown_type_names_the_known_ones() -> None:
    with pytest.raises(InvalidRequestError, match="confluence, folder, git, imap, notion, s3, web, webdav"):
        open_connector("gopher", ConnectorSpec(settings={}))
