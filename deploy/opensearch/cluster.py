"""Build a launcher with Maven, start its nodes as JVMs on loopback, wait for cluster health,
kill, restart, stop. Shared by deploy/opensearch and deploy/elasticsearch: their Java mains take the
same arguments."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

# seconds a cluster may take to turn green (a JVM on a loaded 2-core machine starts slowly)
START_TIMEOUT = 600.0
STOP_TIMEOUT = 60.0  # seconds a node may take to close on SIGTERM before it is killed


@dataclass(frozen=True)
class Launcher:
    """A Maven project whose main class starts one node: `--home --name --http-port --transport-port
    --seed-ports --cluster-managers [--cluster-name] [-Ekey=value ...]`."""

    product: str
    project: Path
    main_class: str

    @property
    def target(self) -> Path:
        return self.project / "target"


OPENSEARCH = Launcher(
    "OpenSearch", Path(__file__).resolve().parent, "io.hirekit.opensearch.LoopbackNode"
)


class LauncherUnavailable(RuntimeError):
    """Java or Maven is absent, or the build failed: no node can be started here."""


def missing_tools() -> list[str]:
    """The tools a node needs that this machine lacks (java, mvn)."""
    return [tool for tool in ("java", "mvn") if shutil.which(tool) is None]


def _sources(launcher: Launcher) -> list[Path]:
    return [launcher.project / "pom.xml", *sorted((launcher.project / "src" / "main").rglob("*"))]


def _built(launcher: Launcher) -> bool:
    stamp = launcher.target / "lib" / ".built"
    if not stamp.exists():
        return False
    built_at = stamp.stat().st_mtime
    return all(path.stat().st_mtime <= built_at for path in _sources(launcher) if path.is_file())


def build(launcher: Launcher = OPENSEARCH, *, quiet: bool = True) -> str:
    """The node's classpath, building the launcher first when its sources changed: Maven offline
    when the local repository has every artifact, else online (Maven Central), so a machine with an
    empty ~/.m2 builds too."""
    missing = missing_tools()
    if missing:
        raise LauncherUnavailable(
            f"{' and '.join(missing)} not found on PATH: install Java 17 and Maven to run "
            f"{launcher.product} (Debian: apt-get install openjdk-17-jdk-headless maven)"
        )
    if not _built(launcher):
        command = ["mvn", "-B", *(["-q"] if quiet else []), "package", "-DskipTests"]
        for offline in (True, False):
            run = subprocess.run(
                [*command[:1], *(["-o"] if offline else []), *command[1:]],
                cwd=launcher.project,
                capture_output=True,
                text=True,
            )
            if run.returncode == 0:
                break
        else:
            raise LauncherUnavailable(
                f"mvn package failed in {launcher.project}:\n{run.stdout[-4000:]}"
                f"{run.stderr[-2000:]}"
            )
        (launcher.target / "lib" / ".built").touch()
    return os.pathsep.join([str(launcher.target / "classes"), str(launcher.target / "lib" / "*")])


def free_ports(count: int) -> list[int]:
    """`count` distinct ports the kernel calls free on 127.0.0.1 now."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


@dataclass
class Node:
    """One node: its name, directory, ports and (while it runs) its JVM."""

    name: str
    home: Path
    http_port: int
    transport_port: int
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, chars: int = 3000) -> str:
        path = self.home / "logs" / "stdout.log"
        return path.read_text(errors="replace")[-chars:] if path.exists() else "(no log)"


class OpenSearchCluster:
    """`nodes` nodes (1 or 3) of `launcher` (OpenSearch; deploy/elasticsearch's subclass:
    Elasticsearch) under `root`, each in its own JVM with `heap`, its own
    config, data and log directories and ports, discovering each other through explicit seed hosts.
    Use as a context manager, or call start() and stop(); stop() removes `root` when the cluster
    created it."""

    launcher = OPENSEARCH

    def __init__(
        self,
        nodes: int = 1,
        *,
        heap: str = "512m",
        root: str | Path | None = None,
        cluster_name: str = "hirekit",
        settings: dict[str, str] | None = None,
        processors: int | None = None,
    ):
        self.owns_root = root is None
        prefix = f"hirekit-{self.launcher.product.lower()}-"
        self.root = Path(root) if root else Path(tempfile.mkdtemp(prefix=prefix))
        self.heap = heap
        self.cluster_name = cluster_name
        self.settings = dict(settings or {})
        if processors:
            self.settings.setdefault("node.processors", str(processors))
        ports = free_ports(2 * nodes)
        self.nodes = [
            Node(
                f"node-{number}",
                self.root / f"node-{number}",
                ports[2 * number],
                ports[2 * number + 1],
            )
            for number in range(nodes)
        ]
        self.classpath: str | None = None

    @property
    def url(self) -> str:
        return self.nodes[0].url

    @property
    def urls(self) -> list[str]:
        return [node.url for node in self.nodes]

    def __enter__(self) -> "OpenSearchCluster":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _command(self, node: Node) -> list[str]:
        return [
            "java",
            f"-Xms{self.heap}",
            f"-Xmx{self.heap}",
            "-XX:+UseG1GC",
            "-Djava.awt.headless=true",
            "-Dfile.encoding=UTF-8",
            "-Dlog4j2.formatMsgNoLookups=true",
            "-cp",
            self.classpath,
            self.launcher.main_class,
            "--home",
            str(node.home),
            "--name",
            node.name,
            "--cluster-name",
            self.cluster_name,
            "--http-port",
            str(node.http_port),
            "--transport-port",
            str(node.transport_port),
            "--seed-ports",
            ",".join(str(other.transport_port) for other in self.nodes),
            "--cluster-managers",
            ",".join(other.name for other in self.nodes),
            *(f"-E{key}={value}" for key, value in self.settings.items()),
        ]

    def start_node(self, node: Node) -> None:
        """Start (or restart, on its data) one node's JVM; its output goes to
        <home>/logs/stdout.log."""
        if self.classpath is None:
            self.classpath = build(self.launcher)
        (node.home / "logs").mkdir(parents=True, exist_ok=True)
        with open(node.home / "logs" / "stdout.log", "ab") as log:
            node.process = subprocess.Popen(
                self._command(node),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def start(self, *, timeout: float = START_TIMEOUT) -> "OpenSearchCluster":
        """Start every node and wait until the cluster is green with all of them."""
        self.classpath = build(self.launcher)
        for node in self.nodes:
            self.start_node(node)
        try:
            self.wait_for_health("green", timeout=timeout)
        except BaseException:
            self.stop()
            raise
        self._write_state()
        return self

    def health(
        self, node: Node | None = None, *, params: str = "", timeout: float = 5.0
    ) -> dict | None:
        """GET /_cluster/health from a running node (the first that answers), None when none
        does."""
        for candidate in [node] if node else self.nodes:
            if not candidate.running():
                continue
            try:
                with urllib.request.urlopen(
                    f"{candidate.url}/_cluster/health{params}", timeout=timeout
                ) as answer:
                    return json.load(answer)
            except (
                urllib.error.HTTPError
            ) as error:  # 408: wait_for_* timed out; its body is still the health
                if error.code == 408:
                    return json.load(error)
            except (OSError, ValueError):
                continue
        return None

    def wait_for_health(
        self, status: str = "green", *, nodes: int | None = None, timeout: float = START_TIMEOUT
    ) -> float:
        """Seconds until the cluster reports `status` (or better) with `nodes` nodes (default: all);
        a node's JVM dying on the way, or the timeout, raises with the tail of its log."""
        started = time.monotonic()
        expected = len(self.nodes) if nodes is None else nodes
        params = f"?wait_for_status={status}&wait_for_nodes={expected}&timeout=5s"
        while True:
            for node in self.nodes:
                if node.process is not None and node.process.poll() is not None and nodes is None:
                    raise LauncherUnavailable(
                        f"{node.name} exited with {node.process.returncode}:\n{node.log_tail()}"
                    )
            answer = self.health(params=params)
            if answer and not answer.get("timed_out") and answer.get("number_of_nodes") == expected:
                return time.monotonic() - started
            if time.monotonic() - started > timeout:
                tails = "\n".join(f"--- {node.name}\n{node.log_tail(1500)}" for node in self.nodes)
                raise LauncherUnavailable(
                    f"the cluster was not {status} with {expected} node(s) after {timeout:g} s "
                    f"(last health: {answer}):\n{tails}"
                )
            time.sleep(0.5)

    def kill(self, node: Node) -> None:
        """SIGKILL one node's JVM: no shutdown, no flush, as a crashed machine."""
        if node.running():
            os.killpg(node.process.pid, signal.SIGKILL)
            node.process.wait()

    def stop(self) -> None:
        """SIGTERM every node (closing it cleanly), SIGKILL one that has not exited after
        STOP_TIMEOUT, then remove the directory the cluster created."""
        for node in self.nodes:
            if node.running():
                os.killpg(node.process.pid, signal.SIGTERM)
        for node in self.nodes:
            if node.process is None:
                continue
            try:
                node.process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.kill(node)
        if self.owns_root:
            shutil.rmtree(self.root, ignore_errors=True)
        else:
            (self.root / "cluster.json").unlink(missing_ok=True)

    def _write_state(self) -> None:
        """cluster.json under root: what `python -m deploy.opensearch stop` (or
        deploy.elasticsearch) reads to stop the nodes of another process."""
        state = {
            "urls": self.urls,
            "nodes": [
                {"name": node.name, "pid": node.process.pid, "home": str(node.home)}
                for node in self.nodes
            ],
            "owns_root": self.owns_root,
        }
        (self.root / "cluster.json").write_text(json.dumps(state, indent=2))
