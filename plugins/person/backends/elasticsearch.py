"""The Elasticsearch adapter of the cluster backend: its calls through the official `elasticsearch`
client (which talks to Elasticsearch only: it refuses answers without Elastic's product header)."""

from __future__ import annotations

import re

from elastic_transport import Urllib3HttpNode
from elasticsearch import ApiError as EsApiError
from elasticsearch import ConnectionTimeout, Elasticsearch, NotFoundError, TransportError, helpers

from plugins.person.backends.cluster import (
    ClusterBackend,
    ClusterClient,
    ClusterError,
    ClusterNotFound,
    ClusterRefused,
    ClusterTimeout,
    ClusterUnreachable,
)


class ElasticsearchClient(ClusterClient):
    """The cluster calls through an `Elasticsearch` client."""

    product = "Elasticsearch"
    helpers = helpers
    setting = "ELASTICSEARCH"

    def __init__(self, client: Elasticsearch):
        self.client = client

    def translate(self, error: Exception) -> ClusterError | None:
        if isinstance(error, ConnectionTimeout):
            return ClusterTimeout(str(error))
        if isinstance(error, NotFoundError):
            return ClusterNotFound(str(error))
        if isinstance(error, EsApiError):
            return ClusterRefused(error.meta.status, _reason(error))
        if isinstance(error, TransportError):
            return ClusterUnreachable(type(error).__name__)
        return None

    def _bounded(self, timeout: float | None) -> Elasticsearch:
        return (
            self.client
            if timeout is None
            else self.client.options(request_timeout=timeout, retry_on_timeout=False)
        )

    def search(self, body: dict, *, index: str | None, timeout: float | None) -> dict:
        with self.translated():
            return (
                self._bounded(timeout)
                .search(
                    allow_partial_search_results=False,
                    **({"index": index} if index else {}),
                    **body,
                )
                .body
            )

    def open_pit(self, index: str, keep_alive: str, *, timeout: float | None) -> str:
        with self.translated():
            return self._bounded(timeout).open_point_in_time(index=index, keep_alive=keep_alive)[
                "id"
            ]

    def close_pit(self, pit_id: str, *, timeout: float) -> None:
        with self.translated():
            self.client.options(request_timeout=timeout, max_retries=0).close_point_in_time(
                id=pit_id
            )

    def mget(self, index: str, ids: list[str]) -> list[dict]:
        with self.translated():
            return self.client.mget(index=index, ids=ids)["docs"]

    def count(self, index: str, query: dict) -> int:
        with self.translated():
            return self.client.count(index=index, query=query)["count"]

    def get_mapping(self, index: str) -> dict:
        with self.translated():
            return self.client.indices.get_mapping(index=index).body

    def index_exists(self, index: str) -> bool:
        with self.translated():
            return bool(self.client.indices.exists(index=index))

    def create_index(
        self, name: str, *, mappings: dict, settings: dict, aliases: dict | None
    ) -> None:
        with self.translated():
            self.client.indices.create(
                index=name,
                mappings=mappings,
                settings=settings,
                **({"aliases": aliases} if aliases else {}),
            )

    def delete_index(self, name: str) -> None:
        with self.translated():
            self.client.indices.delete(index=name, ignore_unavailable=True)

    def alias_exists(self, name: str) -> bool:
        with self.translated():
            return bool(self.client.indices.exists_alias(name=name))

    def aliased_indices(self, name: str) -> list[str]:
        with self.translated():
            return list(self.client.indices.get_alias(name=name).body)

    def update_aliases(self, actions: list[dict]) -> None:
        with self.translated():
            self.client.indices.update_aliases(actions=actions)

    def get_setting(self, index: str, name: str) -> dict:
        with self.translated():
            return self.client.indices.get_settings(index=index, name=name).body

    def put_settings(self, index: str, settings: dict) -> None:
        with self.translated():
            self.client.indices.put_settings(index=index, settings=settings)

    def refresh(self, index: str) -> None:
        with self.translated():
            self.client.indices.refresh(index=index)

    def put_meta(self, index: str, meta: dict) -> None:
        with self.translated():
            self.client.indices.put_mapping(index=index, meta=meta)


_COMPATIBLE_WITH = re.compile(r"compatible-with=\d+")


def compatible_node(version: int) -> type[Urllib3HttpNode]:
    """The client's HTTP node class, asking the cluster for major `version`'s REST API: the client
    sends `Accept` and `Content-Type: application/vnd.elasticsearch+json; compatible-with=<its own
    major>` and offers no option for another, and a cluster answers only its own major and the one
    before (Elasticsearch 8 refuses a 9 client's requests with 400 media_type_header_exception)."""

    class CompatibleNode(Urllib3HttpNode):
        def perform_request(self, method, target, body=None, headers=None, **options):
            if headers:
                headers = headers.copy()
                for name in ("accept", "content-type"):
                    if name in headers:
                        headers[name] = _COMPATIBLE_WITH.sub(
                            f"compatible-with={version}", headers[name]
                        )
            return super().perform_request(method, target, body, headers, **options)

    return CompatibleNode


class ElasticsearchBackend(ClusterBackend):
    """The cluster backend on Elasticsearch (HIREKIT_SEARCH_BACKEND=elasticsearch)."""

    name = "elasticsearch"

    @classmethod
    def from_config(cls, config, url: str, index: str) -> "ElasticsearchBackend":
        options: dict = {
            "request_timeout": float(config["ELASTICSEARCH_TIMEOUT"]),
            "max_retries": 2,
            "retry_on_timeout": True,
        }
        if config.get("ELASTICSEARCH_API_KEY"):
            options["api_key"] = config["ELASTICSEARCH_API_KEY"]
        elif config.get("ELASTICSEARCH_USERNAME"):
            options["basic_auth"] = (
                config["ELASTICSEARCH_USERNAME"],
                config.get("ELASTICSEARCH_PASSWORD", ""),
            )
        if config.get("ELASTICSEARCH_CA_CERTS"):
            options["ca_certs"] = config["ELASTICSEARCH_CA_CERTS"]
        if config.get("ELASTICSEARCH_COMPATIBLE_WITH"):
            options["node_class"] = compatible_node(int(config["ELASTICSEARCH_COMPATIBLE_WITH"]))
        return cls(
            ElasticsearchClient(Elasticsearch(url, **options)),
            index,
            config["ELASTICSEARCH_SCROLL_KEEP_ALIVE"],
        )


def _reason(error: EsApiError) -> str:
    try:
        return error.body["error"]["root_cause"][0]["reason"]
    except (KeyError, IndexError, TypeError):
        return str(error.message)
