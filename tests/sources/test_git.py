"""The git connector: a repository on the server's disk only inside RAGLOOM_SOURCE_ROOTS, an http(s)
one only on addresses the server may reach, no credentials in a URL, and a docs folder of a branch kept
in sync (a commit that changes a file gives its document a new version)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ragloom.context import Context, Principal
from ragloom.errors import InvalidRequestError
from ragloom.ingest.connectors import ConnectorSpec, SourceError, open_connector
from tests.sources.helpers import add_source, documents, make_kb, sync, version_count, write


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=repo, check=True,
                   capture_output=True)


def commit(repo: Path) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "change")


def test_where_a_repository_may_be(tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    (allowed / "repo").mkdir(parents=True)
    (tmp_path / "other").mkdir()
    open_connector("git", ConnectorSpec(settings={"repository": str(allowed / "repo")}, roots=(allowed,)))
    with pytest.raises(InvalidRequestError, match="outside the folders"):
        open_connector("git", ConnectorSpec(settings={"repository": str(tmp_path / "other")}, roots=(allowed,)))
    with pytest.raises(InvalidRequestError, match="RAGLOOM_SOURCE_ROOTS"):
        open_connector("git", ConnectorSpec(settings={"repository": str(allowed / "repo")}))
    with pytest.raises(InvalidRequestError, match="http\\(s\\) URL or an absolute path"):
        open_connector("git", ConnectorSpec(settings={"repository": "ext::sh -c touch% /tmp/pwned"}))
    with pytest.raises(InvalidRequestError, match="loopback address.*RAGLOOM_OUTBOUND_ALLOW"):
        open_connector("git", ConnectorSpec(settings={"repository": "http://127.0.0.1:9/repo.git"}))
    with pytest.raises(InvalidRequestError, match="token in the credentials"):
        open_connector("git", ConnectorSpec(settings={"repository": "https://user:secret@example.com/r.git"}))
    with pytest.raises(InvalidRequestError, match="not a branch name"):
        open_connector("git", ConnectorSpec(settings={"repository": str(allowed / "repo"), "branch": "--upload-pack=x"},
                                            roots=(allowed,)))


def test_an_unreachable_repository_is_a_transient_error_that_never_shows_the_token(tmp_path: Path) -> None:
    made = open_connector("git", ConnectorSpec(settings={"repository": "http://127.0.0.1:9/repo.git"},
                                               outbound_allow=("127.0.0.1/32",), credentials={"token": "ghp_s3cr3t"},
                                               timeout=10))
    try:
        with pytest.raises(SourceError) as failed:
            list(made.list_items())
        assert failed.value.transient and "ghp_s3cr3t" not in failed.value.message
    finally:
        made.close()


def test_a_docs_folder_of_a_branch_kept_in_sync(ctx: Context, principal: Principal, shared: Path) -> None:
    repo = shared / "product"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo / "docs" / "install.md", "# Install\n\nRun the installer.\n")
    write(repo / "docs" / "api" / "auth.md", "# Auth\n\nUse a bearer token.\n")
    write(repo / "src" / "main.py", "print('code')\n")
    commit(repo)
    kb = make_kb(ctx, principal)
    source = add_source(ctx, principal, kb, type="git",
                        settings={"repository": str(repo), "branch": "main", "paths": ["docs/"]})
    first = sync(ctx, principal, kb, source)
    assert (first.stats["listed"], first.stats["new"]) == (2, 2)
    docs = documents(ctx, kb)
    assert set(docs) == {"install.md", "auth.md"}
    assert docs["auth.md"].meta["source_path"] == "docs/api/auth.md"

    write(repo / "docs" / "install.md", "# Install\n\nRun the installer as root.\n")
    (repo / "docs" / "api" / "auth.md").unlink()
    write(repo / "src" / "main.py", "print('more code')\n")
    commit(repo)
    second = sync(ctx, principal, kb, source)
    assert (second.stats["changed"], second.stats["deleted"], second.stats["new"]) == (1, 1, 0)
    assert version_count(ctx, docs["install.md"].id) == 2 and set(documents(ctx, kb)) == {"install.md"}
