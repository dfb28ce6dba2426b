"""The relay as deployed: `hirekit-relay` in its own process, on the test's database, holding a real
conversation with the real dialogue over a WebSocket signed as Twilio signs it, while the API (its
own app here) takes Twilio's REST requests from the provider and its status callbacks."""

from __future__ import annotations

import pytest
import requests
from websockets.exceptions import InvalidStatus

from plugins.calls.models import Call
from tests.gunicorn_process import gunicorn
from tests.ports import free_port
from tests.relay_stand_in import TwilioSocket, deployed_relay, hold_screening, signed_headers
from tests.test_calls_relay import (  # noqa: F401 - fixtures
    ACCOUNT_SID,
    AUTH_TOKEN,
    CALL_SID,
    PUBLIC_BASE,
    answered_call,
    read_call,
    twilio_api,
    wait_for,
)
from tests.webhook_helpers import work_until

pytestmark = pytest.mark.slow


def twilio_settings(twilio_api) -> dict:  # noqa: F811
    return {
        "TELEPHONY": "twilio",
        "TWILIO_ACCOUNT_SID": ACCOUNT_SID,
        "TWILIO_AUTH_TOKEN": AUTH_TOKEN,
        "TWILIO_FROM_NUMBER": "+14155550000",
        "TWILIO_CALLBACK_BASE_URL": PUBLIC_BASE,
        "TWILIO_API_BASE_URL": twilio_api.url_for("/"),
    }


@pytest.fixture
def deployed(make_app, twilio_api, db_url, tmp_path):  # noqa: F811
    """(the API app, the relay process) on one database, configured alike through HIREKIT_*
    variables."""
    with deployed_relay(make_app, twilio_settings(twilio_api), db_url, tmp_path) as running:
        yield running


def test_the_relay_process_holds_a_screening_conversation_to_its_record(deployed, tenant_a):
    app, relay = deployed
    client = app.test_client()
    assert requests.get(f"http://127.0.0.1:{relay.port}/healthz", timeout=5).status_code == 200
    call = answered_call(client, tenant_a)
    socket = TwilioSocket(
        relay.port,
        call["id"],
        headers=signed_headers(PUBLIC_BASE, "twilio", call["id"], AUTH_TOKEN),
    )
    hold_screening(socket, CALL_SID)
    done = wait_for(
        lambda: (
            (record := read_call(client, tenant_a, call["id"]))["status"] == "completed" and record
        )
    )
    assert done["end_reason"] == "completed"
    assert [answer["value"] for answer in done["answers"]][:2] == [6, True]
    assert done["transcript"][-1]["speaker"] == "agent" and done["duration_seconds"] is not None


def test_with_redis_the_relay_writes_the_end_and_a_worker_completes_the_call(
    make_app,
    twilio_api,  # noqa: F811
    db_url,
    tmp_path,
    redis_url,
    tenant_a,
):
    """As deployed with Redis: the relay writes the conversation turn by turn and its end; the
    call's status, assessment and event are a worker's to make, so no relay turn waits on them."""
    settings = {**twilio_settings(twilio_api), "REDIS_URL": redis_url}
    with deployed_relay(make_app, settings, db_url, tmp_path) as (app, relay):
        client = app.test_client()

        def status_of(call_id):
            return Call.get_by_id(call_id).status

        def place(call):
            work_until(app, lambda: Call.get_by_id(call["id"]).dialled_at is not None)

        call = answered_call(client, tenant_a, place=place)
        socket = TwilioSocket(
            relay.port,
            call["id"],
            headers=signed_headers(PUBLIC_BASE, "twilio", call["id"], AUTH_TOKEN),
        )
        socket.setup(CALL_SID)
        socket.agent_turn()
        socket.say("Yes, this is Jane.")
        socket.agent_turn()
        # the turns reach the record while the call goes on (written behind them)
        live = wait_for(
            lambda: (
                len(read_call(client, tenant_a, call["id"])["transcript"]) >= 3
                and read_call(client, tenant_a, call["id"])
            )
        )
        assert live["status"] == "in_progress" and live["end_reason"] is None
        heard = live["transcript"][1]
        assert (heard["speaker"], heard["text"]) == ("candidate", "Yes, this is Jane.")
        socket.close()
        ended = wait_for(
            lambda: (record := read_call(client, tenant_a, call["id"]))["end_reason"] and record
        )
        assert ended["status"] == "in_progress"  # nobody has run the completion yet
        work_until(app, lambda: status_of(call["id"]) == "failed")
        done = read_call(client, tenant_a, call["id"])
        assert done["end_reason"] == "hung_up" and done["ended_at"] is not None
        assert done["error"] == "the call ended before the screening finished"


def test_the_relay_process_refuses_an_unsigned_socket(deployed, tenant_a):
    app, relay = deployed
    call = answered_call(app.test_client(), tenant_a)
    with pytest.raises(InvalidStatus) as refused:
        TwilioSocket(relay.port, call["id"])
    assert refused.value.response.status_code == 403


def test_gunicorn_starts_the_relay_beside_it_and_stops_it_when_asked_to_embed_it(db_url, tmp_path):
    """`make run`'s embedded default: HIREKIT_RELAY_EMBEDDED=1 and one command serves the API and
    the relay."""
    relay_port = free_port()
    env = {
        "HIREKIT_DATABASE_URL": db_url,
        "HIREKIT_INSTANCE_DIR": str(tmp_path),
        "HIREKIT_RELAY_EMBEDDED": "1",
        "HIREKIT_RELAY_PORT": str(relay_port),
        "HIREKIT_CONTROL_SOCKET": "off",
    }
    with gunicorn(env) as (process, base, _port):
        assert requests.get(f"{base}/healthz", timeout=5).status_code == 200
        relay_health = wait_for(
            lambda: _answer(f"http://127.0.0.1:{relay_port}/healthz"), timeout=60
        )
        assert relay_health == 200
    wait_for(lambda: _answer(f"http://127.0.0.1:{relay_port}/healthz") is None, timeout=30)


def _answer(url: str) -> int | None:
    try:
        return requests.get(url, timeout=2).status_code
    except requests.RequestException:
        return None
