"""Prometheus metrics at /metrics (off by default, behind its own bearer token): requests, latency,
queue depth, webhook outcomes."""

from __future__ import annotations

import hmac
import os
import time

from flask import Blueprint, Response, current_app, g, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily

from app.security import limits
from app.errors import ApiError

REQUESTS = Counter("hirekit_http_requests_total", "HTTP requests", ["route", "method", "status"])
LATENCY = Histogram(
    "hirekit_http_request_duration_seconds",
    "HTTP request latency",
    ["route", "method"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
WEBHOOK_DELIVERIES = Counter(
    "hirekit_webhook_deliveries_total", "Webhook delivery attempts by outcome", ["outcome"]
)

blp = Blueprint("metrics", __name__)


def record_webhook_delivery(outcome: str) -> None:
    """Called by webhook delivery: outcome is delivered, retrying, failed or disabled."""
    WEBHOOK_DELIVERIES.labels(outcome=outcome).inc()


class QueueDepthCollector:
    """Asks Redis for each RQ queue's length at scrape time."""

    def __init__(self, app):
        self.app = app

    def collect(self):
        family = GaugeMetricFamily(
            "hirekit_queue_depth", "Jobs waiting per RQ queue", labels=["queue"]
        )
        for name, depth in self.app.extensions["hirekit_queue"].depths().items():
            family.add_metric([name], depth)
        yield family


@blp.get("/metrics")
def metrics():
    expected = current_app.config["METRICS_TOKEN"]
    header = request.headers.get("Authorization", "")
    if not expected or not hmac.compare_digest(header.encode(), f"Bearer {expected}".encode()):
        raise ApiError(
            401,
            "Metrics need the metrics token: Authorization: Bearer <HIREKIT_METRICS_TOKEN>.",
            headers={"WWW-Authenticate": 'Bearer realm="hirekit-metrics"'},
        )
    registry = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.MultiProcessCollector(registry)
    else:
        for collector in (REQUESTS, LATENCY, WEBHOOK_DELIVERIES):
            registry.register(collector)
    registry.register(QueueDepthCollector(current_app._get_current_object()))
    return Response(generate_latest(registry), mimetype=CONTENT_TYPE_LATEST)


def init_app(app) -> None:
    """Mount /metrics and count every request, when HIREKIT_METRICS_ENABLED is set."""
    if not app.config["METRICS_ENABLED"]:
        return

    @app.after_request
    def _observe(response):
        route = request.url_rule.rule if request.url_rule else "unmatched"
        if route != "/metrics":
            REQUESTS.labels(
                route=route, method=request.method, status=str(response.status_code)
            ).inc()
            started = g.get("started_at")  # set for every request by app.server.observability
            if started is not None:
                LATENCY.labels(route=route, method=request.method).observe(
                    time.perf_counter() - started
                )
        return response

    app.register_blueprint(blp)
    limits.exempt(app, blp)
