"""Several hosts on one machine: a network namespace per host, each linked by a veth pair to a
bridge that lives in a hub namespace of its own, so the drill's addresses and links never touch the
machine's own network.

Every name carries the run's prefix (`Network.prefix`), so two runs never meet and a cleanup removes
only its own.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

CLONE_NEWNET = 0x40000000
# only inside the run's own namespaces: the hub's bridge has no route anywhere else
SUBNET = "10.213.0"
_libc = ctypes.CDLL(None, use_errno=True)


def unavailable_reason() -> str | None:
    """Why this machine cannot run namespace drills, or None when it can (root, iproute2, a
    namespace made and removed)."""
    if os.geteuid() != 0:
        return "needs root (ip netns)"
    if not shutil.which("ip"):
        return "needs iproute2 (ip)"
    probe = f"hkprobe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode:
        return f"cannot create a network namespace: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "delete", probe], capture_output=True)
    return None


def ip(*args: str) -> None:
    """Run one `ip` command; a failure raises with its message."""
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")


@dataclass
class Host:
    """One namespace: its name, its address on the drill's bridge, the link that joins it, and the
    processes it runs."""

    network: "Network"
    role: str
    address: str
    processes: list[subprocess.Popen] = field(default_factory=list)

    @property
    def namespace(self) -> str:
        return f"{self.network.prefix}-{self.role}"

    @property
    def hub_side(self) -> str:
        return f"v-{self.role}"[:15]

    def start(
        self,
        command: list[str],
        *,
        env: dict,
        cwd: str | None = None,
        log_path: str | None = None,
        user: str | None = None,
    ) -> subprocess.Popen:
        """`command` in this host's namespace, in a session of its own (so the host's processes die
        together)."""
        prefix = ["ip", "netns", "exec", self.namespace] + (
            ["runuser", "-u", user, "--"] if user else []
        )
        log = open(log_path, "ab") if log_path else subprocess.DEVNULL
        try:
            process = subprocess.Popen(
                prefix + command,
                env=env,
                cwd=cwd,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        finally:
            if log_path:
                log.close()
        self.processes.append(process)
        return process

    def run(
        self,
        command: list[str],
        *,
        env: dict,
        cwd: str | None = None,
        timeout: float = 120,
        user: str | None = None,
    ) -> str:
        """`command` in this namespace to its end; its output, or an error naming the command and
        its output."""
        prefix = ["ip", "netns", "exec", self.namespace] + (
            ["runuser", "-u", user, "--"] if user else []
        )
        done = subprocess.run(
            prefix + command, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout
        )
        if done.returncode:
            raise RuntimeError(f"{' '.join(command)} on {self.role}: {done.stdout}{done.stderr}")
        return done.stdout

    def kill(self) -> None:
        """SIGKILL every process group this host started: the host dies, nothing is shut down
        cleanly."""
        for process in self.processes:
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        self.processes.clear()

    def resident_mb(self) -> float:
        """Resident memory of every live process this host started (their process groups), in
        MiB."""
        groups = {process.pid for process in self.processes if process.poll() is None}
        total_kb = 0
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                if os.getpgid(int(entry)) not in groups:
                    continue
                with open(f"/proc/{entry}/status") as status:
                    total_kb += next(
                        (int(line.split()[1]) for line in status if line.startswith("VmRSS:")), 0
                    )
            except (OSError, ValueError):
                continue
        return total_kb / 1024

    def link(self, up: bool) -> None:
        """Bring the host's cable up or down (its port on the bridge)."""
        ip("-n", self.network.hub, "link", "set", self.hub_side, "up" if up else "down")

    @contextmanager
    def entered(self):
        """Run the calling thread inside this namespace (sockets it opens meanwhile belong to this
        host)."""
        with self.network.entered(self.namespace):
            yield

    def enter_for_good(self) -> None:
        """Move the calling thread into this namespace for the rest of its life (a load or server
        thread)."""
        _setns_path(f"/run/netns/{self.namespace}")


def _setns_path(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns {path}")
    finally:
        os.close(fd)


class Network:
    """A bridge in a hub namespace and the hosts plugged into it; `close()` kills their processes
    and removes them."""

    def __init__(self, prefix: str):
        self.prefix = prefix
        self.hub = f"{prefix}-hub"
        self.hosts: dict[str, Host] = {}
        self._lock = threading.Lock()
        ip("netns", "add", self.hub)
        ip("-n", self.hub, "link", "add", "br0", "type", "bridge")
        ip("-n", self.hub, "link", "set", "br0", "up")

    def add_host(self, role: str, last_octet: int) -> Host:
        host = Host(self, role, f"{SUBNET}.{last_octet}")
        ip("netns", "add", host.namespace)
        ip(
            "-n",
            self.hub,
            "link",
            "add",
            host.hub_side,
            "type",
            "veth",
            "peer",
            "name",
            "eth0",
            "netns",
            host.namespace,
        )
        ip("-n", self.hub, "link", "set", host.hub_side, "master", "br0")
        ip("-n", self.hub, "link", "set", host.hub_side, "up")
        ip("-n", host.namespace, "addr", "add", f"{host.address}/24", "dev", "eth0")
        ip("-n", host.namespace, "link", "set", "eth0", "up")
        ip("-n", host.namespace, "link", "set", "lo", "up")
        self.hosts[role] = host
        return host

    @contextmanager
    def entered(self, namespace: str):
        """The calling thread inside `namespace` for the block, then back where it was."""
        own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        try:
            _setns_path(f"/run/netns/{namespace}")
            yield
        finally:
            try:
                if _libc.setns(own, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), "setns back")
            finally:
                os.close(own)

    def close(self) -> None:
        """Kill every host's processes, then remove the namespaces (the veths go with them)."""
        for host in self.hosts.values():
            host.kill()
        for host in list(self.hosts.values()):
            subprocess.run(["ip", "netns", "delete", host.namespace], capture_output=True)
        subprocess.run(["ip", "netns", "delete", self.hub], capture_output=True)
        self.hosts.clear()


def remove_leftovers(prefix_root: str, older_than_seconds: float = 600) -> list[str]:
    """Namespaces named `<prefix_root>...` left by a run that was itself killed (older than
    `older_than_seconds`)."""
    removed = []
    root = "/run/netns"
    if not os.path.isdir(root):
        return removed
    for name in os.listdir(root):
        path = os.path.join(root, name)
        if (
            name.startswith(prefix_root)
            and time.time() - os.stat(path).st_mtime > older_than_seconds
        ):
            pids = subprocess.run(
                ["ip", "netns", "pids", name], capture_output=True, text=True
            ).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            subprocess.run(["ip", "netns", "delete", name], capture_output=True)
            removed.append(name)
    return removed
