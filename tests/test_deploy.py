"""The production compose file (deploy/compose.yaml) and its image say only what ragloom understands:
every RAGLOOM_* variable is a setting, the settings they make validate and name registered engines,
and every command the services run is a real command with real options. (No Docker engine runs in
the tests; what the file means to ragloom is checked here, the stack itself on a Docker host.)"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from ragloom.cli import app
from ragloom.config import Settings
from ragloom.docstore.registry import docstores
from ragloom.storage.registry import object_stores

DEPLOY = Path(__file__).parents[1] / "deploy"
VARS = {"POSTGRES_PASSWORD": "pg-secret", "MINIO_PASSWORD": "minio-secret"}


def substitute(value: str) -> str:
    """Compose's ``${NAME:?message}`` and ``$$`` interpolation, from :data:`VARS`."""
    out = re.sub(r"\$\{(\w+)(?::\?[^}]*)?\}", lambda m: VARS[m.group(1)], value)
    return out.replace("$$", "$")


def compose() -> dict[str, Any]:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def ragloom_env(service: dict[str, Any]) -> dict[str, str]:
    env = {k: substitute(str(v)) for k, v in service["environment"].items()}
    for line in (DEPLOY / "ragloom.env.example").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, value = line.partition("=")
            env[key] = value
    return env


def test_every_variable_is_a_setting_and_they_validate(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    services = compose()["services"]
    for name in ("api", "worker"):
        env = ragloom_env(services[name])
        unknown = [k for k in env if k.removeprefix("RAGLOOM_").lower() not in Settings.model_fields]
        assert unknown == [], f"{name}: not settings: {unknown}"
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        settings = Settings(_env_file=None, home=tmp_path)
        assert settings.db_url.startswith("postgresql+psycopg://ragloom:pg-secret@postgres:5432/")
        assert settings.docstore in docstores and settings.object_store in object_stores
        assert settings.s3_secret_access_key is not None
        assert settings.s3_secret_access_key.get_secret_value() == "minio-secret"
        assert settings.secret_key is not None  # one key for every process (provider secrets)


def test_services_run_real_commands() -> None:
    services = compose()["services"]
    runner = CliRunner()
    entry = re.search(r'ENTRYPOINT \["(\w+)"\]', (DEPLOY / "Dockerfile").read_text())
    assert entry and entry.group(1) == "ragloom"
    for name in ("api", "worker"):
        command = services[name]["command"]
        result = runner.invoke(app, [command[0], "--help"], env={"COLUMNS": "200"}, terminal_width=200)
        assert result.exit_code == 0, result.output
        for option in (c for c in command if c.startswith("--")):
            assert option in result.output, f"{name}: {option} is no option of `ragloom {command[0]}`"
    assert services["worker"]["stop_grace_period"]  # time to hand tasks back on `docker compose stop`
    assert "9380:9380" in services["api"]["ports"]
