"""The scale-out drill's hosts, each a network namespace on one bridge (tests/drills/netns.py), each
process started as deployed: a private PostgreSQL and Redis, three app hosts each running gunicorn
with deploy/gunicorn.conf.py and the call relay (`hirekit-relay`) behind nginx, two worker hosts
running `python worker.py`, and a client host, where Twilio's stand-in (tests/drills/telephony.py)
takes the workers' calls.

The drill's own process stays in the machine's namespace, where the drill's addresses are not routed
to its hosts: it reaches PostgreSQL and Redis through their Unix sockets (in the run's directory)
and everything else from threads it moves into the client host (`Host.entered`).
"""

from __future__ import annotations

import concurrent.futures
import glob
import os
import secrets
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg2
import requests
from redis import Redis

from tests.drills.netns import Host, Network
from tests.drills.telephony import ACCOUNT_SID, AUTH_TOKEN

ROOT = Path(__file__).resolve().parent.parent.parent
NGINX_TEMPLATE = Path(__file__).resolve().parent / "nginx.conf"
APP_PORT = 8000
RELAY_PORT = 8001
RECEIVER_PORT = 9000
TWILIO_PORT = 9100
# "probe" is a second client address for requests the drill expects refused (a revoked key): failed
# authentications are limited per client address, and the load's address must not reach that limit.
ADDRESSES = {
    "lb": 2,
    "app1": 11,
    "app2": 12,
    "app3": 13,
    "worker1": 21,
    "worker2": 22,
    "db": 31,
    "redis": 32,
    "client": 40,
    "probe": 41,
}
APP_ROLES = ("app1", "app2", "app3")
WORKER_ROLES = ("worker1", "worker2")


def postgres_binaries() -> str | None:
    """The directory holding initdb and postgres (Debian keeps them under
    /usr/lib/postgresql/<version>/bin)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    if found:
        return os.path.dirname(found[-1])
    postgres = shutil.which("postgres")
    return os.path.dirname(os.path.realpath(postgres)) if postgres else None


def missing_programs() -> list[str]:
    """The programs the drill runs that this machine lacks."""
    needed = {
        "nginx": shutil.which("nginx"),
        "redis-server": shutil.which("redis-server"),
        "runuser": shutil.which("runuser"),
        "PostgreSQL (initdb, postgres)": postgres_binaries(),
    }
    return [name for name, path in needed.items() if not path]


@dataclass(frozen=True)
class DrillSettings:
    """What the drill's deployment is configured with (the values the drill checks against)."""

    # gunicorn workers per app host (deploy/gunicorn.conf.py's threads: 4 each)
    app_workers: int = 2
    # HIREKIT_AUTH_CACHE_SECONDS: how long a revoked key may still pass on a host
    auth_cache_seconds: float = 5.0
    # an in-flight key left by a killed host is taken over after this
    idempotency_lock_seconds: float = 10.0
    webhook_timeout: float = 3.0
    webhook_lease_grace: float = 2.0
    webhook_reaper_interval: float = 5.0
    webhook_retry_schedule: str = "[1, 2, 4, 8, 16, 32]"
    # the rate-limited tenant's limit, checked across the three app hosts
    limited_per_minute: int = 30
    dataset_size: int = 2000  # person profiles loaded into each app host's embedded index
    client_threads: int = 4  # the load: client threads on the client host ...
    client_rate: float = 5.0  # ... each sending this many operations a second through nginx
    # HIREKIT_RELAY_QUIET_SECONDS: a dead relay's calls are failed after this ...
    relay_quiet_seconds: float = 8.0
    relay_sweep_interval: float = 2.0  # ... by another relay's sweep, every this many seconds


@dataclass(frozen=True)
class Tenant:
    slug: str
    key: str

    @property
    def headers(self) -> dict:
        return {"Authorization": f"Bearer {self.key}"}

    @property
    def person_headers(self) -> dict:
        return {"X-API-Key": self.key}


def new_key() -> str:
    return "hk_" + secrets.token_urlsafe(32)


class Cluster:
    """Start with `start()`, stop with `close()` (which also runs when start fails half-way)."""

    def __init__(self, workdir: str, prefix: str, settings: DrillSettings = DrillSettings()):
        self.workdir = Path(workdir)
        self.prefix = prefix
        self.settings = settings
        self.network: Network | None = None
        self.secret_key = secrets.token_urlsafe(48)
        self.tenant = Tenant("drill", new_key())
        self.limited = Tenant("limited", new_key())
        self.revocable = Tenant("revocable", new_key())
        self.revocable_key_id: int | None = None
        self.pg_socket_dir = self.workdir / "pg-socket"
        self.redis_socket = self.workdir / "redis.sock"
        self.relays: dict[str, object] = {}  # app host -> its relay process (subprocess.Popen)

    # hosts
    # ----------------------------------------------------------------------------------------------

    def host(self, role: str) -> Host:
        return self.network.hosts[role]

    @property
    def client(self) -> Host:
        return self.host("client")

    @property
    def lb_url(self) -> str:
        return f"http://{self.host('lb').address}"

    def app_url(self, role: str) -> str:
        return f"http://{self.host(role).address}:{APP_PORT}"

    def relay_url(self, role: str) -> str:
        return f"http://{self.host(role).address}:{RELAY_PORT}"

    @property
    def receiver_url(self) -> str:
        return f"http://{self.client.address}:{RECEIVER_PORT}/hook"

    def start(self) -> None:
        os.chmod(self.workdir, 0o755)  # the private PostgreSQL runs as the postgres user
        self.network = Network(self.prefix)
        for role, octet in ADDRESSES.items():
            self.network.add_host(role, octet)
        self.start_postgres()
        self.start_redis()
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            dataset = pool.submit(self.load_dataset)
            self.run_flask("app1", "db", "upgrade")
            self.create_tenants()
            dataset.result()
        for role in WORKER_ROLES:  # they boot while the app hosts do
            self.start_worker(role)
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            list(pool.map(self.start_app, APP_ROLES))
        self.start_nginx()

    def close(self) -> None:
        if self.network is not None:
            self.network.close()
            self.network = None

    # data hosts
    # ----------------------------------------------------------------------------------------------

    def start_postgres(self) -> None:
        """A PostgreSQL of the run's own (initdb in the run's directory) listening on the db host's
        address."""
        binaries = postgres_binaries()
        data = self.workdir / "pgdata"
        for directory in (data, self.pg_socket_dir):
            directory.mkdir()
            shutil.chown(directory, "postgres", "postgres")
        db = self.host("db")
        db.run(
            [f"{binaries}/initdb", "-D", str(data), "-U", "postgres", "-A", "trust", "--no-sync"],
            env=self.base_env(),
            user="postgres",
        )
        with open(data / "pg_hba.conf", "a") as hba:
            hba.write(f"host all all {db.address.rsplit('.', 1)[0]}.0/24 trust\n")
        db.start(
            [
                f"{binaries}/postgres",
                "-D",
                str(data),
                "-c",
                f"listen_addresses={db.address}",
                "-c",
                f"unix_socket_directories={self.pg_socket_dir}",
                "-c",
                "max_connections=200",
            ],
            env=self.base_env(),
            log_path=str(self.workdir / "postgres.log"),
            user="postgres",
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                psycopg2.connect(
                    host=str(self.pg_socket_dir), user="postgres", dbname="postgres"
                ).close()
                break
            except psycopg2.OperationalError:
                if time.monotonic() > deadline:
                    raise RuntimeError("the drill's PostgreSQL did not start: see postgres.log")
                time.sleep(0.2)
        connection = psycopg2.connect(
            host=str(self.pg_socket_dir), user="postgres", dbname="postgres"
        )
        connection.autocommit = True
        connection.cursor().execute("CREATE DATABASE hirekit")
        connection.close()

    def start_redis(self) -> None:
        redis_host = self.host("redis")
        redis_host.start(
            [
                "redis-server",
                "--bind",
                redis_host.address,
                "--port",
                "6379",
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "no",
                "--unixsocket",
                str(self.redis_socket),
                "--unixsocketperm",
                "700",
            ],
            env=self.base_env(),
            log_path=str(self.workdir / "redis.log"),
        )
        deadline = time.monotonic() + 30
        while not self.redis_socket.exists() or not self._redis_answers():
            if time.monotonic() > deadline:
                raise RuntimeError("the drill's Redis did not start: see redis.log")
            time.sleep(0.1)

    def _redis_answers(self) -> bool:
        try:
            return bool(self.redis().ping())
        except Exception:
            return False

    def sql(self, query: str, params: tuple = ()) -> list[tuple]:
        """One query on the drill's database, through the Unix socket."""
        connection = psycopg2.connect(
            host=str(self.pg_socket_dir), user="postgres", dbname="hirekit"
        )
        try:
            with connection.cursor() as cursor:
                cursor.execute(query, params)
                return cursor.fetchall()
        finally:
            connection.close()

    def redis(self) -> Redis:
        return Redis(unix_socket_path=str(self.redis_socket))

    # app and worker hosts
    # -----------------------------------------------------------------------------------------

    def base_env(self) -> dict:
        """The machine's environment without the caller's HIREKIT_* settings, with this tree first
        on the path."""
        env = {name: value for name, value in os.environ.items() if not name.startswith("HIREKIT_")}
        env["PYTHONPATH"] = str(ROOT)
        return env

    def host_env(self, role: str) -> dict:
        """What an app or worker host is deployed with: the shared database and Redis over the
        links, its own instance directory and person index."""
        settings = self.settings
        instance = self.workdir / role
        instance.mkdir(exist_ok=True)
        return {
            **self.base_env(),
            "HIREKIT_DATABASE_URL": f"postgresql://postgres@{self.host('db').address}:5432/hirekit",
            "HIREKIT_REDIS_URL": f"redis://{self.host('redis').address}:6379/0",
            "HIREKIT_SECRET_KEY": self.secret_key,
            "HIREKIT_INSTANCE_DIR": str(instance),
            "HIREKIT_SEARCH_INDEX": str(self.workdir / "index" / role / "person"),
            "HIREKIT_BEHIND_PROXY": "1",
            "HIREKIT_FORWARDED_ALLOW_IPS": self.host("lb").address,
            "HIREKIT_BIND": f"{self.host(role).address}:{APP_PORT}",
            "HIREKIT_WEB_WORKERS": str(settings.app_workers),
            "HIREKIT_LOG_LEVEL": "WARNING",
            "HIREKIT_AUTH_CACHE_SECONDS": str(settings.auth_cache_seconds),
            "HIREKIT_IDEMPOTENCY_LOCK_SECONDS": str(settings.idempotency_lock_seconds),
            "HIREKIT_PERSON_RATE_LIMIT": "100000/minute",
            "HIREKIT_WEBHOOK_ALLOW_PRIVATE": "1",
            "HIREKIT_WEBHOOK_TIMEOUT": str(settings.webhook_timeout),
            "HIREKIT_WEBHOOK_LEASE_GRACE": str(settings.webhook_lease_grace),
            "HIREKIT_WEBHOOK_REAPER_INTERVAL": str(settings.webhook_reaper_interval),
            "HIREKIT_WEBHOOK_RETRY_SCHEDULE": settings.webhook_retry_schedule,
            # calls: Twilio's stand-in on the client host places them; its sockets come back through
            # nginx
            "HIREKIT_TELEPHONY": "twilio",
            "HIREKIT_TWILIO_ACCOUNT_SID": ACCOUNT_SID,
            "HIREKIT_TWILIO_AUTH_TOKEN": AUTH_TOKEN,
            "HIREKIT_TWILIO_FROM_NUMBER": "+14155550000",
            "HIREKIT_TWILIO_CALLBACK_BASE_URL": self.lb_url,
            "HIREKIT_TWILIO_API_BASE_URL": f"http://{self.client.address}:{TWILIO_PORT}",
            "HIREKIT_CALLING_HOURS": "00:00-24:00",  # the drill runs at any hour
            "HIREKIT_RELAY_HOST": self.host(role).address,
            "HIREKIT_RELAY_PORT": str(RELAY_PORT),
            "HIREKIT_RELAY_QUIET_SECONDS": str(settings.relay_quiet_seconds),
            "HIREKIT_RELAY_SWEEP_INTERVAL": str(settings.relay_sweep_interval),
        }

    def run_flask(self, role: str, *args: str, env: dict | None = None) -> str:
        """`flask --app wsgi ARGS` on a host, as an operator would run it there."""
        return self.host(role).run(
            [sys.executable, "-m", "flask", "--app", "wsgi", *args],
            env={**self.host_env(role), **(env or {})},
            cwd=str(ROOT),
        )

    def create_tenants(self) -> None:
        """The load's tenant and the key to revoke (no practical limit), and the rate-limited
        tenant: created at once."""
        unlimited = "1000000/minute"
        tenants = (
            (self.tenant, unlimited),
            (self.limited, f"{self.settings.limited_per_minute}/minute"),
            (self.revocable, unlimited),
        )
        with concurrent.futures.ThreadPoolExecutor(len(tenants)) as pool:
            made = list(pool.map(self.create_tenant, APP_ROLES, *zip(*tenants)))
        self.revocable_key_id = int(made[-1].split(" id ", 1)[1].split(",", 1)[0])

    def create_tenant(self, role: str, tenant: Tenant, rate_limit: str) -> str:
        """`flask tenants create` on a host with the tenant's chosen key; what the command
        printed."""
        return self.run_flask(
            role,
            "tenants",
            "create",
            tenant.slug,
            "--key-env",
            "DRILL_KEY",
            "--rate-limit",
            rate_limit,
            env={"DRILL_KEY": tenant.key},
        )

    def load_dataset(self) -> None:
        """One generated person dataset, loaded into each app host's embedded index."""
        dataset = self.workdir / "people.jsonl"
        self.run_flask(
            "app1",
            "person",
            "sample",
            "--count",
            str(self.settings.dataset_size),
            "--seed",
            "7",
            "--out",
            str(dataset),
            "--processes",
            "1",
        )
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            list(
                pool.map(
                    lambda role: self.run_flask(
                        role, "person", "load", str(dataset), "--processes", "1"
                    ),
                    APP_ROLES,
                )
            )

    def start_app(self, role: str) -> None:
        """gunicorn as deployed (deploy/gunicorn.conf.py, wsgi:app) and the call relay on the host's
        address; returns once both answer."""
        self.host(role).start(
            [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "wsgi:app"],
            env=self.host_env(role),
            cwd=str(ROOT),
            log_path=str(self.workdir / f"{role}.log"),
        )
        self.start_relay(role)
        self.wait_until_answers(f"{self.app_url(role)}/healthz", role)
        self.wait_until_answers(f"{self.relay_url(role)}/healthz", f"{role}-relay")

    def start_relay(self, role: str) -> None:
        """`hirekit-relay`, the relay's process type, on the host's address."""
        self.relays[role] = self.host(role).start(
            [str(Path(sys.executable).parent / "hirekit-relay")],
            env=self.host_env(role),
            cwd=str(ROOT),
            log_path=str(self.workdir / f"{role}-relay.log"),
        )

    def start_worker(self, role: str) -> None:
        self.host(role).start(
            [sys.executable, "worker.py"],
            env=self.host_env(role),
            cwd=str(ROOT),
            log_path=str(self.workdir / f"{role}.log"),
        )

    def start_nginx(self) -> None:
        lb = self.host("lb")
        directory = self.workdir / "lb"
        for sub in ("", "body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (directory / sub).mkdir(exist_ok=True)
            os.chmod(directory / sub, 0o777)
        servers = "\n".join(
            f"        server {self.host(role).address}:{APP_PORT} max_fails=1 fail_timeout=5s;"
            for role in APP_ROLES
        )
        relays = "\n".join(
            f"        server {self.host(role).address}:{RELAY_PORT} max_fails=1 fail_timeout=5s;"
            for role in APP_ROLES
        )
        config = (
            NGINX_TEMPLATE.read_text()
            .replace("@DIR@", str(directory))
            .replace("@APP_SERVERS@", servers)
            .replace("@RELAY_SERVERS@", relays)
            .replace("@LISTEN@", f"{lb.address}:80")
        )
        (directory / "nginx.conf").write_text(config)
        lb.start(
            [
                "nginx",
                "-p",
                str(directory),
                "-c",
                str(directory / "nginx.conf"),
                "-e",
                str(directory / "error.log"),
                "-g",
                "daemon off;",
            ],
            env=self.base_env(),
            log_path=str(directory / "nginx.out"),
        )
        self.wait_until_answers(f"{self.lb_url}/healthz", "lb")

    def wait_until_answers(self, url: str, role: str, timeout: float = 90) -> float:
        """Seconds until `url` answers 200 from the client host; an error naming the host's log when
        it does not."""
        started = time.monotonic()
        with self.client.entered(), requests.Session() as session:
            while time.monotonic() - started < timeout:
                try:
                    if session.get(url, timeout=2).status_code == 200:
                        return time.monotonic() - started
                except requests.RequestException:
                    pass
                time.sleep(0.1)
        raise RuntimeError(
            f"{role} did not answer {url} within {timeout} s: see {self.workdir / role}.log"
        )
