"""gunicorn settings for Hirekit (`gunicorn -c deploy/gunicorn.conf.py wsgi:app`), overridable by
HIREKIT_* variables.

Worker class: app.server.gthread_worker.HeadDeadlineThreadWorker, gunicorn's gthread with slow
clients kept off the threads. Each worker serves HIREKIT_WEB_THREADS requests at once on threads.
Measured by tests/test_slowloris.py (2 workers x 4 threads, a normal client asking GET /v1/jobs
meanwhile):
- stock gthread (gunicorn 27): a new connection takes a thread for up to 5 s waiting for its first
  byte, and a started request head is read with no deadline. 8 silent connections delayed the normal
  client 5 s, 100 delayed it 60 s; 8 clients dribbling a header line a second blocked it until they
  stopped (a 60 s client timeout expired).
- HeadDeadlineThreadWorker: heads are gathered by the worker's poller and only a complete head gets
  a thread; a head not complete within HIREKIT_WEB_HEADER_TIMEOUT (default 10 s) is closed (on
  kept-alive connections too). 200 silent or 100 dribbling connections: the normal client's median
  stayed 4 ms, its worst 120 ms.
What gunicorn alone does not withstand: slow bodies (a thread each while the application reads them)
and more open connections than worker_connections (1,000 per worker). nginx in front
(deploy/nginx.conf) buffers whole bodies and bounds header/body time with client_header_timeout /
client_body_timeout, so production sees neither. timeout (HIREKIT_WEB_TIMEOUT, 30 s) restarts a
worker whose main loop stops answering the arbiter, not a slow request.
"""

import gc
import multiprocessing
import os
import sys

from app.server import server_refusals

# HIREKIT_PORT/HIREKIT_WEB_WORKERS, else PORT/WEB_CONCURRENCY
from app.config import INSTANCE_DIR, environment_value

bind = os.environ.get("HIREKIT_BIND", f"127.0.0.1:{environment_value('PORT', default='8000')}")
workers = int(environment_value("WEB_WORKERS", default=str(multiprocessing.cpu_count() * 2 + 1)))
worker_class = os.environ.get(
    "HIREKIT_WORKER_CLASS_WEB", "app.server.gthread_worker.HeadDeadlineThreadWorker"
)
# HIREKIT_WEB_HEADER_TIMEOUT: see app/server/gthread_worker.py
threads = int(os.environ.get("HIREKIT_WEB_THREADS", "4"))
# a request stuck longer than this restarts its worker
timeout = int(os.environ.get("HIREKIT_WEB_TIMEOUT", "30"))
graceful_timeout = 20
keepalive = 5
# Request heads past these are refused before the app (414 / 431 in the API's JSON error body,
# documented on every operation in /openapi.json): app/server/server_refusals.py holds the values.
limit_request_line = server_refusals.LIMIT_REQUEST_LINE  # 8190 bytes of request line
limit_request_fields = server_refusals.LIMIT_REQUEST_FIELDS  # 100 header fields
limit_request_field_size = server_refusals.LIMIT_REQUEST_FIELD_SIZE  # 8190 bytes per header line
# Worker recycling is off by default: a fast API reaches any fixed count within seconds, and each
# restart costs an app boot. Set HIREKIT_WEB_MAX_REQUESTS (jitter is a tenth of it) only to contain
# a suspected leak.
max_requests = int(os.environ.get("HIREKIT_WEB_MAX_REQUESTS", "0"))
max_requests_jitter = max_requests // 10
# One line per request: the app's `hirekit.request` JSON line (request id, tenant, route, status,
# duration). gunicorn's access line would repeat it, so it is off unless HIREKIT_ACCESS_LOG names a
# destination ("-" for stdout, or a file).
accesslog = os.environ.get("HIREKIT_ACCESS_LOG", "") or None
access_log_format = (
    '{"time":"%(t)s","remote":"%(h)s","method":"%(m)s","path":"%(U)s","query":"%(q)s","status":%(s)s,'
    '"bytes":%(B)s,"duration_ms":%(M)s,"request_id":"%({x-request-id}o)s","user_agent":"%(a)s"}'
)
# an api_key in a URL is [redacted] in the access log
logger_class = "app.server.observability.RedactingGunicornLogger"
errorlog = "-"
loglevel = os.environ.get("HIREKIT_LOG_LEVEL", "info").lower()
# gunicorn's own messages (boot, worker exits, timeouts) in the app's JSON format with UTC times, on
# stderr; the access line, when on, is already JSON (access_log_format) and is written as it is.
logconfig_dict = {
    "version": 1,
    "disable_existing_loggers": False,
    "root": {"level": "WARNING", "handlers": []},  # the app's `hirekit` logger has its own handler
    "formatters": {
        "json": {"()": "app.server.observability.JsonFormatter"},
        "as_is": {"format": "%(message)s"},
    },
    "handlers": {
        "error_json": {
            "class": "logging.StreamHandler",
            "formatter": "json",
            "stream": "ext://sys.stderr",
        },
        "access": (
            {"class": "logging.StreamHandler", "formatter": "as_is", "stream": "ext://sys.stdout"}
            if accesslog in (None, "-")
            else {"class": "logging.FileHandler", "formatter": "as_is", "filename": accesslog}
        ),
    },
    "loggers": {
        "gunicorn.error": {
            "level": loglevel.upper(),
            "handlers": ["error_json"],
            "propagate": False,
        },
        "gunicorn.access": {
            "level": "INFO",
            "handlers": ["access"] if accesslog else [],
            "propagate": False,
        },
    },
}
forwarded_allow_ips = os.environ.get("HIREKIT_FORWARDED_ALLOW_IPS", "127.0.0.1")
# gunicorn's control socket (gunicornc: worker status, scaling, reload) defaults to one fixed path
# per user ($XDG_RUNTIME_DIR/gunicorn.ctl or ~/.gunicorn/gunicorn.ctl): a second instance of that
# user takes it over and its exit deletes it. Each instance keeps its own under its instance
# directory (HIREKIT_INSTANCE_DIR), mode 0600; HIREKIT_CONTROL_SOCKET names another path, or "off"
# for none.
_control_socket = os.environ.get("HIREKIT_CONTROL_SOCKET", "") or str(INSTANCE_DIR / "gunicorn.ctl")
control_socket_disable = _control_socket == "off"
control_socket = os.path.abspath(_control_socket)
control_socket_mode = 0o600


def on_starting(server):
    """Before any worker forks: a taken port, a missing secret, a misspelt database URL or plugins
    that cannot run together stop the arbiter with one `Error:` line (each worker would otherwise
    print a traceback of its own)."""
    from app.server.startup_checks import before_serving

    before_serving(server)


_relay = None  # the relay process `make run` serves beside gunicorn (HIREKIT_RELAY_EMBEDDED=1)


def when_ready(server):
    """Once the arbiter listens: with HIREKIT_RELAY_EMBEDDED=1 (`make run`), start the relay beside
    it."""
    global _relay
    from plugins.calls.relay import embedded

    _relay = embedded.start(server.log)


def on_exit(server):
    """The arbiter is exiting: stop the relay it started."""
    from plugins.calls.relay import embedded

    embedded.stop(_relay, server.log)


def post_worker_init(worker):
    """Before the worker's request threads start:
    - the heap's growth is bounded (app.server.heap), so the threads share the capped arenas;
    - a thread may hold the GIL at most HIREKIT_WEB_SWITCH_INTERVAL seconds (1 ms; Python's default
      is 5 ms) while another waits: a GET by id gives the GIL up at each of its few socket and
      database calls and waits for it again after each, and behind a thread that computes (a person
      search page of 100 profiles, an MCP batch) each wait was a whole 5 ms interval, which took a 3
      ms GET's p99 past 30 ms (bench/noisy_neighbour.py);
    - what the loaded app holds (about 100,000 objects: modules, schemas, routes) is frozen out of
      the cyclic collector's reach. Otherwise a full collection walks them all every few thousand
      requests: measured under wrk, 18 µs of CPU per request on average, paid as a ~90 ms pause of
      every thread of the worker. Objects created later are collected as usual."""
    from app.server.heap import bound_heap_growth

    bound_heap_growth()
    sys.setswitchinterval(float(os.environ.get("HIREKIT_WEB_SWITCH_INTERVAL", "0.001")))
    gc.collect()
    gc.freeze()


def child_exit(server, worker):
    """A worker that exited leaves its metric files in PROMETHEUS_MULTIPROC_DIR: mark it dead, so
    its live gauges leave /metrics (deploy/clear-prometheus-multiproc.sh removes the rest at the
    next start)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)
