"""The installed console scripts (setup.cfg's entry points): they build the app, so they stand apart
from app.background.worker, which the app's own CLI imports; `hirekit-worker` runs the same command
as `flask --app wsgi worker`."""

from __future__ import annotations

import click

from app import create_app
from app.server.startup_checks import STARTUP_ERRORS
from app.background.worker import WorkerRefused, run_worker, worker_options


@click.command("hirekit-worker")
@worker_options
def hirekit_worker(**options):
    """Run an RQ worker on QUEUES (default: every configured queue), configured by HIREKIT_*
    variables."""
    try:
        app = create_app()
    except STARTUP_ERRORS as error:
        raise WorkerRefused(str(error)) from None
    run_worker(app, **options)
