"""The server secret (HIREKIT_SECRET_KEY): no default in code; a server, a worker or `flask run` started without one
stops with a message saying how to make one; the CLI's other commands run without it; `demo setup` generates one into
the instance directory once (mode 0600), reuses it, and the app reads it from there when the variable is not set."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from app import create_app
from tests.ports import free_port

ROOT = Path(__file__).resolve().parent.parent
HOW_TO_MAKE_ONE = "secrets.token_urlsafe(48)"


def environment_without_secret(tmp_path: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HIREKIT_", "FLASK_"))}
    env.update({"HIREKIT_INSTANCE_DIR": str(tmp_path / "instance"),
                "HIREKIT_DATABASE_URL": f"sqlite:///{tmp_path / 'hirekit.sqlite3'}",
                "HIREKIT_LOG_LEVEL": "WARNING", **extra})
    return env


def run(args: list[str], env: dict, timeout: float = 60) -> subprocess.CompletedProcess:
    """The command's result; a server that starts instead of refusing is stopped and fails the test."""
    process = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)
        output, _ = process.communicate()
        pytest.fail(f"{args} kept running instead of refusing to start:\n{output[-2000:]}")
    return subprocess.CompletedProcess(args, process.returncode, output)


def assert_refused_naming_the_variable(done: subprocess.CompletedProcess) -> None:
    assert done.returncode != 0, done.stdout
    assert "HIREKIT_SECRET_KEY is not set" in done.stdout and HOW_TO_MAKE_ONE in done.stdout, done.stdout[-3000:]


def test_create_app_without_a_secret_refuses_naming_the_variable(base_config, monkeypatch):
    monkeypatch.delenv("HIREKIT_SECRET_KEY", raising=False)
    with pytest.raises(RuntimeError, match="HIREKIT_SECRET_KEY is not set") as refused:
        create_app({**base_config, "SECRET_KEY": ""})
    assert HOW_TO_MAKE_ONE in str(refused.value) and "demo setup" in str(refused.value)


def test_a_comma_separated_secret_signs_with_the_first_and_keeps_the_rest_for_verifying(base_config):
    new, old = "n" * 32, "o" * 40
    app = create_app({**base_config, "SECRET_KEY": f" {new} , {old} ,"})
    assert app.config["SECRET_KEY"] == new
    assert app.config["SECRET_KEY_FALLBACKS"] == [old]


@pytest.mark.parametrize("secret", ["CHANGE-ME", "s" * 31, f"{'n' * 40},short"])
def test_a_short_secret_refuses_to_start(base_config, secret):
    with pytest.raises(RuntimeError, match="at least 32"):
        create_app({**base_config, "SECRET_KEY": secret})


def test_the_app_reads_the_instance_secret_when_the_variable_is_not_set(base_config, tmp_path, monkeypatch):
    monkeypatch.delenv("HIREKIT_SECRET_KEY", raising=False)
    (tmp_path / "secret_key").write_text("g" * 64 + "\n")
    assert create_app({**base_config, "SECRET_KEY": ""}).config["SECRET_KEY"] == "g" * 64
    monkeypatch.setenv("HIREKIT_SECRET_KEY", "e" * 64)
    config = {key: value for key, value in base_config.items() if key != "SECRET_KEY"}
    assert create_app(config).config["SECRET_KEY"] == "e" * 64


@pytest.mark.slow
def test_gunicorn_without_a_secret_refuses_to_start(tmp_path):
    env = environment_without_secret(tmp_path, HIREKIT_WEB_WORKERS="1", HIREKIT_ACCESS_LOG="")
    done = run([str(ROOT / ".venv" / "bin" / "gunicorn"), "-c", "deploy/gunicorn.conf.py", "--bind",
                f"127.0.0.1:{free_port()}", "wsgi:app"], env)
    assert_refused_naming_the_variable(done)


@pytest.mark.slow
def test_the_worker_without_a_secret_refuses_to_start(tmp_path):
    env = environment_without_secret(tmp_path, HIREKIT_REDIS_URL="redis://127.0.0.1:1/0")
    done = run([sys.executable, "worker.py", "--burst"], env)
    assert done.returncode == 2
    assert_refused_naming_the_variable(done)


@pytest.mark.slow
def test_flask_run_without_a_secret_refuses_to_start(tmp_path):
    done = run([sys.executable, "-m", "flask", "--app", "wsgi", "run", "--port", str(free_port())],
               environment_without_secret(tmp_path))
    assert_refused_naming_the_variable(done)


@pytest.mark.slow
def test_db_upgrade_runs_without_a_secret_and_makes_none(tmp_path):
    """Operators migrate before the service starts; a migration signs nothing, so it needs no secret."""
    done = run([sys.executable, "-m", "flask", "--app", "wsgi", "db", "upgrade"], environment_without_secret(tmp_path))
    assert done.returncode == 0, done.stdout
    assert not (tmp_path / "instance" / "secret_key").exists()


@pytest.mark.slow
def test_demo_setup_generates_the_instance_secret_once_and_the_server_uses_it(tmp_path):
    env = environment_without_secret(tmp_path, HIREKIT_PLUGINS="jobs")  # no person family: no sample datasets to build
    secret_file = tmp_path / "instance" / "secret_key"

    first = run([sys.executable, "-m", "flask", "--app", "wsgi", "demo", "setup"], env)
    assert first.returncode == 0, first.stdout
    assert f"server secret: generated {secret_file}" in first.stdout
    generated = secret_file.read_text().strip()
    assert len(generated) >= 64 and stat.S_IMODE(secret_file.stat().st_mode) == 0o600

    again = run([sys.executable, "-m", "flask", "--app", "wsgi", "demo", "setup"], env)
    assert again.returncode == 0, again.stdout
    assert f"server secret: reusing {secret_file}" in again.stdout
    assert secret_file.read_text().strip() == generated

    loaded = run([sys.executable, "-c", "from wsgi import app; print(app.config['SECRET_KEY'])"], env)
    assert loaded.returncode == 0 and loaded.stdout.strip().splitlines()[-1] == generated, loaded.stdout

    configured = run([sys.executable, "-m", "flask", "--app", "wsgi", "demo", "setup"],
                     {**env, "HIREKIT_SECRET_KEY": "o" * 48})
    assert configured.returncode == 0 and "server secret: from HIREKIT_SECRET_KEY" in configured.stdout, configured.stdout
