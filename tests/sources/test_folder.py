"""The folder connector reads only inside the folders the administrator allows (RAGLOOM_SOURCE_ROOTS),
symbolic links resolved: a path outside, a link to a file or a folder outside, and an item id that
climbs out are all refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragloom.errors import InvalidRequestError
from ragloom.ingest.connectors import ConnectorSpec, Item, SourceError, open_connector


def folder(path: Path | str, roots: tuple[Path, ...]) -> object:
    return open_connector("folder", ConnectorSpec(settings={"path": str(path)}, roots=roots))


def test_the_path_must_be_inside_an_allowed_root(tmp_path: Path) -> None:
    allowed, other = tmp_path / "allowed", tmp_path / "other"
    (allowed / "docs").mkdir(parents=True)
    other.mkdir()
    folder(allowed / "docs", (allowed,))
    with pytest.raises(InvalidRequestError, match="outside the folders sources may read"):
        folder(other, (allowed,))
    with pytest.raises(InvalidRequestError, match="outside"):
        folder(allowed / "docs" / ".." / ".." / "other", (allowed,))
    with pytest.raises(InvalidRequestError, match="RAGLOOM_SOURCE_ROOTS"):
        folder(allowed / "docs", ())
    with pytest.raises(InvalidRequestError, match="absolute"):
        folder("docs", (allowed,))
    with pytest.raises(InvalidRequestError, match="not a folder"):
        folder(allowed / "missing", (allowed,))
    (allowed / "escape").symlink_to(other)  # a link inside the root to a folder outside it
    with pytest.raises(InvalidRequestError, match="outside"):
        folder(allowed / "escape", (allowed,))


def test_links_out_of_the_roots_are_neither_listed_nor_read(tmp_path: Path) -> None:
    allowed, secret = tmp_path / "allowed", tmp_path / "secret"
    docs = allowed / "docs"
    docs.mkdir(parents=True)
    secret.mkdir()
    (secret / "passwords.txt").write_text("hunter2")
    (docs / "fine.md").write_text("# Fine")
    (docs / "inside-link.md").symlink_to(docs / "fine.md")  # a link that stays inside: kept
    (docs / "leak.txt").symlink_to(secret / "passwords.txt")
    (docs / "leakdir").symlink_to(secret, target_is_directory=True)
    (docs / ".hidden.md").write_text("hidden")
    made = folder(docs, (allowed,))
    items = {i.id: i for i in made.list_items()}  # type: ignore[attr-defined]
    assert set(items) == {"fine.md", "inside-link.md"}
    for sneaky in ("leak.txt", "../../secret/passwords.txt", "leakdir/passwords.txt", "/etc/passwd"):
        with pytest.raises(SourceError, match="outside"):
            b"".join(made.read(Item(id=sneaky, token="x", name="x.txt")))  # type: ignore[attr-defined]
    assert b"".join(made.read(items["fine.md"])) == b"# Fine"  # type: ignore[attr-defined]


def test_an_item_larger_than_the_limit_is_refused_when_read(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "big.txt").write_bytes(b"x" * 5000)
    made = open_connector("folder", ConnectorSpec(settings={"path": str(tmp_path / "d")}, roots=(tmp_path,),
                                                  max_bytes=4096))
    item = next(iter(made.list_items()))
    assert item.size == 5000 and item.token.endswith("-5000")
    with pytest.raises(SourceError, match="larger than 4096"):
        b"".join(made.read(item))


def test_hidden_files_are_listed_when_asked(tmp_path: Path) -> None:
    (tmp_path / "d" / ".git").mkdir(parents=True)
    (tmp_path / "d" / ".git" / "config").write_text("x")
    (tmp_path / "d" / ".env.md").write_text("x")
    shown = open_connector("folder", ConnectorSpec(settings={"path": str(tmp_path / "d"), "hidden": True},
                                                   roots=(tmp_path,)))
    assert {i.id for i in shown.list_items()} == {".env.md", ".git/config"}
    assert os.path.isdir(tmp_path / "d")


def test_a_fifo_put_in_a_file_s_place_is_refused_not_waited_on(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.md").write_text("# A")
    made = open_connector("folder", ConnectorSpec(settings={"path": str(tmp_path / "d")}, roots=(tmp_path,)))
    item = next(iter(made.list_items()))
    (tmp_path / "d" / "a.md").unlink()
    os.mkfifo(tmp_path / "d" / "a.md")  # a reader of a FIFO without a writer would wait forever
    with pytest.raises(SourceError, match="not a regular file"):
        b"".join(made.read(item))
    assert [i.id for i in made.list_items()] == []


def test_unix_permissions_become_the_files_readers_with_an_owner_email_domain(tmp_path: Path) -> None:
    import grp
    import pwd

    folder_ = tmp_path / "shared"
    folder_.mkdir()
    modes = {"open.md": 0o644, "team.md": 0o640, "mine.md": 0o600, "locked.md": 0o000}
    for name, mode in modes.items():
        (folder_ / name).write_text(name)
        os.chmod(folder_ / name, mode)
    owner = pwd.getpwuid(os.getuid()).pw_name
    group = grp.getgrgid(os.getgid()).gr_name
    settings = {"path": str(folder_), "owner_email_domain": "Example.com"}
    made = open_connector("folder", ConnectorSpec(settings=settings, roots=(tmp_path,)))
    assert made.settings()["owner_email_domain"] == "example.com"
    readers = {i.id: i.principals for i in made.list_items()}
    me = f"user:{owner}@example.com"
    assert readers == {"open.md": (), "team.md": (me, f"group:{group}"), "mine.md": (me,), "locked.md": (me,)}
    plain = open_connector("folder", ConnectorSpec(settings={"path": str(folder_)}, roots=(tmp_path,)))
    assert all(i.principals == () for i in plain.list_items())  # without the setting: no readers
    with pytest.raises(InvalidRequestError, match="owner_email_domain"):
        open_connector("folder", ConnectorSpec(settings={**settings, "owner_email_domain": "not a domain"},
                                               roots=(tmp_path,)))
