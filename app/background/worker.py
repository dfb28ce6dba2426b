"""The RQ worker command, one implementation for its three entry points: `flask --app wsgi worker
[QUEUES]...`, `python worker.py [QUEUES]...` and the installed `hirekit-worker [QUEUES]...` console
script (the last two through app.server.console_scripts, which builds the app: the app's CLI imports
this module, so it must not import the app).

The worker, and nothing else, starts the periodic passes (reapers) its enabled plugins declare for
the queues it serves (`Plugin.tasks`, through app.background.periodic.start_declared), and runs RQ's
scheduler as a standby that takes over a dead worker's scheduler lock
(app.background.worker_scheduler): scheduled work is back within seconds of a restart, not at RQ's
10-minute maintenance pass.
"""

from __future__ import annotations

import itertools
import logging
import time

import click
from flask import current_app
from flask.cli import with_appcontext

WORKER_CLASSES = {
    # jobs run in this process: no fork per job, hundreds of jobs a second
    "simple": "rq.worker.SimpleWorker",
    "fork": "rq.worker.Worker",  # a forked horse per job: isolation at the cost of throughput
    "spawn": "rq.worker.SpawnWorker",
}


class WorkerRefused(click.ClickException):
    """The worker cannot start as configured: one `Error:` line on stderr, exit status 2."""

    exit_code = 2


def worker_options(command):
    """The arguments every entry point takes."""
    for option in reversed(
        (
            click.argument("queues", nargs=-1),
            click.option("--burst", is_flag=True, help="Exit when the queues are empty."),
            click.option(
                "--worker-class",
                type=click.Choice(sorted(WORKER_CLASSES)),
                default=None,
                help="RQ worker class (default: HIREKIT_WORKER_CLASS).",
            ),
            click.option(
                "--no-scheduler",
                is_flag=True,
                help="Do not run RQ's scheduler for enqueue_in/enqueue_at jobs.",
            ),
        )
    ):
        command = option(command)
    return command


def run_worker(
    app, queues: tuple[str, ...], burst: bool, worker_class: str | None, no_scheduler: bool
) -> None:
    """Serve `queues` (default: every configured one) with the app context available to jobs, until
    stopped."""
    from redis import Redis
    from rq import Queue
    from rq.utils import import_attribute

    from app.background import periodic
    from app.security import secret_key
    from app.background.worker_scheduler import with_standby_scheduler

    try:
        secret_key.require(app.config)
    except secret_key.MissingSecretKey as error:
        raise WorkerRefused(str(error)) from error
    if not app.config["REDIS_URL"]:
        raise WorkerRefused(
            "HIREKIT_REDIS_URL is not set: without Redis, background jobs run inline and no worker "
            "is needed."
        )
    names = list(queues) or app.config["QUEUES"]
    unknown = [name for name in names if name not in app.config["QUEUES"]]
    if unknown:
        raise WorkerRefused(
            f"unknown queue(s): {', '.join(unknown)}; configured: {', '.join(app.config['QUEUES'])}"
        )
    _log_like_the_app(app)
    _warn_of_unconfigured_queues(app)
    connection = Redis.from_url(app.config["REDIS_URL"])
    wait_for_redis(connection, app.config["REDIS_URL"], burst=burst)
    worker_type = with_standby_scheduler(
        import_attribute(WORKER_CLASSES[worker_class or app.config["WORKER_CLASS"]])
    )
    with app.app_context():
        periodic.start_declared(app, names)
        worker = worker_type(
            [Queue(name, connection=connection) for name in names], connection=connection
        )
        worker.work(burst=burst, with_scheduler=not no_scheduler)


REDIS_RETRY_SECONDS = (1, 2, 5, 10, 30)  # then every 30 s


def wait_for_redis(connection, url: str, *, burst: bool, sleep=time.sleep) -> None:
    """Return once Redis answers. A worker started before Redis (boot order, a Redis restart) waits
    for it, one log line per attempt, rather than exiting: exiting would only have its supervisor
    restart it, and systemd gives up on a unit that fails five times in ten seconds. A --burst run
    (a script) wants an answer now: it exits with one line."""
    from redis.exceptions import (
        ConnectionError as RedisConnectionError,
        TimeoutError as RedisTimeoutError,
    )

    from app.server.startup_checks import without_password

    log = logging.getLogger("hirekit.worker")
    for attempt in itertools.count():
        try:
            connection.ping()
            if attempt:
                log.info("Redis at %s answers: starting", without_password(url))
            return
        except (RedisConnectionError, RedisTimeoutError) as error:
            reason = " ".join(str(error).split()).rstrip(".")
            if burst:
                raise WorkerRefused(
                    f"Redis at {without_password(url)} is not reachable ({reason}); check "
                    "HIREKIT_REDIS_URL and that Redis is running"
                ) from None
            delay = REDIS_RETRY_SECONDS[min(attempt, len(REDIS_RETRY_SECONDS) - 1)]
            log.warning(
                "Redis at %s is not reachable (%s): waiting for it, next try in %d s (check "
                "HIREKIT_REDIS_URL "
                "and that Redis is running; stop with Ctrl-C or SIGTERM)",
                without_password(url),
                reason,
                delay,
            )
            sleep(delay)


def _warn_of_unconfigured_queues(app) -> None:
    """A family whose queue (`Plugin.tasks.queues`) HIREKIT_QUEUES leaves out cannot enqueue its
    jobs: say so at start."""
    log = logging.getLogger("hirekit.worker")
    for plugin in app.extensions["hirekit_plugins"].values():
        missing = [name for name in plugin.tasks.queues if name not in app.config["QUEUES"]]
        if missing:
            log.warning(
                "the %s family's jobs go to queue(s) %s, which HIREKIT_QUEUES (%s) does not list: "
                "enqueuing "
                "them fails",
                plugin.name,
                ", ".join(missing),
                ", ".join(app.config["QUEUES"]),
            )


def _log_like_the_app(app) -> None:
    """RQ's and the libraries' records in the app's format (JSON lines in UTC by default) on the
    root logger; the app's `hirekit` logger keeps its own handler and stops propagating, so no line
    is written twice."""
    from app.server.observability import JsonFormatter

    handler = logging.StreamHandler()
    if app.config["LOG_FORMAT"] == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    logging.basicConfig(level=app.config["LOG_LEVEL"], handlers=[handler])
    logging.getLogger("hirekit").propagate = False


@click.command("worker")
@worker_options
@with_appcontext
def worker_command(**options):
    """Run an RQ worker on QUEUES (default: every configured queue) with this app."""
    run_worker(current_app._get_current_object(), **options)
