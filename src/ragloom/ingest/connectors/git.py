"""The ``git`` connector: the files of a branch of a Git repository (docs kept next to code).

Settings: ``repository`` (an http(s) URL, or the absolute path of a repository on the server's disk
inside ``RAGLOOM_SOURCE_ROOTS``), ``branch`` (default: the repository's default branch), ``paths``
(path prefixes to take, e.g. ``["docs/"]``; default: every file). Credentials: ``token`` (sent as HTTP
basic auth, user ``x-access-token``, for a private repository), never on a command line.

A listing makes a shallow clone of the branch without file contents (``--depth 1 --filter=blob:none``)
and reads its tree: an item's id is its path, its change token the blob's id (content-addressed:
equal id, equal bytes), so nothing of an unchanged file is downloaded; reading a file fetches that one
blob. Git runs with no user or system configuration, no prompts, only the http(s) (or, for a path, file)
transport and no redirects; an http(s) repository's host must resolve to public addresses or to ranges
an administrator allows (``RAGLOOM_OUTBOUND_ALLOW``).
"""

from __future__ import annotations

import base64
import os
import posixpath
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ragloom.errors import InvalidRequestError
from ragloom.ingest.connectors.base import (
    READ_CHUNK,
    ConnectorSpec,
    Item,
    SourceError,
    bounded,
    screen_url,
    setting,
    unknown_settings,
)
from ragloom.ingest.connectors.folder import ROOTS_SETTING, _inside
from ragloom.models.http import OutboundPolicy

BRANCH = re.compile(r"^(?!-)(?!.*\.\.)[A-Za-z0-9._/\-]{1,200}$")
TREE_LINE = re.compile(r"^\d+ blob ([0-9a-f]{40,64}) +(\d+)\t(.+)$")


class GitConnector:
    """See the module docstring."""

    def __init__(self, spec: ConnectorSpec) -> None:
        unknown_settings(spec.settings, {"repository", "branch", "paths"})
        repo = setting(spec.settings, "repository", str, required=True).strip()
        self.branch = (setting(spec.settings, "branch", str, "") or "").strip()
        if self.branch and not BRANCH.match(self.branch):
            raise InvalidRequestError(f"settings.branch {self.branch!r} is not a branch name")
        paths = setting(spec.settings, "paths", list, [])
        if not all(isinstance(p, str) and p.strip() for p in paths):
            raise InvalidRequestError("settings.paths must list path prefixes (strings)")
        self.paths = [p.strip().lstrip("/") for p in paths]
        self.token = spec.credentials.get("token", "")
        unknown = set(spec.credentials) - {"token"}
        if unknown:
            raise InvalidRequestError(f"unknown credential(s) {', '.join(sorted(unknown))}; a git source takes token")
        self.policy = OutboundPolicy.allowing(spec.outbound_allow)
        self.timeout = max(spec.timeout, 60.0)
        self.max_bytes = spec.max_bytes
        parts = urlsplit(repo)
        if parts.scheme in ("http", "https"):
            if not parts.hostname:
                raise InvalidRequestError(f"settings.repository {repo!r} has no host")
            if parts.username or parts.password:
                raise InvalidRequestError("settings.repository: put a token in the credentials, not in the URL")
            self.local = False
            self.repository = repo
            self._screen()
        elif os.path.isabs(repo):
            roots = tuple(os.path.realpath(r) for r in spec.roots)
            if not roots:
                raise InvalidRequestError(f"no repository on this server's disk may be a source: an administrator "
                                          f"allows folders with {ROOTS_SETTING}")
            if not _inside(os.path.realpath(repo), roots):
                raise InvalidRequestError(f"settings.repository {repo!r} is outside the folders sources may read "
                                          f"({ROOTS_SETTING})")
            self.local = True
            self.repository = repo
        else:
            raise InvalidRequestError(f"settings.repository must be an http(s) URL or an absolute path, not {repo!r}")
        self._clone: Path | None = None
        self._commit = ""

    def _screen(self) -> None:
        screen_url(self.policy, self.repository, "settings.repository")

    def settings(self) -> dict[str, Any]:
        return {"repository": self.repository, "branch": self.branch, "paths": self.paths}

    # --- git ---

    def _env(self, home: Path) -> dict[str, str]:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "GIT_TERMINAL_PROMPT": "0",
               "GIT_CONFIG_NOSYSTEM": "1", "GIT_ASKPASS": "/bin/false", "LC_ALL": "C"}
        settings = [("protocol.allow", "never"), ("protocol.https.allow", "always"),
                    ("protocol.http.allow", "always"), ("http.followRedirects", "false")]
        if self.local:
            settings += [("protocol.file.allow", "always"), ("safe.directory", "*")]
        if self.token:
            basic = base64.b64encode(f"x-access-token:{self.token}".encode()).decode()
            settings.append(("http.extraHeader", f"Authorization: Basic {basic}"))
        env["GIT_CONFIG_COUNT"] = str(len(settings))
        for i, (key, value) in enumerate(settings):
            env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = key, value
        return env

    def _git(self, *args: str, cwd: Path | None = None) -> str:
        home = self._home()
        try:
            done = subprocess.run(["git", *args], cwd=cwd, env=self._env(home), capture_output=True, text=True,
                                  timeout=self.timeout, check=False)
        except subprocess.TimeoutExpired:
            raise SourceError(f"git {args[0]} took more than {self.timeout:.0f} s", transient=True) from None
        if done.returncode != 0:
            message = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
            if self.token:
                message = message.replace(self.token, "***")
            transient = any(w in message.lower() for w in ("timed out", "could not resolve", "503", "502",
                                                           "connection reset", "unable to access"))
            raise SourceError(f"git {args[0]}: {message}", transient=transient)
        return done.stdout

    def _home(self) -> Path:
        if self._clone is None:
            self._clone = Path(tempfile.mkdtemp(prefix="ragloom-git-"))
        return self._clone

    def _fetch(self) -> Path:
        """A fresh shallow, blob-less clone of the branch; the folder of its git directory."""
        home = self._home()
        target = home / "repo.git"
        shutil.rmtree(target, ignore_errors=True)
        source = Path(self.repository).as_uri() if self.local else self.repository
        args = ["clone", "--bare", "--depth", "1", "--filter=blob:none", "--no-tags", "--single-branch"]
        if self.branch:
            args += ["--branch", self.branch]
        self._git(*args, "--", source, str(target))
        self._commit = self._git("rev-parse", "HEAD", cwd=target).strip()
        return target

    # --- the protocol ---

    def check(self) -> str:
        self._fetch()
        return f"{self.repository} {self.branch or '(default branch)'} at {self._commit[:12]}"

    def problems(self) -> list[str]:
        """A tree is read whole or not at all."""
        return []

    def _url(self, path: str) -> str:
        if self.local:
            return f"{Path(self.repository).as_uri()}#{path}"
        base = self.repository.removesuffix("/").removesuffix(".git")
        return f"{base}/blob/{self._commit}/{path}"

    def list_items(self) -> Iterator[Item]:
        if not self.local:
            self._screen()
        repo = self._fetch()
        for line in self._git("ls-tree", "-r", "-l", "--full-tree", "HEAD", cwd=repo).splitlines():
            found = TREE_LINE.match(line)
            if found is None:
                continue  # a submodule (commit) or a symbolic link is no document
            blob, size, path = found.group(1), int(found.group(2)), found.group(3)
            if path.startswith('"'):
                continue  # a name git had to quote (control characters)
            if self.paths and not any(path == p.rstrip("/") or path.startswith(p.rstrip("/") + "/")
                                      for p in self.paths):
                continue
            yield Item(id=path, token=blob, name=posixpath.basename(path), title=posixpath.basename(path), path=path,
                       url=self._url(path), size=size,
                       metadata={"commit": self._commit, "branch": self.branch, "blob": blob})

    def read(self, item: Item) -> Iterator[bytes]:
        if self._clone is None or not (self._clone / "repo.git").exists():
            raise SourceError("read before the repository was listed")
        if not re.fullmatch(r"[0-9a-f]{40,64}", item.token):
            raise SourceError(f"{item.id}: not a blob of this repository")
        if item.size is not None and item.size > self.max_bytes:
            raise SourceError(f"{item.id} is larger than {self.max_bytes} bytes")
        repo = self._clone / "repo.git"
        proc = subprocess.Popen(["git", "cat-file", "blob", item.token], cwd=repo, env=self._env(self._clone),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None
        stdout = proc.stdout
        try:
            yield from bounded(iter(lambda: stdout.read(READ_CHUNK), b""), self.max_bytes, item.id)
        finally:
            proc.stdout.close()
            if proc.poll() is None:
                proc.kill()
            status = proc.wait(self.timeout)
        if status != 0:
            raise SourceError(f"git cat-file {item.id}: exit status {status}", transient=True)

    def close(self) -> None:
        if self._clone is not None:
            shutil.rmtree(self._clone, ignore_errors=True)
            self._clone = None
