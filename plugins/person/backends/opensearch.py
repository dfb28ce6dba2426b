"""The OpenSearch adapter of the cluster backend: its calls through the official `opensearch-py`
client, with OpenSearch's own point-in-time API (`POST /<index>/_search/point_in_time?keep_alive=`,
`DELETE /_search/point_in_time` with `pit_id`)."""

from __future__ import annotations

from opensearchpy import ConnectionError as OsConnectionError
from opensearchpy import ConnectionTimeout, NotFoundError, OpenSearch, TransportError, helpers

from plugins.person.backends.cluster import (
    ClusterBackend,
    ClusterClient,
    ClusterError,
    ClusterNotFound,
    ClusterRefused,
    ClusterTimeout,
    ClusterUnreachable,
)


class OpenSearchClient(ClusterClient):
    """The cluster calls through two `OpenSearch` clients on one configuration: `client` retries a
    timed-out request, `bounded` (for requests inside a search's deadline) never does."""

    product = "OpenSearch"
    helpers = helpers
    setting = "OPENSEARCH"

    def __init__(self, client: OpenSearch, bounded: OpenSearch | None = None):
        self.client = client
        self.bounded = bounded or client

    def translate(self, error: Exception) -> ClusterError | None:
        if isinstance(error, ConnectionTimeout):
            return ClusterTimeout(str(error))
        if isinstance(error, OsConnectionError):  # refused, reset, TLS: no HTTP status
            return ClusterUnreachable(type(error).__name__)
        if isinstance(error, NotFoundError):
            return ClusterNotFound(str(error))
        if isinstance(error, TransportError):
            if isinstance(error.status_code, int):
                return ClusterRefused(error.status_code, _reason(error))
            return ClusterUnreachable(type(error).__name__)
        return None

    def _bounded(self, timeout: float | None) -> tuple[OpenSearch, dict]:
        return (
            (self.client, {}) if timeout is None else (self.bounded, {"request_timeout": timeout})
        )

    def search(self, body: dict, *, index: str | None, timeout: float | None) -> dict:
        client, options = self._bounded(timeout)
        with self.translated():
            return client.search(
                body=body, index=index, allow_partial_search_results=False, **options
            )

    def open_pit(self, index: str, keep_alive: str, *, timeout: float | None) -> str:
        client, options = self._bounded(timeout)
        with self.translated():
            return client.create_pit(index=index, keep_alive=keep_alive, **options)["pit_id"]

    def close_pit(self, pit_id: str, *, timeout: float) -> None:
        with self.translated():
            self.bounded.delete_pit(body={"pit_id": [pit_id]}, request_timeout=timeout)

    def mget(self, index: str, ids: list[str]) -> list[dict]:
        with self.translated():
            return self.client.mget(index=index, body={"ids": ids})["docs"]

    def count(self, index: str, query: dict) -> int:
        with self.translated():
            return self.client.count(index=index, body={"query": query})["count"]

    def get_mapping(self, index: str) -> dict:
        with self.translated():
            return self.client.indices.get_mapping(index=index)

    def index_exists(self, index: str) -> bool:
        with self.translated():
            return bool(self.client.indices.exists(index=index))

    def create_index(
        self, name: str, *, mappings: dict, settings: dict, aliases: dict | None
    ) -> None:
        with self.translated():
            self.client.indices.create(
                index=name,
                body={
                    "mappings": mappings,
                    "settings": settings,
                    **({"aliases": aliases} if aliases else {}),
                },
            )

    def delete_index(self, name: str) -> None:
        with self.translated():
            self.client.indices.delete(index=name, ignore_unavailable=True)

    def alias_exists(self, name: str) -> bool:
        with self.translated():
            return bool(self.client.indices.exists_alias(name=name))

    def aliased_indices(self, name: str) -> list[str]:
        with self.translated():
            return list(self.client.indices.get_alias(name=name))

    def update_aliases(self, actions: list[dict]) -> None:
        with self.translated():
            self.client.indices.update_aliases(body={"actions": actions})

    def get_setting(self, index: str, name: str) -> dict:
        with self.translated():
            return self.client.indices.get_settings(index=index, name=name)

    def put_settings(self, index: str, settings: dict) -> None:
        with self.translated():
            self.client.indices.put_settings(index=index, body=settings)

    def refresh(self, index: str) -> None:
        with self.translated():
            self.client.indices.refresh(index=index)

    def put_meta(self, index: str, meta: dict) -> None:
        with self.translated():
            self.client.indices.put_mapping(index=index, body={"_meta": meta})


class OpenSearchBackend(ClusterBackend):
    """The cluster backend on OpenSearch (HIREKIT_SEARCH_BACKEND=opensearch), Amazon OpenSearch
    Service included."""

    name = "opensearch"

    @classmethod
    def from_config(cls, config, url: str, index: str) -> "OpenSearchBackend":
        options: dict = {
            "timeout": float(config["OPENSEARCH_TIMEOUT"]),
            "max_retries": 2,
            "verify_certs": bool(config["OPENSEARCH_VERIFY_CERTS"]),
        }
        if config.get("OPENSEARCH_API_KEY"):
            options["headers"] = {"Authorization": f"ApiKey {config['OPENSEARCH_API_KEY']}"}
        elif config.get("OPENSEARCH_USERNAME"):
            options["http_auth"] = (
                config["OPENSEARCH_USERNAME"],
                config.get("OPENSEARCH_PASSWORD", ""),
            )
        if config.get("OPENSEARCH_CA_CERTS"):
            options["ca_certs"] = config["OPENSEARCH_CA_CERTS"]
        hosts = [
            host.strip() for host in url.split(",") if host.strip()
        ]  # several nodes: a dead one is skipped
        client = OpenSearch(hosts, retry_on_timeout=True, **options)
        bounded = OpenSearch(hosts, retry_on_timeout=False, **options)
        return cls(OpenSearchClient(client, bounded), index, config["OPENSEARCH_SCROLL_KEEP_ALIVE"])


def _reason(error: TransportError) -> str:
    try:
        return error.info["error"]["root_cause"][0]["reason"]
    except (KeyError, IndexError, TypeError):
        return str(error.error)
