"""Which dataset and vendor serve a request: the production configuration or the sandbox's
(HIREKIT_SANDBOX_*), built once per app."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from flask import current_app

from plugins.person.backends import DatasetEmpty, DatasetUnavailable, SearchBackend
from plugins.person.enrich import EnrichVendor, VendorUnavailable

EXTENSION = "hirekit_person"


@dataclass(frozen=True)
class DatasetSettings:
    """One side's settings (production or sandbox), read from app.config."""

    label: str
    backend: str
    index_dir: str
    es_url: str
    es_index: str
    os_url: str
    os_index: str
    vendor: str
    vendor_url: str
    vendor_key: str


def settings_for(config, sandbox: bool) -> DatasetSettings:
    if not sandbox:
        return DatasetSettings(
            "production",
            config["SEARCH_BACKEND"],
            config["SEARCH_INDEX"],
            config["ELASTICSEARCH_URL"],
            config["ELASTICSEARCH_INDEX"],
            config["OPENSEARCH_URL"],
            config["OPENSEARCH_INDEX"],
            config["ENRICH_VENDOR"],
            config["ENRICH_URL"],
            config["ENRICH_API_KEY"],
        )
    index_dir = config["SANDBOX_SEARCH_INDEX"] or str(
        Path(config["SEARCH_INDEX"]).parent / "sandbox"
    )
    # The sandbox never falls back to the production upstream: its URL is its own or nothing.
    vendor_url = config["SANDBOX_ENRICH_URL"] or config.get("ENRICH_SANDBOX_URL", "")
    return DatasetSettings(
        "sandbox",
        config["SANDBOX_SEARCH_BACKEND"],
        index_dir,
        config["SANDBOX_ELASTICSEARCH_URL"],
        config["SANDBOX_ELASTICSEARCH_INDEX"],
        config["SANDBOX_OPENSEARCH_URL"],
        config["SANDBOX_OPENSEARCH_INDEX"],
        config["SANDBOX_ENRICH_VENDOR"],
        vendor_url,
        config["SANDBOX_ENRICH_API_KEY"],
    )


def build_backend(config, sandbox: bool = False) -> SearchBackend | None:
    """The configured search backend, or None when the dataset is switched off (`none`)."""
    settings = settings_for(config, sandbox)
    return _chosen(
        "search backend",
        settings.backend,
        {
            "embedded": lambda: _embedded_backend(config, settings),
            "elasticsearch": lambda: _elasticsearch_backend(config, settings),
            "opensearch": lambda: _opensearch_backend(config, settings),
        },
    )


def build_vendor(
    config, backend: SearchBackend | None, sandbox: bool = False
) -> EnrichVendor | None:
    """The configured enrichment vendor, or None when switched off or missing what it reads from."""
    settings = settings_for(config, sandbox)
    return _chosen(
        "enrichment vendor",
        settings.vendor,
        {
            "local": lambda: _local_vendor(backend),
            "http": lambda: _http_vendor(config, settings),
        },
    )


def _chosen(what: str, setting: str | None, builders: dict[str, Callable[[], object]]):
    """Build what `setting` names (case-insensitive) from `builders`; `none` (or no setting) is
    None, and anything else a start-up error naming the choices."""
    kind = (setting or "none").lower()
    if kind == "none":
        return None
    if kind not in builders:
        raise ValueError(f"unknown {what} {setting!r}: use {', '.join(builders)} or none")
    return builders[kind]()


# The builders import their module when chosen, so a deployment pays only for the backend and vendor
# it uses.
def _embedded_backend(config, settings: DatasetSettings) -> SearchBackend:
    from plugins.person.backends.embedded import EmbeddedBackend

    return EmbeddedBackend(
        settings.index_dir,
        search_threads=int(config["PERSON_SEARCH_THREADS"]),
        fanout_min_docs=int(config["PERSON_SEARCH_THREADS_MIN_PROFILES"]),
    )


def _elasticsearch_backend(config, settings: DatasetSettings) -> SearchBackend | None:
    if not settings.es_url:
        return None
    from plugins.person.backends.elasticsearch import ElasticsearchBackend

    return ElasticsearchBackend.from_config(config, settings.es_url, settings.es_index)


def _opensearch_backend(config, settings: DatasetSettings) -> SearchBackend | None:
    if not settings.os_url:
        return None
    from plugins.person.backends.opensearch import OpenSearchBackend

    return OpenSearchBackend.from_config(config, settings.os_url, settings.os_index)


def _local_vendor(backend: SearchBackend | None) -> EnrichVendor | None:
    if backend is None:
        return None
    from plugins.person.enrich.local import LocalVendor

    return LocalVendor(backend)


def _http_vendor(config, settings: DatasetSettings) -> EnrichVendor | None:
    if not settings.vendor_url:
        return None
    from plugins.person.enrich.http import HttpVendor

    return HttpVendor.from_config(config, settings.vendor_url, settings.vendor_key)


class PersonSources:
    """The backend and vendor of one side, built at start-up (validating the settings) and shared by
    requests."""

    def __init__(self, config, sandbox: bool):
        self.sandbox = sandbox
        self.label = "sandbox" if sandbox else "production"
        self._backend = build_backend(config, sandbox)
        self._vendor = build_vendor(config, self._backend, sandbox)

    def backend(self) -> SearchBackend:
        if self._backend is None:
            raise DatasetUnavailable(
                f"no {self.label} dataset is configured (search backend is `none` or has no URL)."
            )
        return self._backend

    def vendor(self) -> EnrichVendor:
        if self._vendor is None:
            raise VendorUnavailable(f"no {self.label} vendor is configured.")
        return self._vendor


def init_app(app) -> None:
    app.extensions[EXTENSION] = {
        False: PersonSources(app.config, False),
        True: PersonSources(app.config, True),
    }


def sources(sandbox: bool = False) -> PersonSources:
    return current_app.extensions[EXTENSION][sandbox]


def check_ready(app) -> str:
    """Readiness of the production dataset: "ok"; "off" when no backend is configured; empty
    (nothing loaded) or down raise, failing readiness when HIREKIT_PERSON_DATASET_REQUIRED is on,
    else reported as not required."""
    from app.http.health import NotRequired

    backend = app.extensions[EXTENSION][False]._backend
    if backend is None:
        return "off"
    try:
        backend.check()
    except DatasetUnavailable as unavailable:
        if app.config["PERSON_DATASET_REQUIRED"]:
            raise
        state = (
            "empty"
            if isinstance(unavailable, DatasetEmpty)
            else f"down: {type(unavailable).__name__}"
        )
        raise NotRequired(
            f"{state} (not required: HIREKIT_PERSON_DATASET_REQUIRED is off)"
        ) from unavailable
    return "ok"
