"""Person fixtures: datasets built once per session (8 reference profiles, generated samples) and apps pointed at them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plugins.person.backends.embedded import EmbeddedBackend
from plugins.person.cli import write_sample
from plugins.person.loader import load_file

PEOPLE8 = str(Path(__file__).parent / "people8.jsonl")
ELASTICSEARCH_URL = os.environ.get("HIREKIT_TEST_ELASTICSEARCH_URL", "")

SEARCH_BACKENDS = [
    pytest.param("embedded", id="embedded"),
    pytest.param("elasticsearch", id="elasticsearch", marks=pytest.mark.skipif(
        not ELASTICSEARCH_URL, reason="Elasticsearch conformance needs HIREKIT_TEST_ELASTICSEARCH_URL (e.g. http://127.0.0.1:9200)")),
]


# Modules that test the search engine's answers through the API: the tenant database only authenticates their requests,
# so they run on SQLite alone. The person tests that touch the database (enrich usage, suppression, deltas, the CLI,
# the SDK, key redaction, idempotency) run on both databases.
ENGINE_ONLY_MODULES = frozenset({
    "test_embedded_minimum_should_match", "test_embedded_sort_plan", "test_person_appended_index", "test_person_contact_fields",
    "test_person_keyword_range", "test_person_known_totals", "test_person_search", "test_person_search_threads", "test_person_sql",
})


def pytest_collection_modifyitems(config, items):
    """Deselect the PostgreSQL runs of ENGINE_ONLY_MODULES."""
    kept, dropped = [], []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        engine_only = item.path.parent == Path(__file__).parent and item.path.stem in ENGINE_ONLY_MODULES
        (dropped if engine_only and params.get("db_url") == "postgresql" else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def build_embedded(directory: Path, jsonl: str) -> str:
    report = load_file(EmbeddedBackend(str(directory)), jsonl, replace=True, processes=1, writer_threads=1)
    assert not report.skipped, report.skipped
    return str(directory)


@pytest.fixture(autouse=True)
def keep_test_priority(monkeypatch):
    """`person load` of a delta lowers its own CPU priority; run in-process, it would lower the test run's."""
    from plugins.person import cli

    monkeypatch.setattr(cli, "run_in_background", lambda: "left as it was (test)")


@pytest.fixture(scope="session")
def sample_file(tmp_path_factory):
    """Generated profiles written once: make(count, seed) -> path."""
    made: dict[tuple[int, int], str] = {}

    def make(count: int, seed: int) -> str:
        if (count, seed) not in made:
            path = tmp_path_factory.mktemp("samples") / f"sample-{count}-{seed}.jsonl"
            write_sample(str(path), count, seed, processes=1)
            made[(count, seed)] = str(path)
        return made[(count, seed)]

    return make


@pytest.fixture(scope="session")
def embedded_index(tmp_path_factory, sample_file):
    """An embedded index per dataset name, built once: "people8", "scroll" (1,234 profiles), "enrich" (400), "sandbox" (60)."""
    built: dict[str, str] = {}
    sources = {"people8": lambda: PEOPLE8, "scroll": lambda: sample_file(1234, 11), "enrich": lambda: sample_file(400, 21),
               "sandbox": lambda: sample_file(60, 99)}

    def index(name: str) -> str:
        if name not in built:
            built[name] = build_embedded(tmp_path_factory.mktemp(f"index-{name}"), sources[name]())
        return built[name]

    return index


@pytest.fixture
def person_app(make_app, embedded_index, tmp_path):
    """make(dataset=None|name, sandbox=None|name, **config): an app whose production and sandbox datasets are those indexes."""

    def make(dataset: str | None = None, sandbox: str | None = None, **config):
        settings = {
            "SEARCH_INDEX": embedded_index(dataset) if dataset else str(tmp_path / "no-dataset"),
            "SANDBOX_SEARCH_INDEX": embedded_index(sandbox) if sandbox else str(tmp_path / "no-sandbox"),
        }
        settings.update(config)
        return make_app(**settings)

    return make


@pytest.fixture
def person_client(person_app, make_tenant):
    """make(dataset, sandbox=None, **config) -> (client, X-API-Key headers)."""

    def make(dataset: str | None = "people8", sandbox: str | None = None, **config):
        app = person_app(dataset, sandbox, **config)
        client = app.test_client()
        from app.data.db import database
        from app.data.tenancy import create_tenant

        with app.app_context(), database.connection_context():
            _, key = create_tenant(f"person-{os.urandom(3).hex()}")
        return client, {"X-API-Key": key}

    return make
