"""Person fixtures: datasets built once per session (8 reference profiles, generated samples) and
apps pointed at them."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from deploy.opensearch import OpenSearchCluster, missing_tools
from plugins.person.backends.embedded import EmbeddedBackend
from plugins.person.cli import write_sample
from plugins.person.loader import load_file

PEOPLE8 = str(Path(__file__).parent / "people8.jsonl")
ELASTICSEARCH_URL = os.environ.get("HIREKIT_TEST_ELASTICSEARCH_URL", "")
# `8` when that cluster is Elasticsearch 8 (deploy/elasticsearch's node):
# HIREKIT_ELASTICSEARCH_COMPATIBLE_WITH for the tests
ELASTICSEARCH_COMPATIBLE_WITH = os.environ.get("HIREKIT_TEST_ELASTICSEARCH_COMPATIBLE_WITH", "")
# a running OpenSearch node to test against; unset, the suite starts one itself (deploy/opensearch)
# when it first needs it
OPENSEARCH_URL = os.environ.get("HIREKIT_TEST_OPENSEARCH_URL", "")
OPENSEARCH_MISSING = [] if OPENSEARCH_URL else missing_tools()
OPENSEARCH_HEAP = "512m"

CLUSTER_BACKENDS = [
    pytest.param(
        "elasticsearch",
        id="elasticsearch",
        marks=pytest.mark.skipif(
            not ELASTICSEARCH_URL,
            reason="Elasticsearch conformance needs HIREKIT_TEST_ELASTICSEARCH_URL (e.g. http://127.0.0.1:9200)",
        ),
    ),
    pytest.param(
        "opensearch",
        id="opensearch",
        marks=pytest.mark.skipif(
            bool(OPENSEARCH_MISSING),
            reason=f"OpenSearch conformance starts a node with Java and Maven: "
            f"{' and '.join(OPENSEARCH_MISSING)} not on PATH",
        ),
    ),
]
SEARCH_BACKENDS = [pytest.param("embedded", id="embedded"), *CLUSTER_BACKENDS]


def elasticsearch_settings(index: str) -> dict:
    """The app settings that point the production dataset at `index` on the
    HIREKIT_TEST_ELASTICSEARCH_URL cluster."""
    return {
        "SEARCH_BACKEND": "elasticsearch",
        "ELASTICSEARCH_URL": ELASTICSEARCH_URL,
        "ELASTICSEARCH_INDEX": index,
        "ELASTICSEARCH_COMPATIBLE_WITH": ELASTICSEARCH_COMPATIBLE_WITH,
    }


@pytest.fixture(scope="session")
def opensearch_url():
    """A real OpenSearch node for this test process: HIREKIT_TEST_OPENSEARCH_URL, or one started
    here (deploy/opensearch, built by Maven on first use) and stopped, its data removed, when the
    session ends."""
    if OPENSEARCH_URL:
        yield OPENSEARCH_URL
        return
    with OpenSearchCluster(
        1, heap=OPENSEARCH_HEAP, cluster_name=f"hirekit-test-{os.getpid()}"
    ) as cluster:
        yield cluster.url


@pytest.fixture
def cluster_config(request):
    """config(kind) -> the app settings that point the production dataset at a new alias on that
    cluster kind; the alias and its indexes are dropped after the test."""
    made = []

    def config(kind: str) -> dict:
        index = f"hirekit-test-{uuid.uuid4().hex[:8]}"
        if kind == "elasticsearch":
            settings = elasticsearch_settings(index)
        elif kind == "opensearch":
            settings = {
                "SEARCH_BACKEND": "opensearch",
                "OPENSEARCH_URL": request.getfixturevalue("opensearch_url"),
                "OPENSEARCH_INDEX": index,
                "OPENSEARCH_TIMEOUT": 60.0,
            }
        else:
            raise ValueError(kind)
        made.append(settings)
        return settings

    yield config
    from plugins.person import datasets
    from app.config import DEFAULTS

    for settings in made:
        datasets.build_backend({**DEFAULTS, **settings}).drop_index()


@pytest.fixture
def backend_client(person_client, cluster_config, tmp_path):
    """make(kind, jsonl=None, **config) -> (client, headers, runner): the person API over `jsonl`
    loaded into the `kind` backend (embedded: an index under tmp_path) through `person load
    --replace`."""

    def make(kind: str, jsonl: str | None = None, **config):
        settings = (
            {"SEARCH_INDEX": str(tmp_path / f"index-{uuid.uuid4().hex[:6]}")}
            if kind == "embedded"
            else cluster_config(kind)
        )
        client, headers = person_client(None, **settings, **config)
        runner = client.application.test_cli_runner()
        if jsonl:
            result = runner.invoke(args=["person", "load", jsonl, "--replace", "--yes"])
            assert result.exit_code == 0, result.output
        return client, headers, runner

    return make


# Modules that test the search engine's answers through the API: the tenant database only
# authenticates their requests, so they run on SQLite alone. The person tests that touch the
# database (enrich usage, suppression, deltas, the CLI, the SDK, key redaction, idempotency) run on
# both databases.
ENGINE_ONLY_MODULES = frozenset(
    {
        "test_embedded_minimum_should_match",
        "test_embedded_sort_plan",
        "test_person_appended_index",
        "test_person_contact_fields",
        "test_person_keyword_range",
        "test_person_known_totals",
        "test_person_search",
        "test_person_search_threads",
        "test_person_sql",
        "test_person_backend_walks",
        "test_person_conformance",
        "test_person_pdl_options",
        "test_person_elasticsearch_contract",
        "test_person_query_budget",
    }
)


def pytest_collection_modifyitems(config, items):
    """Deselect the PostgreSQL runs of ENGINE_ONLY_MODULES; the person tests' apps serve the person
    family alone unless a test marks the families it needs."""
    kept, dropped = [], []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        here = item.path.parent == Path(__file__).parent
        if here and not item.get_closest_marker("plugins"):
            item.add_marker(pytest.mark.plugins("person"))
        engine_only = here and item.path.stem in ENGINE_ONLY_MODULES
        (dropped if engine_only and params.get("db_url") == "postgresql" else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def build_embedded(directory: Path, jsonl: str) -> str:
    report = load_file(
        EmbeddedBackend(str(directory)), jsonl, replace=True, processes=1, writer_threads=1
    )
    assert not report.skipped, report.skipped
    return str(directory)


@pytest.fixture(autouse=True)
def keep_test_priority(monkeypatch):
    """`person load` of a delta lowers its own CPU priority; run in-process, it would lower the test
    run's."""
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
    """An embedded index per dataset name, built once: "people8", "scroll" (1,234 profiles),
    "enrich" (400), "sandbox" (60)."""
    built: dict[str, str] = {}
    sources = {
        "people8": lambda: PEOPLE8,
        "scroll": lambda: sample_file(1234, 11),
        "enrich": lambda: sample_file(400, 21),
        "sandbox": lambda: sample_file(60, 99),
    }

    def index(name: str) -> str:
        if name not in built:
            built[name] = build_embedded(tmp_path_factory.mktemp(f"index-{name}"), sources[name]())
        return built[name]

    return index


@pytest.fixture
def person_app(make_app, embedded_index, tmp_path):
    """make(dataset=None|name, sandbox=None|name, **config): an app whose production and sandbox
    datasets are those indexes."""

    def make(dataset: str | None = None, sandbox: str | None = None, **config):
        settings = {
            "SEARCH_INDEX": embedded_index(dataset) if dataset else str(tmp_path / "no-dataset"),
            "SANDBOX_SEARCH_INDEX": embedded_index(sandbox)
            if sandbox
            else str(tmp_path / "no-sandbox"),
        }
        settings.update(config)
        return make_app(**settings)

    return make


@pytest.fixture(scope="module")
def shared_person_client(tmp_path_factory, migrated_urls, embedded_index):
    """make(dataset=None|name, **config) -> (client, X-API-Key headers), built once per module and
    arguments on a SQLite database of the module's own: for modules whose tests only search a fixed
    dataset, so no test sees another's writes (a new app a test costs more than most searches)."""
    import sqlite3

    from app import create_app
    from app.data.db import database, database_from_url
    from app.data.tenancy import create_tenant
    from tests.conftest import _empty_all_tables, app_settings

    directory = tmp_path_factory.mktemp("shared-person")
    with (
        sqlite3.connect(migrated_urls("sqlite").removeprefix("sqlite:///")) as source,
        sqlite3.connect(directory / "hirekit.sqlite3") as copy,
    ):
        source.backup(copy)
    url = f"sqlite:///{directory / 'hirekit.sqlite3'}"
    _empty_all_tables(url)
    built: dict[str, tuple] = {}

    def make(dataset: str | None = "people8", **config):
        key = repr((dataset, sorted(config.items())))
        if key not in built:
            app = create_app(
                {
                    **app_settings(url, directory),
                    "PLUGINS": ["person"],
                    "SEARCH_INDEX": embedded_index(dataset)
                    if dataset
                    else str(directory / "no-dataset"),
                    "SANDBOX_SEARCH_INDEX": str(directory / "no-sandbox"),
                    **config,
                }
            )
            with app.app_context(), database.connection_context():
                _, api_key = create_tenant(f"person-{os.urandom(3).hex()}")
            built[key] = (app.test_client(), {"X-API-Key": api_key})
        # other modules' apps point the process's database elsewhere
        database.initialize(database_from_url(url))
        return built[key]

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
