from pathlib import Path

from ragloom.config import Settings


def test_every_setting_is_documented() -> None:
    missing = [name for name, f in Settings.model_fields.items() if not (f.description or "").strip()]
    assert missing == []


def test_settings_come_from_the_environment(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RAGLOOM_HOME", str(tmp_path / "h"))
    monkeypatch.setenv("RAGLOOM_CHAT_API_KEY", "sk-secret")
    s = Settings(_env_file=None)
    assert s.home == (tmp_path / "h").resolve()
    assert s.db_url == f"sqlite:///{(tmp_path / 'h').resolve() / 'ragloom.db'}"
    assert "sk-secret" not in repr(s) and s.chat_api_key.get_secret_value() == "sk-secret"
