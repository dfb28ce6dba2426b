"""The scale-out drill (tests/drills/scale_out.py) under pytest: ten hosts in network namespaces, an
app host and a worker host killed under load, a key revoked on one host, the rate limit checked
across hosts. It runs where the machine allows it (root, network namespaces, nginx, PostgreSQL's
initdb/postgres, redis-server) and otherwise skips, naming what is missing. About 3-4 minutes."""

import pytest

from tests.drills.scale_out import run_drill, why_not_here

pytestmark = [pytest.mark.drill, pytest.mark.slow]


def test_losing_one_app_host_or_one_worker_host_loses_nothing():
    reason = why_not_here()
    if reason:
        pytest.skip(f"the scale-out drill cannot run here: {reason}")
    report = run_drill()
    assert not report.failures, "\n".join(
        report.lines + ["FAILED: " + failure for failure in report.failures]
    )
