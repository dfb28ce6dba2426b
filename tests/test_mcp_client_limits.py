"""The official MCP SDK client meets the person limit on the sourcing server as a JSON-RPC error it
can read."""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import MCPError

from plugins.mcp.protocol import RATE_LIMITED
from tests.limit_storage import limit_storage  # noqa: F401 (fixture)
from tests.test_mcp_client import MODES, run_session
from tests.test_mcp_sourcing import ENGINEERS, load_people


@pytest.fixture
def app(make_app, limit_storage):  # noqa: F811
    """The app the live server runs, with a person limit of 2 a minute."""
    return make_app(PERSON_RATE_LIMIT="2/minute", REDIS_URL=limit_storage)


@pytest.mark.parametrize("mode", MODES)
def test_the_sdk_client_reads_the_rate_limit_error_of_a_people_tool(app, live_url, tenant_a, mode):
    load_people(app)

    async def steps(mcp):
        answers = [
            await mcp.call_tool("people_search", {"query": ENGINEERS, "size": 1}) for _ in range(2)
        ]
        try:
            await mcp.call_tool("people_search", {"query": ENGINEERS, "size": 1})
        except MCPError as error:
            return answers, error
        return answers, None

    answers, error = run_session(f"{live_url}/mcp/sourcing", tenant_a.key, mode, steps)
    assert [answer.is_error for answer in answers] == [False, False]
    assert error is not None and error.error.code == RATE_LIMITED
    assert (
        "Rate limit exceeded (2 per 1 minute, shared with the person REST routes): retry in"
        in error.error.message
    )
    assert error.error.data["retry_after"] > 0
