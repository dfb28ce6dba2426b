"""`flask calls run-due` and `flask calls reap`: the cron jobs of deployments without Redis and a worker."""

import click
from flask.cli import AppGroup

from app.db import database

calls_cli = AppGroup("calls", help="Screening calls.")


@calls_cli.command("run-due")
def run_due_command():
    """Place every scheduled attempt whose time has come."""
    from plugins.calls.scheduling import run_due_calls

    with database.connection_context():
        count = run_due_calls()
    click.echo(f"{count} scheduled call(s) run")


@calls_cli.command("reap")
def reap_command():
    """Fail calls stuck ringing, in progress, or queued and never started for longer than HIREKIT_CALL_STALL_SECONDS."""
    from plugins.calls.reaper import reap_stalled_calls

    with database.connection_context():
        count = reap_stalled_calls()
    click.echo(f"{count} stalled call(s) failed")
