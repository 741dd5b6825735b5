"""The CLI's local mode builds only the part of the API a request needs (``ragloom.api.local``), and
answers exactly as the whole app does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from fastapi.testclient import TestClient

from ragloom.api import local
from ragloom.api.app import API_MODULES, create_app
from ragloom.context import Context
from ragloom.service.accounts import identity

ROUTES_FILE = Path(local.__file__).with_name("routes.py")


def test_the_route_table_is_the_modules_routes() -> None:
    assert ROUTES_FILE.read_text(encoding="utf-8") == local.route_table_source(), (
        "ragloom/api/routes.py is out of date: run `make openapi`")


def test_every_route_is_served_by_its_own_module_or_the_whole_app() -> None:
    declared = list(local.declared_routes())
    assert {module for module, _, _ in declared} == set(API_MODULES)
    for module, methods, path in declared:
        concrete = "/api/v1" + path.replace("{", "").replace("}", "").replace(":path", "")
        for method in methods.split(","):
            assert local.owner(method, concrete) in (module, local.WHOLE), (method, path)
    assert local.owner("GET", "/api/v1/datasets") == "datasets"
    assert local.owner("POST", "/api/v1/datasets/ds1/documents") == "documents"
    assert local.owner("GET", "/api/v1/no-such-thing") == local.WHOLE
    assert local.owner("PUT", "/api/v1/datasets") == local.WHOLE  # no module: the whole app says 405
    assert local.owner("GET", "/health") == local.WHOLE


def test_a_request_builds_its_module_only_and_answers_as_the_whole_app(ctx: Context,
                                                                       admin: identity.Bootstrap) -> None:
    app = local.LocalApp(ctx, admin.principal)
    client = TestClient(app, base_url="http://ragloom.local")
    whole = TestClient(create_app(context=ctx, local_principal=admin.principal), base_url="http://ragloom.local")
    created = client.post("/api/v1/datasets", json={"name": "manuals"})
    assert created.status_code == 201, created.text
    assert app.built == ["datasets"]
    assert client.get("/api/v1/datasets").json() == whole.get("/api/v1/datasets").json()
    for method, path in (("GET", "/api/v1/no-such-thing"), ("PUT", "/api/v1/datasets"),
                         ("GET", "/api/v1/datasets/nope")):
        mine, theirs = client.request(method, path), whole.request(method, path)
        assert (mine.status_code, mine.json()) == (theirs.status_code, theirs.json()), (method, path)
    assert app.built == ["datasets", local.WHOLE]


def test_a_local_command_imports_the_modules_it_uses(tmp_path: Path) -> None:
    probe = ("import sys; from ragloom.cli import main; sys.argv = ['ragloom', '--home', sys.argv[1], 'kb', "
             "'list']; main()\n")
    check = ("import atexit, sys\natexit.register(lambda: sys.stderr.write('LOADED ' + ' '.join(sorted("
             "m for m in sys.modules if m.startswith('ragloom.api.'))) + '\\n'))\n")
    proc = subprocess.run([sys.executable, "-c", check + probe, str(tmp_path / "home")], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    loaded = set(proc.stderr.split("LOADED ", 1)[1].split())
    assert "ragloom.api.datasets" in loaded
    assert not loaded & {"ragloom.api.chats", "ragloom.api.documents", "ragloom.api.openai_compat",
                         "ragloom.api.graph", "ragloom.api.builds"}
