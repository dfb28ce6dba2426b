"""deploy/gunicorn.conf.py: the hooks a worker runs once it has loaded the app, and where the
control socket lives."""

import gc
import runpy
import socket
from pathlib import Path

import pytest

from app.config import INSTANCE_DIR
from tests.gunicorn_process import gunicorn
from tests.waiting import wait_until

CONF = Path(__file__).resolve().parent.parent / "deploy" / "gunicorn.conf.py"


def test_a_worker_freezes_the_loaded_app_out_of_full_collections():
    settings = runpy.run_path(str(CONF))
    gc.unfreeze()
    try:
        settings["post_worker_init"](worker=None)
        # the test process's modules, as a worker's app would be
        assert gc.get_freeze_count() > 10_000
        assert gc.get_count()[0] < 100  # collected first, so nothing about to be garbage is frozen
    finally:
        gc.unfreeze()


def test_the_control_socket_lives_in_the_instance_directory(monkeypatch):
    """gunicorn's default control socket is one path per user ($XDG_RUNTIME_DIR/gunicorn.ctl or
    ~/.gunicorn/gunicorn.ctl), shared by every instance that user runs; here each instance has its
    own, or none."""
    monkeypatch.delenv("HIREKIT_CONTROL_SOCKET", raising=False)
    settings = runpy.run_path(str(CONF))
    assert settings["control_socket"] == str(INSTANCE_DIR / "gunicorn.ctl")
    assert not settings["control_socket_disable"] and settings["control_socket_mode"] == 0o600
    monkeypatch.setenv("HIREKIT_CONTROL_SOCKET", "off")
    assert runpy.run_path(str(CONF))["control_socket_disable"]
    monkeypatch.setenv("HIREKIT_CONTROL_SOCKET", "/run/hirekit/gunicorn.ctl")
    assert runpy.run_path(str(CONF))["control_socket"] == "/run/hirekit/gunicorn.ctl"


def answers(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX) as sock:
        try:
            sock.connect(str(path))
            return True
        except OSError:
            return False


@pytest.mark.slow
def test_a_second_instance_neither_takes_over_nor_deletes_the_first_ones_control_socket(tmp_path):
    home = tmp_path / "home"  # where gunicorn's default would put the socket
    first, second = tmp_path / "one", tmp_path / "two"

    def environment(instance: Path) -> dict[str, str]:
        return {
            "HOME": str(home),
            "XDG_RUNTIME_DIR": "",
            "HIREKIT_INSTANCE_DIR": str(instance),
            "HIREKIT_PLUGINS": "jobs",
            "HIREKIT_DATABASE_URL": f"sqlite:///{instance / 'hirekit.sqlite3'}",
            "HIREKIT_ACCESS_LOG": "",
        }

    with gunicorn(environment(first)):
        with gunicorn(environment(second)):
            # the master opens its control socket in a thread started after the workers, which may
            # answer HTTP first
            for instance in (first, second):
                wait_until(
                    lambda: answers(instance / "gunicorn.ctl"),
                    15,
                    f"{instance.name}'s control socket",
                )
        assert not (second / "gunicorn.ctl").exists()  # the second instance cleaned up its own
        assert answers(first / "gunicorn.ctl")  # and left the first one's alone
    assert not (home / ".gunicorn").exists()
