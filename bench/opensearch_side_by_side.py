"""Side by side on one machine and one dataset: the embedded engine against a real OpenSearch node
(deploy/opensearch, one node with a stated heap, at least 4 GiB), in one run. Full load time, the
query mix (bench/person_search.py's QUERIES as page searches, and SCROLLS) in-process and over HTTP
through Hirekit (gunicorn, 2 workers, one server per backend), deep scroll pages against the first
page, disk, and memory (the OpenSearch JVM's RSS, Hirekit's workers'). Both are warmed (every query
run before it is timed). Ratios are embedded / OpenSearch: the target is at most 0.5 for p50 and p95
through Hirekit, and a load at least as fast (load ratio <= 1).

    .venv/bin/python bench/opensearch_side_by_side.py                    # 100,000 profiles, heap 4g
    .venv/bin/python bench/opensearch_side_by_side.py --count 1000000 --heap 6g
    .venv/bin/python bench/opensearch_side_by_side.py --nodes 3  # three JVMs, one replica per shard

With --nodes 3 every node runs on the same machine, so the figures show what a cluster's
coordination and copies cost on one machine's cores, not what three machines would give.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    KeepAliveClient,
    free_port,
    load_average,
    percentile,
    start_gunicorn,
    status_kib,  # noqa: E402
    stop,
    time_calls,
    worker_pids,
)
from bench.person_search import QUERIES, SCROLLS, walk_scroll  # noqa: E402

CACHE = ROOT / "bench" / ".cache"
DEEP = {"query": {"match_all": {}}, "size": 100, "sort": [{"inferred_years_experience": "desc"}]}


def sample_file(count: int, seed: int) -> Path:
    from plugins.person.cli import write_sample

    path = CACHE / f"side-by-side-{count}-{seed}.jsonl"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        write_sample(str(path), count, seed, processes=2)
    return path


def directory_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def stats(values: list[float]) -> tuple[float, float]:
    return percentile(values, 50), percentile(values, 95)


def page_params(body: dict) -> dict:
    """The mix's query as a /v2/person/search/page request (`from` as the page it starts): a page
    search holds no point in time, where every scroll-form search that does not reach its last page
    holds one on a cluster for the keep-alive (OpenSearch allows 300 open at once per node by
    default, search.max_open_pit_context)."""
    params = {key: value for key, value in body.items() if key != "from"}
    size = params.setdefault("size", 10)
    return {**params, "page": body.get("from", 0) // size + 1}


def time_side(name: str, app, client: KeepAliveClient, repeats: int) -> dict:
    """In-process and HTTP timings of the mix on one backend: every query warmed 3 times first."""
    from plugins.person import services

    engine, http = [], []
    with app.app_context():
        for _, body in QUERIES:
            params = page_params(body)
            engine += time_calls(
                lambda: services.people_search_page(dict(params)), repeats, warmup=3
            )
            http += time_calls(
                lambda: client.call("POST", "/v2/person/search/page", params), repeats, warmup=3
            )
        for _, body, pages in SCROLLS:
            engine += walk_scroll(services.people_search, body, pages)
            http += walk_scroll(
                lambda params: client.call("POST", "/v2/person/search", params), body, pages
            )
        first = time_calls(lambda: services.people_search(dict(DEEP)), repeats, warmup=2)
        deep = walk_scroll(services.people_search, DEEP, 100)[-50:]
    return {"engine": engine, "http": http, "first": first, "deep": deep, "name": name}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--heap",
        default="4g",
        help="the OpenSearch node's heap (at least 4g for the stated figures)",
    )
    parser.add_argument("--repeats", type=int, default=5, help="timed runs of each query per side")
    parser.add_argument(
        "--nodes",
        type=int,
        choices=(1, 3),
        default=1,
        help="OpenSearch nodes, each in its own JVM with --heap (3: one replica per shard)",
    )
    args = parser.parse_args()
    os.environ.setdefault("HIREKIT_SECRET_KEY", secrets.token_urlsafe(48))

    from app import create_app
    from app.cli import upgrade_database
    from app.config import DEFAULTS
    from app.data.db import database
    from app.data.tenancy import create_tenant
    from deploy.opensearch import OpenSearchCluster
    from plugins.person.backends.embedded import EmbeddedBackend
    from plugins.person.backends.opensearch import OpenSearchBackend
    from plugins.person.loader import load_file

    source = sample_file(args.count, args.seed)
    workdir = Path(tempfile.mkdtemp(prefix="hirekit-side-by-side-"))
    servers = []
    try:
        with OpenSearchCluster(
            args.nodes, heap=args.heap, root=workdir / "opensearch", cluster_name="hirekit-bench"
        ) as cluster:
            print(
                f"{args.count:,} profiles; OpenSearch 2.19.6, {args.nodes} node(s), heap "
                f"{args.heap} "
                f"each; load average {load_average()}"
            )
            index = workdir / "embedded"
            started = time.perf_counter()
            load_file(EmbeddedBackend(str(index)), str(source), replace=True, processes=2)
            embedded_load = time.perf_counter() - started
            opensearch = OpenSearchBackend.from_config(
                {**DEFAULTS, "OPENSEARCH_TIMEOUT": 120.0}, ",".join(cluster.urls), "person"
            )
            started = time.perf_counter()
            load_file(opensearch, str(source), replace=True, processes=2, writer_threads=2)
            if args.nodes > 1:  # the replica is copied before searches are timed
                opensearch.client.put_settings("person", {"index": {"number_of_replicas": 1}})
                cluster.wait_for_health("green")
            opensearch_load = time.perf_counter() - started
            print(
                f"full load: embedded {embedded_load:.1f} s, OpenSearch {opensearch_load:.1f} s "
                f"(embedded / OpenSearch {embedded_load / opensearch_load:.2f}x; target <= 1)"
            )

            database_url = f"sqlite:///{workdir / 'bench.sqlite3'}"
            settings = {
                "embedded": {"SEARCH_INDEX": str(index)},
                "opensearch": {
                    "SEARCH_BACKEND": "opensearch",
                    "OPENSEARCH_URL": ",".join(cluster.urls),
                    "OPENSEARCH_INDEX": "person",
                },
            }
            base = {
                "DATABASE_URL": database_url,
                "RATE_LIMIT_ENABLED": False,
                "LOG_LEVEL": "WARNING",
            }
            apps = {name: create_app({**base, **config}) for name, config in settings.items()}
            with apps["embedded"].app_context():
                upgrade_database()
                with database.connection_context():
                    _, key = create_tenant("side-by-side")
            results, memory = {}, {}
            for name, config in settings.items():
                env = {
                    **os.environ,
                    "HIREKIT_DATABASE_URL": database_url,
                    "HIREKIT_RATE_LIMIT_ENABLED": "false",
                    "HIREKIT_TENANT_MAX_IN_FLIGHT": "-1",
                    "HIREKIT_LOG_LEVEL": "WARNING",
                    "HIREKIT_REDIS_URL": "",
                    "HIREKIT_ACCESS_LOG": "",
                    **{f"HIREKIT_{key_}": str(value) for key_, value in config.items()},
                }
                port = free_port()
                server = start_gunicorn("wsgi:app", port, env, settle_seconds=3)
                servers.append(server)
                client = KeepAliveClient(f"http://127.0.0.1:{port}", {"X-API-Key": key})
                results[name] = time_side(name, apps[name], client, args.repeats)
                memory[name] = [status_kib(pid, "VmRSS") / 1024 for pid in worker_pids(server)]
                stop(server)
                servers.remove(server)

            jvm_rss = sum(status_kib(node.process.pid, "VmRSS") for node in cluster.nodes) / 1024
            disk = {
                "embedded": directory_bytes(index),
                "opensearch": sum(directory_bytes(node.home / "data") for node in cluster.nodes),
            }
            print(
                f"\nthe query mix ({len(QUERIES)} queries x {args.repeats} runs, and "
                f"{len(SCROLLS)} scroll walks), "
                "milliseconds:"
            )
            print(f"{'':28}{'embedded':>22}{'OpenSearch':>22}{'embedded / OpenSearch':>26}")
            for part, label in (
                ("engine", "in-process p50 / p95"),
                ("http", "through Hirekit p50 / p95"),
                ("first", "first page (sorted) p50/95"),
                ("deep", "pages 50-100 p50 / p95"),
            ):
                e50, e95 = stats(results["embedded"][part])
                o50, o95 = stats(results["opensearch"][part])
                print(
                    f"{label:28}{e50:>11.2f} /{e95:>8.2f}{o50:>11.2f} /{o95:>8.2f}"
                    f"{e50 / o50:>15.2f}x /{e95 / o95:>6.2f}x"
                )
            for name in ("embedded", "opensearch"):
                deep50, first50 = stats(results[name]["deep"])[0], stats(results[name]["first"])[0]
                print(f"deep / first page p50, {name}: {deep50 / first50:.2f}x")
            print(
                f"\ndisk: embedded {disk['embedded'] / 2**20:,.0f} MiB, OpenSearch "
                f"{disk['opensearch'] / 2**20:,.0f} "
                "MiB"
                + (
                    " (one copy, no replica)"
                    if args.nodes == 1
                    else " (all nodes: primary and replica)"
                )
            )
            print(
                f"memory: OpenSearch JVM RSS {jvm_rss:,.0f} MiB ({args.nodes} JVM(s), heap "
                f"{args.heap} "
                "each); Hirekit workers RSS "
                f"embedded {', '.join(f'{m:,.0f}' for m in memory['embedded'])} MiB, OpenSearch "
                f"{', '.join(f'{m:,.0f}' for m in memory['opensearch'])} MiB"
            )
            ratio50 = (
                stats(results["embedded"]["http"])[0] / stats(results["opensearch"]["http"])[0]
            )
            ratio95 = (
                stats(results["embedded"]["http"])[1] / stats(results["opensearch"]["http"])[1]
            )
            met = ratio50 <= 0.5 and ratio95 <= 0.5 and embedded_load <= opensearch_load
            print(
                "target (through Hirekit p50 and p95 <= 0.5x, load <= 1x): "
                f"{'met' if met else 'NOT met'} "
                f"(p50 {ratio50:.2f}x, p95 {ratio95:.2f}x, load "
                f"{embedded_load / opensearch_load:.2f}x); load "
                f"average {load_average()}"
            )
    finally:
        for server in servers:
            stop(server)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
