"""The server secret (HIREKIT_SECRET_KEY): no default in code; a server, a worker or `flask run`
started without one stops with a message saying how to make one; the CLI's other commands run
without it; `demo setup` generates one into the instance directory once (mode 0600), reuses it, and
the app reads it from there when the variable is not set."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from app import create_app
from tests.ports import free_port

# gunicorn's console script in the environment running the suite (.venv, or make upgrade-check's)
GUNICORN = Path(sys.executable).parent / "gunicorn"

ROOT = Path(__file__).resolve().parent.parent
HOW_TO_MAKE_ONE = "secrets.token_urlsafe(48)"


def environment_without_secret(tmp_path: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HIREKIT_", "FLASK_"))}
    env.update(
        {
            "HIREKIT_INSTANCE_DIR": str(tmp_path / "instance"),
            "HIREKIT_DATABASE_URL": f"sqlite:///{tmp_path / 'hirekit.sqlite3'}",
            "HIREKIT_LOG_LEVEL": "WARNING",
            **extra,
        }
    )
    return env


def run(args: list[str], env: dict, timeout: float = 60) -> subprocess.CompletedProcess:
    """The command's result; a server that starts instead of refusing is stopped and fails the
    test."""
    process = subprocess.Popen(
        args,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)
        output, _ = process.communicate()
        pytest.fail(f"{args} kept running instead of refusing to start:\n{output[-2000:]}")
    return subprocess.CompletedProcess(args, process.returncode, output)


def assert_refused_naming_the_variable(done: subprocess.CompletedProcess) -> None:
    assert done.returncode != 0, done.stdout
    assert "HIREKIT_SECRET_KEY is not set" in done.stdout and HOW_TO_MAKE_ONE in done.stdout, (
        done.stdout[-3000:]
    )


def test_create_app_without_a_secret_refuses_naming_the_variable(base_config, monkeypatch):
    monkeypatch.delenv("HIREKIT_SECRET_KEY", raising=False)
    with pytest.raises(RuntimeError, match="HIREKIT_SECRET_KEY is not set") as refused:
        create_app({**base_config, "SECRET_KEY": ""})
    assert HOW_TO_MAKE_ONE in str(refused.value) and "demo setup" in str(refused.value)


def test_a_comma_separated_secret_signs_with_the_first_and_keeps_the_rest_for_verifying(
    base_config,
):
    new, old = "n" * 32, "o" * 40
    app = create_app({**base_config, "SECRET_KEY": f" {new} , {old} ,"})
    assert app.config["SECRET_KEY"] == new
    assert app.config["SECRET_KEY_FALLBACKS"] == [old]


@pytest.mark.parametrize("secret", ["CHANGE-ME", "s" * 31, f"{'n' * 40},short"])
def test_a_short_secret_refuses_to_start(base_config, secret):
    with pytest.raises(RuntimeError, match="at least 32"):
        create_app({**base_config, "SECRET_KEY": secret})


def test_the_app_reads_the_instance_secret_when_the_variable_is_not_set(
    base_config, tmp_path, monkeypatch
):
    monkeypatch.delenv("HIREKIT_SECRET_KEY", raising=False)
    (tmp_path / "secret_key").write_text("g" * 64 + "\n")
    assert create_app({**base_config, "SECRET_KEY": ""}).config["SECRET_KEY"] == "g" * 64
    monkeypatch.setenv("HIREKIT_SECRET_KEY", "e" * 64)
    config = {key: value for key, value in base_config.items() if key != "SECRET_KEY"}
    assert create_app(config).config["SECRET_KEY"] == "e" * 64


@pytest.mark.slow
def test_gunicorn_without_a_secret_refuses_to_start(tmp_path):
    env = environment_without_secret(tmp_path, HIREKIT_WEB_WORKERS="1", HIREKIT_ACCESS_LOG="")
    done = run(
        [
            str(GUNICORN),
            "-c",
            "deploy/gunicorn.conf.py",
            "--bind",
            f"127.0.0.1:{free_port()}",
            "wsgi:app",
        ],
        env,
    )
    assert_refused_naming_the_variable(done)


@pytest.mark.slow
def test_the_worker_without_a_secret_refuses_to_start(tmp_path):
    env = environment_without_secret(tmp_path, HIREKIT_REDIS_URL="redis://127.0.0.1:1/0")
    done = run([sys.executable, "worker.py", "--burst"], env)
    assert done.returncode == 2
    assert_refused_naming_the_variable(done)


@pytest.mark.slow
def test_flask_run_without_a_secret_refuses_to_start(tmp_path):
    done = run(
        [sys.executable, "-m", "flask", "--app", "wsgi", "run", "--port", str(free_port())],
        environment_without_secret(tmp_path),
    )
    assert_refused_naming_the_variable(done)


@pytest.mark.slow
def test_db_upgrade_runs_without_a_secret_and_makes_none(tmp_path):
    """Operators migrate before the service starts; a migration signs nothing, so it needs no
    secret."""
    done = run(
        [sys.executable, "-m", "flask", "--app", "wsgi", "db", "upgrade"],
        environment_without_secret(tmp_path),
    )
    assert done.returncode == 0, done.stdout
    assert not (tmp_path / "instance" / "secret_key").exists()


@pytest.mark.slow
def test_demo_setup_generates_the_instance_secret_once_and_the_server_uses_it(tmp_path):
    # no person family: no sample datasets to build
    env = environment_without_secret(tmp_path, HIREKIT_PLUGINS="jobs")
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

    loaded = run(
        [sys.executable, "-c", "from wsgi import app; print(app.config['SECRET_KEY'])"], env
    )
    assert loaded.returncode == 0 and loaded.stdout.strip().splitlines()[-1] == generated, (
        loaded.stdout
    )

    configured = run(
        [sys.executable, "-m", "flask", "--app", "wsgi", "demo", "setup"],
        {**env, "HIREKIT_SECRET_KEY": "o" * 48},
    )
    assert (
        configured.returncode == 0 and "server secret: from HIREKIT_SECRET_KEY" in configured.stdout
    ), configured.stdout


# ---- deploy/env.example's sample values
# ------------------------------------------------------------------------------

ENV_EXAMPLE = ROOT / "deploy" / "env.example"
# A setting is a secret when its name says so, or when it is a URL that can carry a password
# (user:password@host).
SECRET_NAME = re.compile(r"(TOKEN|KEY|PASSWORD|SECRET|SID)$")
URL_WITH_PASSWORD = re.compile(r"^[a-z][a-z0-9+.-]*://[^/@:]*:[^/@]*@")


def example_settings() -> dict[str, str]:
    """The variables deploy/env.example sets, with their sample values (empty ones left out)."""
    settings = {}
    for line in ENV_EXAMPLE.read_text().splitlines():
        name, equals, value = line.strip().partition("=")
        if equals and not name.startswith("#") and value:
            settings[name] = value
    return settings


def example_secrets() -> dict[str, str]:
    return {
        name: value
        for name, value in example_settings().items()
        if SECRET_NAME.search(name) or URL_WITH_PASSWORD.match(value)
    }


def test_the_example_file_carries_sample_secrets():
    assert {"HIREKIT_METRICS_TOKEN", "HIREKIT_DATABASE_URL"} <= set(example_secrets())


@pytest.mark.parametrize("variable", sorted(example_secrets()))
def test_each_secret_left_at_its_sample_value_refuses_to_start_naming_it(
    base_config, monkeypatch, variable
):
    """Bearer CHANGE-ME read /metrics on a server started from the example file: every secret the
    file carries, left at its sample value, stops the server with a message naming the variable."""
    setting = variable.removeprefix("HIREKIT_")
    monkeypatch.setenv(variable, example_secrets()[variable])
    with pytest.raises(
        RuntimeError, match=f"{variable} still holds the sample value of deploy/env.example"
    ):
        create_app({key: value for key, value in base_config.items() if key != setting})


@pytest.mark.parametrize(
    "setting, value",
    [
        ("TWILIO_AUTH_TOKEN", "change-me"),
        ("SMTP_PASSWORD", "Change-Me-Later"),
        ("ELASTICSEARCH_URL", "https://elastic:CHANGE-ME@127.0.0.1:9200"),
        ("LLM_API_KEY", "sk-CHANGE-ME"),
    ],
)
def test_the_sample_value_is_refused_in_any_setting_and_case(base_config, setting, value):
    with pytest.raises(RuntimeError, match=f"HIREKIT_{setting} still holds the sample value"):
        create_app({**base_config, setting: value})


def test_with_a_metrics_token_of_ones_own_bearer_change_me_reads_nothing(base_config):
    app = create_app({**base_config, "METRICS_ENABLED": True, "METRICS_TOKEN": "m" * 40})
    assert (
        app.test_client().get("/metrics", headers={"Authorization": "Bearer CHANGE-ME"}).status_code
        == 401
    )


@pytest.mark.slow
def test_gunicorn_and_the_worker_refuse_to_start_from_the_example_file_as_shipped(tmp_path):
    """The example file with only the secret key filled in (it ships empty, which is refused on its
    own)."""
    env = environment_without_secret(
        tmp_path, **example_settings(), HIREKIT_SECRET_KEY="k" * 48, HIREKIT_WEB_WORKERS="1"
    )
    server = run(
        [
            str(GUNICORN),
            "-c",
            "deploy/gunicorn.conf.py",
            "--bind",
            f"127.0.0.1:{free_port()}",
            "wsgi:app",
        ],
        env,
    )
    worker = run([sys.executable, "worker.py", "--burst"], env)
    for done in (server, worker):
        assert done.returncode != 0, done.stdout
        assert (
            "HIREKIT_DATABASE_URL, HIREKIT_METRICS_TOKEN still hold the sample value of "
            "deploy/env.example" in done.stdout
        )
        # the message names the variables, not their values
        assert "postgresql://" not in done.stdout
    assert worker.returncode == 2
