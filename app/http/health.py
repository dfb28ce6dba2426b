"""Liveness (/healthz) and readiness (/readyz: database, Redis and search when configured) for load
balancers.

A check that raises NotRequired reports its dependency's state in the body without failing
readiness: a dependency this deployment does not need (an empty person dataset when
HIREKIT_PERSON_DATASET_REQUIRED is off)."""

from __future__ import annotations

import marshmallow as ma
from flask import current_app
from flask.views import MethodView

from app.http.api import Blueprint
from app.data.db import database

blp = Blueprint("health", __name__, description="Process and dependency health", auth=None)


class HealthSchema(ma.Schema):
    status = ma.fields.String(required=True)
    checks = ma.fields.Dict(keys=ma.fields.String(), values=ma.fields.String())


READINESS_CHECKS = []


class NotRequired(Exception):
    """Raised by a readiness check whose dependency is down or empty but not required here: `state`
    goes in the body and readiness holds."""

    def __init__(self, state: str):
        super().__init__(state)
        self.state = state


def readiness_check(name):
    """Register a dependency check: a callable that raises when the dependency is down."""

    def decorator(func):
        READINESS_CHECKS.append((name, func))
        return func

    return decorator


@readiness_check("database")
def _database():
    database.execute_sql("SELECT 1")


@readiness_check("redis")
def _redis():
    if current_app.config["REDIS_URL"]:
        from app.background.queue import get_queue

        get_queue().connection.ping()


@blp.route("/healthz")
class Healthz(MethodView):
    @blp.response(200, HealthSchema)
    @blp.doc(operationId="healthz")
    def get(self):
        """The process is alive"""
        return {"status": "ok"}


@blp.route("/readyz")
class Readyz(MethodView):
    @blp.response(200, HealthSchema)
    @blp.alt_response(503, schema=HealthSchema, description="A dependency is down")
    @blp.doc(operationId="readyz")
    def get(self):
        """Database, Redis and the search backend answer

        503 when one is down. The person dataset counts only where HIREKIT_PERSON_DATASET_REQUIRED
        is on; otherwise its state is reported (`search`: `ok`, `empty (not required)`, `down:
        <reason> (not required)`) and readiness holds."""
        return readiness()


def readiness():
    """Each readiness check's state; 503 with Retry-After when a required dependency is down."""
    checks, down = {}, []
    for name, check in READINESS_CHECKS + current_app.extensions.get("hirekit_readiness", []):
        try:
            checks[name] = check() or "ok"
        except NotRequired as optional:
            checks[name] = optional.state
        except Exception as exc:  # noqa: BLE001 - any failure means not ready
            checks[name] = f"down: {type(exc).__name__}"
            down.append(name)
    if down:
        return (
            {"status": f"unavailable: {', '.join(down)}", "checks": checks},
            503,
            {"Retry-After": "5"},
        )
    return {"status": "ok", "checks": checks}
