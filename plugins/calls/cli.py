"""`flask calls run-due` and `flask calls reap`: the cron jobs of deployments without Redis and a worker."""

from flask.cli import AppGroup

from app.cli import run_sweep

calls_cli = AppGroup("calls", help="Screening calls.")


@calls_cli.command("run-due")
def run_due_command():
    """Place every scheduled attempt whose time has come."""
    from plugins.calls.scheduling import run_due_calls

    run_sweep(run_due_calls, "scheduled call(s) run")


@calls_cli.command("reap")
def reap_command():
    """Fail calls stuck ringing, in progress, or queued and never started for longer than HIREKIT_CALL_STALL_SECONDS."""
    from plugins.calls.reaper import reap_stalled_calls

    run_sweep(reap_stalled_calls, "stalled call(s) failed")
