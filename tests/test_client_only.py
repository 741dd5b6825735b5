"""The client alone: ``pip install ragloom`` (the base dependencies) is the Python SDK and ``ragloom --url``;
everything that serves, stores, parses or embeds is the ``server`` extra.

The tests run the client in a subprocess whose imports of the server extra's packages fail, as if they were
not installed: the modules refused are derived from pyproject.toml (the distributions the server extra
installs that the base dependencies do not, and the top-level modules they provide), never listed by hand.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from ragloom.config import Settings
from tests.live import Live, live_server
from tests.test_api import _keys

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
BASE = list(PROJECT["dependencies"])
SERVER = list(PROJECT["optional-dependencies"]["server"])


def closure(requirements: list[str]) -> set[str]:
    """The distributions (canonical names) that installing ``requirements`` installs: their requirements
    followed through the installed metadata, markers evaluated here (with the extras asked for)."""
    found: dict[str, set[str]] = {}
    todo = [(Requirement(r), {""}) for r in requirements]
    while todo:
        req, extras = todo.pop()
        if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in extras):
            continue
        name, wanted = canonicalize_name(req.name), set(req.extras)
        if name in found and wanted <= found[name]:
            continue
        found.setdefault(name, set()).update(wanted)
        try:
            requires = md.requires(name) or []
        except md.PackageNotFoundError:  # a requirement of another platform or Python
            continue
        todo += [(Requirement(r), {""} | wanted) for r in requires]
    return set(found)


def top_level(distributions: set[str]) -> set[str]:
    """The top-level modules the installed ``distributions`` provide."""
    return {module for module, owners in md.packages_distributions().items()
            if any(canonicalize_name(o) in distributions for o in owners)}


BASE_DISTRIBUTIONS = closure(BASE)
SERVER_ONLY = closure(BASE + SERVER) - BASE_DISTRIBUTIONS
REFUSED = top_level(SERVER_ONLY) - top_level(BASE_DISTRIBUTIONS) - {"ragloom"}

# Run first in the subprocess: a finder in front of every other refuses the modules of REFUSE (a JSON list of
# top-level names), as a missing package does.
GUARD = """
import json, os, sys
from importlib.abc import MetaPathFinder

REFUSE = frozenset(json.loads(os.environ.get("REFUSE", "[]")))

class NotInstalled(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in REFUSE:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

loaded = sorted(m for m in sys.modules if m.partition(".")[0] in REFUSE)
assert not loaded, f"imported before the guard: {loaded}"
sys.meta_path.insert(0, NotInstalled())
"""


def run(code: str, *, refuse: set[str] | None = None, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``code`` in a new interpreter after :data:`GUARD`, with ``src`` first on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGLOOM_") and k != "COLUMNS"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    if refuse is not None:
        env["REFUSE"] = json.dumps(sorted(refuse))
    return subprocess.run([sys.executable, "-c", GUARD + code], capture_output=True, text=True, env=env,
                          input=stdin, timeout=300)


def cli(*args: str) -> str:
    return f"import sys\nfrom ragloom.cli import main\nsys.argv = ['ragloom', *{list(args)!r}]\nmain()\n"


def test_the_refused_modules_are_the_server_extras_and_not_the_clients() -> None:
    assert {"fastapi", "starlette", "sqlalchemy", "alembic", "tantivy", "onnxruntime", "numpy", "psycopg",
            "boto3", "pdfplumber", "pypdfium2", "rapidocr", "jieba", "uvicorn", "mcp"} <= REFUSED
    assert not {"httpx", "pydantic", "pydantic_core", "pydantic_settings", "typer", "rich"} & REFUSED
    base = {canonicalize_name(Requirement(r).name) for r in BASE}
    assert base == {"httpx", "pydantic", "pydantic-settings", "typer", "rich"}
    assert not base & {canonicalize_name(Requirement(r).name) for r in SERVER}  # each pinned once


def test_the_base_dependencies_cover_what_the_client_imports() -> None:
    """With only the base dependencies importable (every other installed package refused), the SDK, the
    CLI's client and the CLI load; every base dependency is among the packages they load."""
    started = run("print(json.dumps(sorted({m.partition('.')[0] for m in sys.modules})))")
    startup = set(json.loads(started.stdout))  # the interpreter's, site's and the environment's .pth hooks
    others = set(md.packages_distributions()) - top_level(BASE_DISTRIBUTIONS) - {"ragloom"} - startup
    assert {"fastapi", "sqlalchemy", "numpy", "click", "packaging"} <= others
    shown = run("import importlib.metadata as md\n"
                "import ragloom.sdk, ragloom.client, ragloom.cli\n"
                "from ragloom.sdk import Ragloom\n"
                "Ragloom('http://127.0.0.1:9', api_key='rl-x').close()\n"
                "owners = md.packages_distributions()\n"
                f"tops = {{m.partition('.')[0] for m in list(sys.modules)}} - set({sorted(startup)!r})\n"
                "print(json.dumps(sorted({d for m in tops for d in owners.get(m, [])})))", refuse=others)
    assert shown.returncode == 0, shown.stderr
    loaded = {canonicalize_name(d) for d in json.loads(shown.stdout)} - {"ragloom"}
    assert loaded <= BASE_DISTRIBUTIONS
    assert {canonicalize_name(Requirement(r).name) for r in BASE} <= loaded, "a base dependency nothing imports"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Live]:
    with live_server(Settings(home=tmp_path / "server", workers=0, _env_file=None), workers=0) as live:
        yield live


@pytest.mark.slow
def test_the_sdk_and_the_cli_work_against_a_server_without_the_server_extra(server: Live) -> None:
    key, _ = _keys(server)
    made = run("from ragloom.sdk import Ragloom\n"
               f"with Ragloom({server.url!r}, api_key={key!r}) as rag:\n"
               "    kb = rag.create_dataset('client-only', description='made without the server extra')\n"
               "    print(kb.model_dump_json())\n"
               "assert not [m for m in sys.modules if m.partition('.')[0] in REFUSE]\n", refuse=REFUSED)
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["name"] == "client-only"

    url = ["--url", server.url, "--api-key", key]
    alone = run(cli(*url, "--json", "kb", "list"), refuse=REFUSED)
    full = run(cli(*url, "--json", "kb", "list"))
    assert alone.returncode == 0, alone.stderr
    assert alone.stdout == full.stdout  # the same JSON, with or without the server extra
    assert [d["name"] for d in json.loads(alone.stdout)["datasets"]] == ["client-only"]
    table = run(cli(*url, "kb", "list"), refuse=REFUSED)
    assert table.returncode == 0 and "client-only" in table.stdout, table.stderr
    config = run(cli(*url, "kb", "create", "bad", "--config", "[1]"), refuse=REFUSED)
    assert config.returncode == 2 and "--config must be a JSON object" in config.stderr, config.stderr


@pytest.mark.parametrize("args", [("kb", "list"), ("--json", "kb", "list"), ("serve",), ("init",)])
def test_local_mode_without_the_server_extra_says_what_to_install(tmp_path: Path, args: tuple[str, ...]) -> None:
    done = run(cli("--home", str(tmp_path / "home"), *args), refuse=REFUSED)
    assert done.returncode == 2, done.stderr
    assert "pip install 'ragloom[server]'" in done.stderr and "Traceback" not in done.stderr, done.stderr
    if "--json" in args:
        shown = json.loads(done.stdout)
        assert shown["error"] == "MissingDependencyError" and "ragloom[server]" in shown["message"]
    else:
        assert done.stdout == ""
    assert not (tmp_path / "home").exists() or args == ("serve",)  # nothing made without the packages
