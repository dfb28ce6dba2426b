"""`python -m deploy.opensearch start|stop|status`: a real OpenSearch node (or three) on loopback
for a developer. `python -m deploy.elasticsearch` is the same commands over this module's main()
with Elasticsearch's cluster class."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from deploy.opensearch.cluster import STOP_TIMEOUT, LauncherUnavailable, OpenSearchCluster, build


@dataclass(frozen=True)
class Commands:
    """What differs between the products' commands: the module, the cluster class, where nodes live
    by default and the settings that point Hirekit at the started cluster."""

    module: str
    cluster: type[OpenSearchCluster]
    default_root: Path
    backend: str  # HIREKIT_SEARCH_BACKEND's value, and the prefix of the URL setting
    exports: str = ""  # further settings Hirekit needs for this cluster, `NAME=value ...`


OPENSEARCH = Commands(
    "deploy.opensearch",
    OpenSearchCluster,
    Path(os.environ.get("HIREKIT_OPENSEARCH_DIR", "instance/opensearch")),
    "opensearch",
)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def start(args, commands: Commands = OPENSEARCH) -> int:
    root = Path(args.dir)
    if (root / "cluster.json").exists():
        print(
            f"a cluster is already started under {root}: `python -m {commands.module} stop` first",
            file=sys.stderr,
        )
        return 1
    if args.fresh:
        shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    cluster = commands.cluster(args.nodes, heap=args.heap, root=root)
    began = time.monotonic()
    cluster.start()
    for node in (
        cluster.nodes
    ):  # the JVMs outlive this command: `stop` ends them by the pids in cluster.json
        node.process = None
    print(
        f"green with {args.nodes} node(s) in {time.monotonic() - began:.0f} s; heap {args.heap} "
        "each"
    )
    setting = f"HIREKIT_{commands.backend.upper()}_URL"
    print(
        f"export HIREKIT_SEARCH_BACKEND={commands.backend} {setting}={cluster.url}",
        *([commands.exports] if commands.exports else []),
    )
    return 0


def stop(args, commands: Commands = OPENSEARCH) -> int:
    root = Path(args.dir)
    state_file = root / "cluster.json"
    if not state_file.exists():
        print(f"no cluster started under {root}")
        return 0
    state = json.loads(state_file.read_text())
    pids = [node["pid"] for node in state["nodes"]]
    for pid in pids:
        if _alive(pid):
            os.killpg(pid, signal.SIGTERM)
    ends = time.monotonic() + STOP_TIMEOUT
    while any(_alive(pid) for pid in pids) and time.monotonic() < ends:
        time.sleep(0.5)
    for pid in pids:
        if _alive(pid):
            os.killpg(pid, signal.SIGKILL)
    state_file.unlink()
    if args.clean:
        shutil.rmtree(root, ignore_errors=True)
    print(f"stopped {len(pids)} node(s){' and removed ' + str(root) if args.clean else ''}")
    return 0


def status(args, commands: Commands = OPENSEARCH) -> int:
    state_file = Path(args.dir) / "cluster.json"
    if not state_file.exists():
        print("stopped")
        return 1
    state = json.loads(state_file.read_text())
    for node in state["nodes"]:
        print(f"{node['name']} pid {node['pid']} {'running' if _alive(node['pid']) else 'gone'}")
    print("urls:", " ".join(state["urls"]))
    return 0


def main(argv: list[str] | None = None, commands: Commands = OPENSEARCH) -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {commands.module}",
        description=f"A real {commands.cluster.launcher.product} node (or three) on loopback.",
    )
    subcommands = parser.add_subparsers(dest="command", required=True)
    start_parser = subcommands.add_parser("start", help="build (Maven), start and wait for green")
    start_parser.add_argument("--nodes", type=int, choices=(1, 3), default=1)
    start_parser.add_argument(
        "--heap", default="1g", help="each node's JVM heap (-Xms/-Xmx), e.g. 512m, 4g"
    )
    start_parser.add_argument(
        "--fresh", action="store_true", help="remove the directory's data first"
    )
    stop_parser = subcommands.add_parser("stop", help="stop the nodes a `start` left running")
    stop_parser.add_argument(
        "--clean", action="store_true", help="also remove their data, logs and config"
    )
    subcommands.add_parser("status", help="the started nodes and whether they run")
    subcommands.add_parser(
        "build", help="build the launcher with Maven (offline when ~/.m2 has everything)"
    )
    for sub in subcommands.choices.values():
        sub.add_argument(
            "--dir", default=str(commands.default_root), help="where the nodes' directories live"
        )
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            print(build(commands.cluster.launcher, quiet=False))
            return 0
        return {"start": start, "stop": stop, "status": status}[args.command](args, commands)
    except LauncherUnavailable as error:
        print(error, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
