"""`flask calls run-due` and `flask calls reap`: the cron jobs of deployments without Redis and a
worker."""

import click
from flask.cli import AppGroup

from app.cli import run_sweep
from app.data.db import database

calls_cli = AppGroup("calls", help="Screening calls.")


@calls_cli.command("run-due")
def run_due_command():
    """Send every reminder and place every scheduled attempt whose time has come (reminders
    first)."""
    from plugins.calls.reminders import send_due_reminders
    from plugins.calls.scheduling import run_due_calls

    with database.connection_context():
        sent = send_due_reminders()
        placed = run_due_calls()
    click.echo(f"{placed} scheduled call(s) run, {sent} reminder(s) sent")


@calls_cli.command("reap")
def reap_command():
    """Fail calls stuck ringing, in progress, or queued and never started for longer than
    HIREKIT_CALL_STALL_SECONDS."""
    from plugins.calls.reaper import reap_stalled_calls

    run_sweep(reap_stalled_calls, "stalled call(s) failed")
