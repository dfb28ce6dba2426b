"""Losing a node: a three-node OpenSearch cluster (one replica per shard) under a steady search
load, with scroll walks and a delta in flight, has one node SIGKILLed. Every search answers the
right total or a 503 with Retry-After that a retry within the deadline gets past; no walk skips or
repeats a profile; the delta lands whole; the node rejoins. Prints errors, retries and the time to
green; fails on any loss."""

from __future__ import annotations

import threading
import time

import orjson
import pytest

from app.config import DEFAULTS
from app.errors import ApiError
from deploy.opensearch import OpenSearchCluster
from plugins.person.backends import SearchDeadline
from plugins.person.backends.opensearch import OpenSearchBackend
from plugins.person.loader import load_file
from plugins.person.sample import generate
from tests.person.conftest import OPENSEARCH_MISSING

PROFILES, SEED, DELTA = 4000, 61, 400
RENAMED = "drill co"
# seconds a client keeps retrying one request that answers 503 (it honours Retry-After, capped)
RETRY_DEADLINE = 30.0
HEAP = "512m"

pytestmark = [
    pytest.mark.drill,
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(OPENSEARCH_MISSING),
        reason=(
            "the node-loss drill starts OpenSearch with Java and Maven: "
            f"{' and '.join(OPENSEARCH_MISSING)} not on PATH"
        ),
    ),
]


class Tally:
    """What the load saw: answers, 503s retried, wrong answers, failures past the deadline."""

    def __init__(self):
        self.lock = threading.Lock()
        self.answers = self.retries = 0
        self.wrong: list[str] = []
        self.failed: list[str] = []
        self.walks = self.walks_restarted = 0

    def add(self, **counts):
        with self.lock:
            for name, value in counts.items():
                current = getattr(self, name)
                if isinstance(current, list):
                    current.append(value)
                else:
                    setattr(self, name, current + value)


def retried(tally: Tally, call):
    """call() until it answers, retrying a 503 (with Retry-After) for RETRY_DEADLINE seconds;
    anything else raises."""
    ends = time.monotonic() + RETRY_DEADLINE
    while True:
        try:
            return call()
        except ApiError as error:
            if (
                error.status != 503
                or "Retry-After" not in (error.headers or {})
                or time.monotonic() > ends
            ):
                raise
            tally.add(retries=1)
            time.sleep(0.5)


def test_losing_a_node_loses_nothing(tmp_path, capsys):
    people = list(generate(PROFILES, SEED))
    source = tmp_path / "people.jsonl"
    source.write_bytes(b"".join(orjson.dumps(person) + b"\n" for person in people))
    company = people[0]["job_company_name"]
    company_total = sum(person["job_company_name"] == company for person in people)
    renamed_ids = [person["id"] for person in people if person["job_company_name"] != company][
        :DELTA
    ]
    delta = tmp_path / "delta.jsonl"
    delta.write_bytes(
        b"".join(
            orjson.dumps({**person, "job_company_name": RENAMED}) + b"\n"
            for person in people
            if person["id"] in set(renamed_ids)
        )
    )

    with OpenSearchCluster(3, heap=HEAP, cluster_name="hirekit-drill") as cluster:
        config = {**DEFAULTS, "OPENSEARCH_TIMEOUT": 30.0, "OPENSEARCH_SCROLL_KEEP_ALIVE": "2m"}
        backend = OpenSearchBackend.from_config(config, ",".join(cluster.urls), "drill")
        backend.create_index(replace=True)
        assert not load_file(
            backend, str(source), replace=True, processes=1, writer_threads=1
        ).skipped
        backend.client.client.indices.put_settings(
            index="drill", body={"index": {"number_of_replicas": 1}}
        )
        cluster.wait_for_health("green")

        tally, stop = Tally(), threading.Event()

        def searcher():
            while not stop.is_set():
                try:
                    everyone = retried(
                        tally,
                        lambda: backend.search(
                            {"match_all": {}}, size=5, deadline=SearchDeadline(5.0)
                        ),
                    )
                    renamed = retried(
                        tally,
                        lambda: backend.search(
                            {"term": {"job_company_name": RENAMED}},
                            size=1,
                            deadline=SearchDeadline(5.0),
                        ),
                    )
                    theirs = retried(
                        tally,
                        lambda: backend.search(
                            {"term": {"job_company_name": company}},
                            size=1,
                            deadline=SearchDeadline(5.0),
                        ),
                    )
                except ApiError as error:
                    tally.add(failed=f"search: {error.status} {error.message[:120]}")
                    continue
                tally.add(answers=3)
                if everyone.total != PROFILES or len(everyone.hits) != 5:
                    tally.add(wrong=f"match_all total {everyone.total}, {len(everyone.hits)} hits")
                if renamed.total not in (
                    0,
                    DELTA,
                ):  # the delta is published by one refresh: none of it or all
                    tally.add(wrong=f"renamed total {renamed.total}")
                if theirs.total != company_total:  # the delta renames no one of this company
                    tally.add(wrong=f"{company} total {theirs.total}")

        def walker():
            while not stop.is_set():
                seen, cursor = [], None
                try:
                    page = retried(
                        tally,
                        lambda: backend.search(
                            {"match_all": {}}, size=500, scroll=True, sort=[("birth_year", "asc")]
                        ),
                    )
                    while True:
                        seen += [hit["id"] for hit in page.hits]
                        cursor = page.cursor
                        if cursor is None:
                            break
                        page = retried(
                            tally,
                            lambda: backend.search(
                                {"match_all": {}},
                                size=500,
                                cursor=cursor,
                                sort=[("birth_year", "asc")],
                            ),
                        )
                except (
                    ApiError
                ) as error:  # a 400 (the walk's point in time lost with the node): start again
                    if error.status != 400:
                        tally.add(failed=f"walk: {error.status} {error.message[:120]}")
                    tally.add(walks_restarted=1)
                    continue
                tally.add(walks=1)
                if len(seen) != PROFILES or len(set(seen)) != PROFILES:
                    tally.add(wrong=f"walk read {len(seen)} hits, {len(set(seen))} distinct")

        threads = [
            threading.Thread(target=searcher),
            threading.Thread(target=searcher),
            threading.Thread(target=walker),
        ]
        for thread in threads:
            thread.start()
        time.sleep(5)
        delta_outcome: list = []
        loader = threading.Thread(
            target=lambda: delta_outcome.append(_load_delta(backend, str(delta)))
        )
        loader.start()
        time.sleep(1.0)
        manager = _cluster_manager(cluster)
        killed_at = time.monotonic()
        cluster.kill(manager)
        loader.join(timeout=180)
        time.sleep(5)
        cluster.start_node(manager)
        to_green = cluster.wait_for_health("green", timeout=600)
        rejoined = time.monotonic() - killed_at
        time.sleep(3)
        stop.set()
        for thread in threads:
            thread.join(timeout=120)

        final_renamed = backend.count({"term": {"job_company_name": RENAMED}})
        nodes = cluster.health()["number_of_nodes"]
        with capsys.disabled():
            print(
                f"\nnode-loss drill: killed {manager.name} (the cluster manager); {tally.answers} "
                "answers, "
                f"{tally.retries} retries after a 503, {len(tally.failed)} failed past the "
                "deadline, "
                f"{len(tally.wrong)} wrong; {tally.walks} walks whole, {tally.walks_restarted} "
                "restarted; delta "
                f"{delta_outcome}; green with {nodes} nodes {rejoined:.0f} s after the kill "
                f"({to_green:.0f} s "
                "after the restart)"
            )
        assert not tally.wrong, tally.wrong[:5]
        assert not tally.failed, tally.failed[:5]
        assert delta_outcome == ["published"] and final_renamed == DELTA
        assert nodes == 3 and tally.walks >= 1 and tally.answers > 0


def _load_delta(backend, path: str) -> str:
    try:
        report = load_file(
            backend, path, upsert=True, processes=1, writer_threads=1, dataset_version="drill-2"
        )
    except Exception as error:  # the drill fails on it below, naming it
        return f"failed: {type(error).__name__}: {error}"
    return "published" if report.published else f"not published: {report.skipped[:3]}"


def _cluster_manager(cluster: OpenSearchCluster):
    state = cluster.health(params="")
    assert state is not None
    import json
    import urllib.request

    with urllib.request.urlopen(
        f"{cluster.url}/_cat/cluster_manager?format=json", timeout=10
    ) as answer:
        name = json.load(answer)[0]["node"]
    return next(node for node in cluster.nodes if node.name == name)
