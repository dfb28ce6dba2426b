"""Configuration precedence: the environment over the HIREKIT_CONFIG file, and a Procfile platform's
DATABASE_URL, REDIS_URL, PORT and WEB_CONCURRENCY honoured when the HIREKIT_ variable is unset (by
the app and deploy/gunicorn.conf.py)."""

import json
import runpy
from pathlib import Path

from app.config import load_config

CONF = Path(__file__).resolve().parent.parent / "deploy" / "gunicorn.conf.py"


def test_environment_wins_over_the_config_file(tmp_path):
    config_file = tmp_path / "hirekit.json"
    config_file.write_text(
        json.dumps({"DATABASE_URL": "sqlite:///from-file.db", "RATE_LIMIT": "9/minute"})
    )
    config = load_config(
        environ={
            "HIREKIT_CONFIG": str(config_file),
            "HIREKIT_DATABASE_URL": "sqlite:///from-env.db",
        }
    )
    assert config["DATABASE_URL"] == "sqlite:///from-env.db"
    # what the environment leaves unset, the file still sets
    assert config["RATE_LIMIT"] == "9/minute"


def test_platform_variables_are_honoured_when_hirekit_ones_are_unset(tmp_path):
    config_file = tmp_path / "hirekit.json"
    config_file.write_text(json.dumps({"REDIS_URL": "redis://file:6379/0"}))
    platform = {
        "DATABASE_URL": "postgres://u:p@db.example:5432/app",
        "REDIS_URL": "redis://platform:6379/1",
        "PORT": "5000",
        "HIREKIT_CONFIG": str(config_file),
    }
    config = load_config(environ=platform)
    assert config["DATABASE_URL"] == "postgres://u:p@db.example:5432/app"
    # the environment, a platform's too, wins over the file
    assert config["REDIS_URL"] == "redis://platform:6379/1"
    assert config["PORT"] == 5000


def test_hirekit_variables_win_over_platform_ones():
    config = load_config(
        environ={
            "DATABASE_URL": "postgres://platform/app",
            "HIREKIT_DATABASE_URL": "sqlite:///mine.db",
            "PORT": "5000",
            "HIREKIT_PORT": "6000",
        }
    )
    assert config["DATABASE_URL"] == "sqlite:///mine.db" and config["PORT"] == 6000


def gunicorn_settings(monkeypatch, **environ):
    for name in ("HIREKIT_PORT", "PORT", "HIREKIT_BIND", "HIREKIT_WEB_WORKERS", "WEB_CONCURRENCY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(CONF))


def test_gunicorn_takes_port_and_web_concurrency_from_the_platform(monkeypatch):
    settings = gunicorn_settings(monkeypatch, PORT="5123", WEB_CONCURRENCY="3")
    assert settings["bind"].endswith(":5123") and settings["workers"] == 3


def test_gunicorn_prefers_hirekit_port_and_workers(monkeypatch):
    settings = gunicorn_settings(
        monkeypatch, PORT="5123", HIREKIT_PORT="8123", WEB_CONCURRENCY="3", HIREKIT_WEB_WORKERS="2"
    )
    assert settings["bind"] == "127.0.0.1:8123" and settings["workers"] == 2
