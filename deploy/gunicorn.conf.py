"""gunicorn settings for Hirekit (`gunicorn -c deploy/gunicorn.conf.py wsgi:app`), overridable by HIREKIT_* variables.

Worker class: gthread. Each worker serves several connections on threads, so one slow client (a slow-loris upload
or a stalled keep-alive) occupies one thread, not a whole worker; nginx in front buffers request bodies as well.
"""

import multiprocessing
import os

bind = os.environ.get("HIREKIT_BIND", f"127.0.0.1:{os.environ.get('HIREKIT_PORT', '8000')}")
workers = int(os.environ.get("HIREKIT_WEB_WORKERS", multiprocessing.cpu_count() * 2 + 1))
worker_class = os.environ.get("HIREKIT_WORKER_CLASS_WEB", "gthread")
threads = int(os.environ.get("HIREKIT_WEB_THREADS", "4"))
timeout = int(os.environ.get("HIREKIT_WEB_TIMEOUT", "30"))  # a request stuck longer than this restarts its worker
graceful_timeout = 20
keepalive = 5
limit_request_line = 8190
limit_request_fields = 100
max_requests = 5000  # recycle workers now and then; jitter keeps them from restarting together
max_requests_jitter = 500
accesslog = os.environ.get("HIREKIT_ACCESS_LOG", "-") or None  # empty: no access log
access_log_format = (
    '{"time":"%(t)s","remote":"%(h)s","method":"%(m)s","path":"%(U)s","query":"%(q)s","status":%(s)s,'
    '"bytes":%(B)s,"duration_ms":%(M)s,"request_id":"%({x-request-id}o)s","user_agent":"%(a)s"}'
)
errorlog = "-"
loglevel = os.environ.get("HIREKIT_LOG_LEVEL", "info").lower()
forwarded_allow_ips = os.environ.get("HIREKIT_FORWARDED_ALLOW_IPS", "127.0.0.1")
