"""A tenant alone on an idle server is never refused for concurrency: under gunicorn as deployed (2
workers x 4 threads, the default cap of 2 requests in progress per worker), 16 connections of one
tenant reading one job all get their answers, none a 429."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from tests.factories import job_body

# the fixture: the app under gunicorn, 2 workers
from tests.test_fault_drills import gunicorn_server  # noqa: F401

pytestmark = pytest.mark.slow

CONNECTIONS = 16
REQUESTS_EACH = 40


def test_sixteen_connections_of_a_tenant_alone_get_no_429(gunicorn_server, tenant_a):  # noqa: F811
    base, _ = gunicorn_server(
        HIREKIT_WEB_THREADS="4",
        HIREKIT_TENANT_MAX_IN_FLIGHT="0",
        HIREKIT_RATE_LIMIT="1000000/minute",
    )
    created = requests.post(
        f"{base}/v1/jobs", json=job_body(source_id="alone"), headers=tenant_a.headers, timeout=30
    )
    assert created.status_code == 201
    url = f"{base}/v1/jobs/{created.json()['id']}"

    def read_many(_) -> Counter:
        statuses = Counter()
        with requests.Session() as session:
            for _ in range(REQUESTS_EACH):
                statuses[session.get(url, headers=tenant_a.headers, timeout=60).status_code] += 1
        return statuses

    with ThreadPoolExecutor(CONNECTIONS) as pool:
        statuses = sum(pool.map(read_many, range(CONNECTIONS)), Counter())
    assert statuses == {200: CONNECTIONS * REQUESTS_EACH}, statuses
