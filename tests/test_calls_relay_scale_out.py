"""More than one relay process, as docs/operating.md tells an operator to run them for more calls:
two `hirekit-relay` processes behind deploy/nginx.conf served by a real nginx, on one database. The
calls' sockets spread over both, a second socket for a call is refused whichever process it reaches,
and when one process dies the calls it held end failed (swept by the other) while the other's calls
talk on to their end."""

from __future__ import annotations

import signal
import ssl

import pytest
import requests
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.nginx_site import MISSING as NGINX_MISSING, nginx_site
from tests.ports import free_port
from tests.relay_stand_in import RelayProcess, TwilioSocket, relay_environment, signed_headers
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
from tests.test_calls_relay_process import twilio_settings

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(NGINX_MISSING), reason=NGINX_MISSING or "nginx present"),
]

CALLS = 4
# a claim not renewed this long belongs to a dead process (HIREKIT_RELAY_QUIET_SECONDS)
QUIET_SECONDS = 2


def live_calls(relay: RelayProcess) -> int:
    return requests.get(f"http://127.0.0.1:{relay.port}/stats", timeout=5).json()["live_calls"]


def test_two_relays_behind_nginx_share_calls_and_the_calls_of_a_dead_one_end(
    make_app,
    twilio_api,  # noqa: F811
    db_url,
    tmp_path,
    tenant_a,
):
    settings = {
        **twilio_settings(twilio_api),
        "RELAY_QUIET_SECONDS": QUIET_SECONDS,
        "RELAY_SWEEP_INTERVAL": 0.5,
    }
    app = make_app(**settings)
    client = app.test_client()
    environment = relay_environment(settings, db_url, tmp_path)
    tls = ssl.create_default_context()
    # nginx's certificate is the test's own
    tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE
    with (
        RelayProcess(free_port(), environment) as first,
        RelayProcess(free_port(), environment) as second,
        nginx_site(tmp_path, free_port(), relay_ports=[first.port, second.port]) as site,
    ):

        def socket_for(call_id: str) -> TwilioSocket:
            headers = signed_headers(PUBLIC_BASE, "twilio", call_id, AUTH_TOKEN)
            return TwilioSocket(site.tls_port, call_id, headers=headers, tls=tls)

        calls = [answered_call(client, tenant_a, phone_no=f"+1415555{n:04d}") for n in range(CALLS)]
        sockets = {}
        for call in calls:
            sockets[call["id"]] = socket_for(call["id"])
            sockets[call["id"]].setup(CALL_SID)
            assert "Am I speaking with" in sockets[call["id"]].agent_turn()
        held = {first: live_calls(first), second: live_calls(second)}
        # nginx spread the sockets over both
        assert sum(held.values()) == CALLS and all(held.values()), held

        # a second socket for a live call: refused by whichever process it reaches
        for call in calls[:2]:
            with pytest.raises(InvalidStatus) as refused:
                socket_for(call["id"])
            assert refused.value.response.status_code == 409

        first.process.send_signal(signal.SIGKILL)  # the host dies: no goodbye, no claim released
        first.process.wait(timeout=10)
        survivors = [call for call in calls if _still_open(sockets[call["id"]])]
        lost = [call for call in calls if call not in survivors]
        assert len(lost) == held[first] and len(survivors) == held[second]

        for call in survivors:  # the other process's calls talk on to their end
            socket = sockets[call["id"]]
            socket.say("Sorry, you have the wrong number.")
            socket.agent_turn()
            assert socket.wait_closed() == 1000
        for call in survivors:
            # the end is written at once; its completion follows from the relay's next hand-on of
            # ended calls
            ended = wait_for(
                lambda: (
                    (record := read_call(client, tenant_a, call["id"]))["status"] != "in_progress"
                    and record
                )
            )
            assert ended["end_reason"] == "wrong_person" and ended["status"] == "completed"
        # the dead process's calls: failed by the survivor's sweep once their claims go quiet
        for call in lost:
            failed = wait_for(
                lambda: (
                    (record := read_call(client, tenant_a, call["id"]))["status"] == "failed"
                    and record
                ),
                timeout=QUIET_SECONDS + 15,
            )
            assert "stopped" in failed["error"]


def _still_open(socket: TwilioSocket) -> bool:
    """Whether the socket still reaches a live relay through nginx: a live one answers a ping; nginx
    closes the socket of a relay that died."""
    try:
        return socket.ws.ping().wait(5)
    except ConnectionClosed:
        return False
