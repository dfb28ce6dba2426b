"""RQ worker entry: `python worker.py [queues...]` runs the configured queues with the app context available to jobs.

The worker, and nothing else, starts the periodic passes (reapers) its enabled plugins declare for the queues it serves
(app.periodic.start_declared), and runs RQ's scheduler as a standby that takes over a dead worker's scheduler lock
(app.worker_scheduler): scheduled work is back within seconds of a restart, not at RQ's 10-minute maintenance pass.
"""

from __future__ import annotations

import argparse
import logging
import sys

WORKER_CLASSES = {
    "simple": "rq.worker.SimpleWorker",  # jobs run in this process: no fork per job, hundreds of jobs a second
    "fork": "rq.worker.Worker",  # a forked horse per job: isolation at the cost of throughput
    "spawn": "rq.worker.SpawnWorker",
}


def main(argv=None) -> int:
    from redis import Redis
    from rq import Queue
    from rq.utils import import_attribute

    from app import create_app, periodic
    from app.secret_key import MissingSecretKey
    from app.worker_scheduler import with_standby_scheduler

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("queues", nargs="*", help="queue names (default: all configured)")
    parser.add_argument("--burst", action="store_true", help="exit when the queues are empty")
    parser.add_argument("--worker-class", default=None, choices=sorted(WORKER_CLASSES))
    parser.add_argument("--no-scheduler", action="store_true", help="do not run RQ's scheduler for enqueue_in/enqueue_at jobs")
    args = parser.parse_args(argv)

    try:
        app = create_app()
    except MissingSecretKey as error:
        print(error, file=sys.stderr)
        return 2
    if not app.config["REDIS_URL"]:
        print("HIREKIT_REDIS_URL is not set: without Redis, background jobs run inline and no worker is needed.", file=sys.stderr)
        return 2
    names = args.queues or app.config["QUEUES"]
    unknown = [n for n in names if n not in app.config["QUEUES"]]
    if unknown:
        print(f"unknown queue(s): {', '.join(unknown)}; configured: {', '.join(app.config['QUEUES'])}", file=sys.stderr)
        return 2
    logging.basicConfig(level=app.config["LOG_LEVEL"], format="%(asctime)s %(levelname)s %(name)s %(message)s")
    connection = Redis.from_url(app.config["REDIS_URL"])
    worker_class = with_standby_scheduler(import_attribute(WORKER_CLASSES[args.worker_class or app.config["WORKER_CLASS"]]))
    with app.app_context():
        periodic.start_declared(app, names)
        worker = worker_class([Queue(name, connection=connection) for name in names], connection=connection)
        worker.work(burst=args.burst, with_scheduler=not args.no_scheduler)
    return 0


if __name__ == "__main__":
    sys.exit(main())
