"""Prometheus multiprocess files do not pile up: gunicorn marks an exited worker dead, and the web
unit clears the files of processes that are gone before it starts."""

import os
import runpy
import subprocess
from pathlib import Path
from types import SimpleNamespace

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
CLEAR = DEPLOY / "clear-prometheus-multiproc.sh"


def dead_pid() -> int:
    finished = subprocess.Popen(["true"])
    finished.wait()
    return finished.pid


def test_gunicorn_marks_an_exited_worker_dead(tmp_path, monkeypatch):
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    pid = dead_pid()
    (tmp_path / f"gauge_livesum_{pid}.db").write_bytes(b"")
    (tmp_path / f"gauge_liveall_{pid}.db").write_bytes(b"")
    runpy.run_path(str(DEPLOY / "gunicorn.conf.py"))["child_exit"](
        server=None, worker=SimpleNamespace(pid=pid)
    )
    assert list(tmp_path.iterdir()) == []


def test_start_clears_dead_processes_files_and_keeps_live_ones(tmp_path):
    gone, alive = dead_pid(), os.getpid()
    for name in (
        f"counter_{gone}.db",
        f"histogram_{gone}.db",
        f"counter_{alive}.db",
        f"gauge_all_{alive}.db",
    ):
        (tmp_path / name).write_bytes(b"")
    subprocess.run([str(CLEAR), str(tmp_path)], check=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"counter_{alive}.db",
        f"gauge_all_{alive}.db",
    ]


def test_web_unit_clears_its_metrics_directory_before_gunicorn_starts():
    lines = (DEPLOY / "systemd" / "hirekit-web.service").read_text().splitlines()
    assert "Environment=PROMETHEUS_MULTIPROC_DIR=/run/hirekit/metrics" in lines
    start_pre = [line for line in lines if line.startswith("ExecStartPre=")]
    # first, before migrations
    assert start_pre[0] == f"ExecStartPre=/opt/hirekit/deploy/{CLEAR.name} /run/hirekit/metrics"
