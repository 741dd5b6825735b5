"""The webdav connector against a real WebDAV server (wsgidav on loopback, basic auth): a collection
walked with PROPFIND Depth 1 into its sub-collections and synced with stored credentials, a wrong
password named without being shown, the outbound guard, settings that climb out refused, and a file
larger than the limit refused as it arrives."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragloom.context import Context, Principal
from ragloom.errors import InvalidRequestError
from ragloom.ingest.connectors import ConnectorSpec, SourceError, open_connector
from tests.sources.dav import PASSWORD, USER, DavServer, dav_server
from tests.sources.helpers import add_source, documents, make_kb, sync, write

LOOPBACK = ("127.0.0.1/32",)
KEYS = {"username": USER, "password": PASSWORD}


@pytest.fixture
def dav(tmp_path: Path) -> Iterator[DavServer]:
    root = tmp_path / "dav"
    root.mkdir()
    with dav_server(root) as server:
        yield server


def test_a_collection_synced_with_stored_credentials(ctx: Context, principal: Principal, dav: DavServer) -> None:
    write(dav.root / "pump.md", "# Pump\n\nGrease every 450 hours.\n")
    write(dav.root / "Manuals" / "Valve spec.md", "# Valve\n\nThe valve is blue.\n")
    write(dav.root / "Manuals" / "deep" / "er" / "seal.md", "# Seal\n\nNitrile.\n")
    made = open_connector("webdav", ConnectorSpec(settings={"url": dav.url}, credentials=KEYS,
                                                  outbound_allow=LOOPBACK))
    try:
        items = {i.id: i for i in made.list_items()}
        assert set(items) == {"pump.md", "Manuals/Valve spec.md", "Manuals/deep/er/seal.md"}
        valve = items["Manuals/Valve spec.md"]
        assert valve.url == dav.url + "Manuals/Valve%20spec.md" and valve.name == "Valve spec.md"
        assert valve.token.startswith("etag:") and valve.size == len("# Valve\n\nThe valve is blue.\n")
        assert b"".join(made.read(valve)) == b"# Valve\n\nThe valve is blue.\n"
        assert made.check() == f"{dav.url.rstrip('/')}: 1 file(s) and 1 collection(s) at the top"
    finally:
        made.close()
    shallow = open_connector("webdav", ConnectorSpec(settings={"url": dav.url, "paths": ["Manuals"], "max_depth": 0},
                                                     credentials=KEYS, outbound_allow=LOOPBACK))
    try:
        assert [i.id for i in shallow.list_items()] == ["Manuals/Valve spec.md"]
    finally:
        shallow.close()

    kb = make_kb(ctx, principal)
    source = add_source(ctx, principal, kb, type="webdav", credentials=KEYS, settings={"url": dav.url})
    first = sync(ctx, principal, kb, source)
    assert (first.stats["listed"], first.stats["new"]) == (3, 3), first.message
    assert documents(ctx, kb)["pump.md"].meta["source_url"] == dav.url + "pump.md"
    write(dav.root / "pump.md", "# Pump\n\nGrease every 500 hours, or yearly.\n")
    (dav.root / "Manuals" / "deep" / "er" / "seal.md").unlink()
    second = sync(ctx, principal, kb, source)
    assert (second.stats["changed"], second.stats["deleted"], second.stats["unchanged"]) == (1, 1, 1)


def test_a_wrong_password_is_named_and_not_shown(dav: DavServer) -> None:
    made = open_connector("webdav", ConnectorSpec(settings={"url": dav.url}, outbound_allow=LOOPBACK,
                                                  credentials={"username": USER, "password": "not-the-password"}))
    try:
        with pytest.raises(SourceError, match="401: the source refused the credentials") as refused:
            made.check()
        assert "not-the-password" not in refused.value.message and not refused.value.transient
        with pytest.raises(SourceError, match="401"):
            list(made.list_items())
    finally:
        made.close()


def test_settings_and_the_outbound_guard(dav: DavServer) -> None:
    with pytest.raises(InvalidRequestError, match="loopback address.*RAGLOOM_OUTBOUND_ALLOW"):
        open_connector("webdav", ConnectorSpec(settings={"url": dav.url}, credentials=KEYS))
    for settings, named in (({"url": "ftp://x/"}, "settings.url"), ({}, "settings.url is required"),
                            ({"url": dav.url, "paths": ["../etc"]}, "settings.paths"),
                            ({"url": dav.url, "max_depth": -1}, "settings.max_depth"),
                            ({"url": "http://bob:pw@127.0.0.1/"}, "settings.url: put the credentials")):
        with pytest.raises(InvalidRequestError, match=named):
            open_connector("webdav", ConnectorSpec(settings=settings, outbound_allow=LOOPBACK))
    with pytest.raises(InvalidRequestError, match="both username and password"):
        open_connector("webdav", ConnectorSpec(settings={"url": dav.url}, credentials={"username": USER},
                                               outbound_allow=LOOPBACK))


def test_a_file_larger_than_the_limit_is_refused_as_it_arrives(dav: DavServer) -> None:
    write(dav.root / "big.txt", "x" * 300_000)
    made = open_connector("webdav", ConnectorSpec(settings={"url": dav.url}, credentials=KEYS,
                                                  outbound_allow=LOOPBACK, max_bytes=100_000))
    try:
        big = next(iter(made.list_items()))
        with pytest.raises(SourceError, match="larger than 100000 bytes"):
            b"".join(made.read(big))
    finally:
        made.close()
