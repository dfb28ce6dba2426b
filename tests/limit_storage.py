"""The two places rate-limit counters live, for limiter tests to run on each: this process's memory
and Redis."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["memory", "redis"])
def limit_storage(request) -> str:
    """The REDIS_URL a test app counts in: "" for the in-process memory storage, else a clean Redis
    database (skipped without HIREKIT_TEST_REDIS_URL)."""
    return request.getfixturevalue("redis_url") if request.param == "redis" else ""
