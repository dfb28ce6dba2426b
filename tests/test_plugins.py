"""The plugin registry: HIREKIT_PLUGINS picks families; unknown names and missing needs stop
start-up."""

import pytest

from app import create_app
from app.plugins import PluginError
from tests.factories import job_body


def test_disabled_family_routes_answer_404(make_app, make_tenant):
    app = make_app(PLUGINS=["jobs"])
    tenant = make_tenant("solo")
    client = app.test_client()
    assert client.post("/v1/jobs", json=job_body(), headers=tenant.headers).status_code == 201
    response = client.get(
        "/v1/jobs/00000000-0000-4000-8000-000000000000/scheduling", headers=tenant.headers
    )
    assert response.status_code == 404
    assert response.json["error"]["type"] == "not_found"


def test_unknown_plugin_fails_start_up_naming_it(base_config):
    with pytest.raises(PluginError, match="'nonsense'"):
        create_app({**base_config, "PLUGINS": ["jobs", "nonsense"]})


def test_missing_need_fails_start_up_naming_it(base_config):
    with pytest.raises(PluginError, match="'scheduling' needs 'jobs'"):
        create_app({**base_config, "PLUGINS": ["scheduling"]})


def test_plugins_from_environment_string(base_config, monkeypatch):
    monkeypatch.setenv("HIREKIT_PLUGINS", "jobs, scheduling")
    config = {k: v for k, v in base_config.items()}
    app = create_app(config)
    assert sorted(app.extensions["hirekit_plugins"]) == ["events", "jobs", "scheduling", "tenant"]


def test_every_family_is_enabled_by_default(app):
    from app.plugins import available, core

    assert list(app.extensions["hirekit_plugins"]) == [*core(), *available()]
    assert {"jobs", "scheduling"} <= set(available())


def test_tenant_and_event_feed_answer_whatever_is_selected(make_app, make_tenant):
    """/v1/tenant and /v1/events are core plugins: on with any selection, even one that names
    neither."""
    app = make_app(PLUGINS=["jobs"])
    tenant = make_tenant("core")
    client = app.test_client()
    assert client.get("/v1/tenant", headers=tenant.headers).json["id"] == "core"
    feed = client.get("/v1/events", headers=tenant.headers)
    assert feed.status_code == 200 and feed.json["data"] == []
    assert client.get("/v1/tenant").status_code == 401
    assert client.get("/v1/events").status_code == 401


def test_event_types_are_the_enabled_families_declarations(make_app, make_tenant):
    """A family that is off emits nothing: its event types are neither filtered on nor emitted."""
    from app.data import events
    from app.data.db import database

    app = make_app(PLUGINS=["jobs", "candidates", "applications"])
    tenant = make_tenant("few")
    client = app.test_client()
    declared = ["application_activty", "candidate.consent"]
    assert list(app.extensions["hirekit_event_types"]) == declared
    feed = client.get("/v1/events?type=application_activty", headers=tenant.headers)
    assert feed.status_code == 200
    refused = client.get("/v1/events?type=call_activity", headers=tenant.headers)
    assert refused.status_code == 422
    assert "Must be one of: application_activty, candidate.consent." in str(refused.json)
    with app.app_context(), database.connection_context():
        with pytest.raises(ValueError, match="call_activity"):
            events.emit("few", "call_activity", {"id": "x"})


def test_every_family_on_lists_the_event_types_in_their_published_order(app):
    assert list(app.extensions["hirekit_event_types"]) == [
        "call_activity",
        "application_activty",
        "candidate.deleted",
        "candidate.consent",
    ]


def test_one_event_type_declared_twice_stops_start_up():
    from app.plugins import EventType, Plugin, event_types

    declared = (EventType("thing.changed"),)
    twice = [Plugin(name=name, event_types=declared) for name in ("one", "other")]
    with pytest.raises(PluginError, match="'thing.changed' is declared twice"):
        event_types(twice)


def test_a_worker_serves_the_enabled_families_queues_and_default_unless_configured(
    make_app, base_config, monkeypatch
):
    assert make_app().config["QUEUES"] == ["calls", "webhooks", "default"]
    assert make_app(PLUGINS=["jobs"]).config["QUEUES"] == ["default"]
    assert make_app(PLUGINS=["jobs"], QUEUES=["webhooks"]).config["QUEUES"] == ["webhooks"]
    monkeypatch.setenv("HIREKIT_QUEUES", "calls, default")
    assert create_app({**base_config, "PLUGINS": ["jobs"]}).config["QUEUES"] == ["calls", "default"]
