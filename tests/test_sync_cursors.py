"""Sync cursors (list cursors and the event feed's next_after): opaque positions that show a tenant
nothing beyond its own records, never expire (a paused sync resumes), and stop working once the key
that signed them is rotated out. (Person scroll tokens do expire:
tests/person/test_scroll_token_security.py.)"""

from __future__ import annotations

import base64
import datetime as dt
import json
import time
import zlib

import pytest
from itsdangerous.timed import TimestampSigner

from app.data.db import database, utcnow
from tests.factories import candidate_body, create_job
from tests.tenant_records import ok

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

OLD_KEY, NEW_KEY = "old-server-secret-" + "o" * 40, "new-server-secret-" + "n" * 40
LONG_AGO = 400 * 86400  # seconds: a sync paused for more than a year


def readable_payload(token: str):
    """What anyone holding the token can read without the secret: itsdangerous' payload is base64
    JSON (zlib'd when that is shorter, marked by a leading dot)."""
    body = token.rsplit(".", 2)[0]
    compressed, body = body.startswith("."), body.lstrip(".")
    raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    return json.loads(zlib.decompress(raw) if compressed else raw)


def leaves(value):
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from leaves(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from leaves(item)
    else:
        yield value


def application_activity(client, tenant, count: int = 1) -> None:
    """`count` applications, each created and then changed: two events apiece."""
    for _ in range(count):
        job = create_job(client, tenant)
        candidate = ok(
            client.post("/v1/candidates", json=candidate_body(), headers=tenant.headers), 201
        )
        application = ok(
            client.post(
                "/v1/applications",
                headers=tenant.headers,
                json={
                    "candidate_source_id": candidate["source_id"],
                    "job_source_id": job["source_id"],
                    "source_application_status": "applied",
                    "application_stage": "ACTIVE",
                },
            ),
            201,
        )
        ok(
            client.patch(
                f"/v1/applications/{application['id']}",
                headers=tenant.headers,
                json={"source_application_status": "screening", "application_stage": "ACTIVE"},
            )
        )


def events_after(client, tenant, after: str | None = None, size: int = 100):
    return client.get(
        "/v1/events",
        query_string={"size": size, **({"after": after} if after else {})},
        headers=tenant.headers,
    )


def test_an_event_position_shows_nothing_but_the_tenants_own_feed(client, tenant_a, tenant_b):
    """The store's sequence is shared by every tenant: a position carrying it told a tenant how busy
    the others were."""
    application_activity(client, tenant_a)
    application_activity(client, tenant_b, count=3)
    application_activity(client, tenant_a)
    walked, after = [], None
    while True:
        page = ok(events_after(client, tenant_a, after, size=1))
        if not page["data"]:
            break
        walked += page["data"]
        after = page["next_after"]
        shown = {
            tenant_a.id,
            *(value for event in page["data"] for value in (event["id"], event["created_at"])),
        }
        assert set(leaves(readable_payload(after))) <= shown, readable_payload(after)
    assert [event["id"] for event in walked] == [
        event["id"] for event in ok(events_after(client, tenant_a))["data"]
    ]
    assert len(walked) == 4


def test_an_event_position_signed_before_positions_named_their_event_still_walks(
    app, client, tenant_a
):
    from app.security import tokens
    from plugins.events.routes import CURSOR_KIND
    from app.data.events import Event

    application_activity(client, tenant_a, count=2)
    feed = ok(events_after(client, tenant_a))["data"]
    with app.app_context(), database.connection_context():
        first = Event.get(Event.event_id == feed[0]["id"])
        # as the previous release signed them
        old_style = tokens.sign(CURSOR_KIND, [tenant_a.id, first.sequence])
    assert ok(events_after(client, tenant_a, old_style))["data"] == feed[1:]


def test_an_event_position_whose_event_was_purged_resumes_at_the_oldest_retained(
    app, client, tenant_a
):
    from app.data import events
    from app.data.events import Event

    application_activity(client, tenant_a, count=2)
    feed = ok(events_after(client, tenant_a))["data"]
    after_second = ok(events_after(client, tenant_a, size=2))["next_after"]
    with app.app_context(), database.connection_context():
        Event.update(created_at=utcnow() - dt.timedelta(days=31)).where(
            Event.event_id.in_([event["id"] for event in feed[:3]])
        ).execute()
        assert events.purge_expired() == 3
    assert ok(events_after(client, tenant_a, after_second))["data"] == feed[3:]


def issued_long_ago(monkeypatch, issue):
    """`issue()` with itsdangerous' clock LONG_AGO seconds back: the tokens it gets carry that
    timestamp."""
    with monkeypatch.context() as clock:
        clock.setattr(TimestampSigner, "get_timestamp", lambda self: int(time.time()) - LONG_AGO)
        return issue()


def invalid_cursor(response, field: str) -> bool:
    assert response.status_code == 400, response.json
    assert (
        response.json["error"]["type"] == "invalid_cursor"
        and field in response.json["error"]["fields"]
    )
    return True


@pytest.fixture
def apps_by_secret(make_app):
    """Three servers on one database: before a rotation (old), during it (new,old) and after it
    (new)."""
    return {
        name: make_app(SECRET_KEY=keys).test_client()
        for name, keys in (("old", OLD_KEY), ("rotating", f"{NEW_KEY},{OLD_KEY}"), ("new", NEW_KEY))
    }


def test_a_list_cursor_never_expires_and_dies_with_its_signing_key(
    apps_by_secret, tenant_a, monkeypatch
):
    client = apps_by_secret["old"]
    for _ in range(3):
        create_job(client, tenant_a)
    walk = ok(client.get("/v1/jobs?cursor=&size=3", headers=tenant_a.headers))["data"]
    cursor = issued_long_ago(
        monkeypatch,
        lambda: ok(client.get("/v1/jobs?cursor=&size=1", headers=tenant_a.headers))["next_cursor"],
    )
    for name in ("old", "rotating"):
        page = ok(
            apps_by_secret[name].get(
                "/v1/jobs", query_string={"cursor": cursor, "size": 5}, headers=tenant_a.headers
            )
        )
        assert page["data"] == walk[1:], name
    gone = apps_by_secret["new"].get(
        "/v1/jobs", query_string={"cursor": cursor, "size": 5}, headers=tenant_a.headers
    )
    assert invalid_cursor(gone, "cursor")


def test_an_event_position_never_expires_and_dies_with_its_signing_key(
    apps_by_secret, tenant_a, monkeypatch
):
    client = apps_by_secret["old"]
    application_activity(client, tenant_a)
    feed = ok(events_after(client, tenant_a))["data"]
    after = issued_long_ago(
        monkeypatch, lambda: ok(events_after(client, tenant_a, size=1))["next_after"]
    )
    for name in ("old", "rotating"):
        assert ok(events_after(apps_by_secret[name], tenant_a, after))["data"] == feed[1:], name
    assert invalid_cursor(events_after(apps_by_secret["new"], tenant_a, after), "after")


def test_openapi_says_sync_cursors_never_expire_and_end_with_their_key(client):
    spec = client.get("/openapi.json").json["paths"]
    descriptions = {
        "cursor": next(p for p in spec["/v1/jobs"]["get"]["parameters"] if p["name"] == "cursor")[
            "description"
        ],
        "after": next(p for p in spec["/v1/events"]["get"]["parameters"] if p["name"] == "after")[
            "description"
        ],
    }
    for name, description in descriptions.items():
        assert "never expires" in description and "rotated out" in description, name
