"""Every sample marked runnable in README.md and docs/*.md runs as written against a live server on
the sample data.

A fenced block whose info string is `sh runnable` or `python runnable` is run; `http-errors` beside
`runnable` lets its curl calls answer 4xx (samples that show an error). Each page's runnable blocks
run in order in one bash session (Python blocks through `python -`), so a variable a block sets is
there for the next, in a scratch directory outside the checkout, as the README tells a reader to run
them, on SQLite (the documented default). Each page runs twice in a row in that directory against
the same server, as a reader who runs a page again would: a sample that creates a record must still
succeed when it exists. The server is what `make run` starts: gunicorn as deployed over an instance
directory `demo setup` filled (made once per session, copied per database) and a `demo` tenant, with
HIREKIT_WEBHOOK_ALLOW_PRIVATE=1 for the local receivers; the samples read HIREKIT_URL and
HIREKIT_KEY (and RECEIVER_PORT, a free port here), and an operator's `flask --app wsgi` command acts
on the server's instance directory. Blocks left unmarked (installs, systemd, placeholders) are
counted and reported, not run.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.gunicorn_process import gunicorn
from tests.test_mcp_protocol import call
from tests.ports import free_port

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# HIREKIT_DOC_PAGES=README.md,docs/integrating.md runs those pages' samples only
ONLY_PAGES = {name for name in os.environ.get("HIREKIT_DOC_PAGES", "").split(",") if name}
FENCE = re.compile(r"^```(?P<info>[^`]*)$")
SHELL_LANGUAGES = {"sh", "bash", "shell", "console"}
PAGE_TIMEOUT = 300  # a page takes 5-30 s on a quiet machine; a shared one can be far slower
# Every curl fails on an HTTP error status (unless the block is marked http-errors, or the sample
# asks for --fail itself); background jobs end with the page.
PREAMBLE = r"""set -euo pipefail
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
curl() {
  local arg
  for arg in "$@"; do
    if [[ $arg == --fail* || $arg =~ ^-[a-zA-Z]*f[a-zA-Z]*$ ]]; then command curl "$@"; return; fi
  done
  if [ -n "${HTTP_ERRORS_OK:-}" ]; then command curl "$@"; else command curl --fail-with-body "$@"; fi
}
"""  # noqa: E501


@dataclass(frozen=True)
class Sample:
    page: str
    line: int
    language: str
    runnable: bool
    http_errors: bool
    code: str

    def as_bash(self) -> str:
        """This block as a step of its page's bash session, announced on stderr so a failure names
        it."""
        body = (
            self.code
            if self.language != "python"
            else f"python - <<'HIREKIT_SAMPLE_PY'\n{self.code}HIREKIT_SAMPLE_PY\n"
        )
        errors_ok = "HTTP_ERRORS_OK=1" if self.http_errors else "HTTP_ERRORS_OK="
        return f"printf '\\n::: %s\\n' '{self.page}:{self.line}' >&2\n{errors_ok}\n{body}\n"


def samples(page: Path, root: Path = ROOT) -> list[Sample]:
    """The page's shell and Python blocks, in order (named relative to `root`)."""
    found, lines = [], page.read_text().splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening or not opening["info"].strip():
            index += 1
            continue
        language, *flags = opening["info"].split()
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
        if language in SHELL_LANGUAGES | {"python"}:
            found.append(
                Sample(
                    str(page.relative_to(root)),
                    index + 1,
                    "python" if language == "python" else "sh",
                    "runnable" in flags,
                    "http-errors" in flags,
                    "\n".join(lines[index + 1 : end]) + "\n",
                )
            )
        index = end + 1
    return found


def test_sample_extraction_reads_flags_and_keeps_order(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "text\n```sh runnable\necho one\n```\n```python\nprint(2)\n```\n```json\n{}\n```\n"
        "```sh runnable http-errors\ncurl -s x\n```\n"
    )
    found = [(s.language, s.runnable, s.http_errors, s.code) for s in samples(page, root=tmp_path)]
    assert found == [
        ("sh", True, False, "echo one\n"),
        ("python", False, False, "print(2)\n"),
        ("sh", True, True, "curl -s x\n"),
    ]


def test_the_walks_are_marked_runnable():
    """Pages whose samples lost their marks would pass the run below while testing nothing."""
    for name in ("README.md", "docs/integrating.md"):
        assert sum(block.runnable for block in samples(ROOT / name)) >= 5, (
            f"{name}: its samples are not marked runnable"
        )


def test_the_mcp_tool_lists_integrating_names_are_what_the_servers_list(client, tenant_a):
    """A tool the servers gained or lost shows in integrating.md's list, in tools/list's order."""
    text = " ".join((ROOT / "docs/integrating.md").read_text().split())
    documented = {
        "/mcp": re.search(r"at `/mcp` for the jobs tools \((.*?)\) or at", text)[1],
        "/mcp/sourcing": re.search(r"at `/mcp/sourcing` for (.*?), with `Authorization", text)[1],
    }
    for path, names in documented.items():
        response = call(client, tenant_a, "tools/list", {}, path=path)
        assert response.status_code == 200
        listed = [tool["name"] for tool in response.json["result"]["tools"]]
        assert re.findall(r"`(\w+)`", names) == listed, path


@pytest.fixture(scope="session")
def demo_instance(tmp_path_factory) -> Path:
    """An instance directory as `demo setup` (what `make run` runs first) leaves it: the sample
    person datasets loaded into the embedded indexes. Made once; each database's run copies it and
    brings its own tenant."""
    instance = tmp_path_factory.mktemp("demo") / "instance"
    env = {**os.environ, "HIREKIT_INSTANCE_DIR": str(instance), "PYTHONPATH": str(ROOT)}
    # its own SQLite file in the instance directory
    for name in ("HIREKIT_DATABASE_URL", "DATABASE_URL"):
        env.pop(name, None)
    result = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "wsgi", "demo", "setup"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return instance


RUNS_PER_PAGE = 2


def run_page(page: Path, env: dict[str, str], workdir: Path) -> tuple[int, int, float]:
    """Run the page's runnable blocks in one bash session, RUNS_PER_PAGE times in a row;
    (run, not run, seconds)."""
    started = time.monotonic()
    blocks = samples(page)
    runnable = [block for block in blocks if block.runnable]
    for run in range(1, (RUNS_PER_PAGE if runnable else 0) + 1):
        script = PREAMBLE + "".join(block.as_bash() for block in runnable)
        process = subprocess.Popen(
            ["bash", "-c", script],
            cwd=workdir,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        try:
            output, _ = process.communicate(timeout=PAGE_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            pytest.fail(
                f"{page.name} (run {run}): samples still running after {PAGE_TIMEOUT} s:\n"
                f"{output[-4000:]}"
            )
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
        failed_at = re.findall(r"^::: (\S+)$", output, re.M)
        where = failed_at[-1] if failed_at else page.name
        assert process.returncode == 0, (
            f"sample at {where} failed on run {run} (exit {process.returncode}):\n{output[-6000:]}"
        )
    return len(runnable), len(blocks) - len(runnable), time.monotonic() - started


@pytest.mark.slow
@pytest.mark.skipif(
    not (shutil.which("curl") and shutil.which("jq")),
    reason="the docs' samples use curl and jq: apt-get install -y curl jq (.ci/run installs them)",
)
# the documented default; the page runs twice on it
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_every_runnable_sample_runs_as_written(
    db_url, demo_instance, make_tenant, tmp_path, capsys
):
    instance = tmp_path / "instance"
    shutil.copytree(
        demo_instance, instance, ignore=shutil.ignore_patterns("hirekit.sqlite3", "secret_key")
    )
    key = make_tenant("demo").key  # the tenant `demo setup` makes; the samples name it
    # no `instance` here: a sample that reads one from its directory fails, as a reader's would
    workdir = tmp_path / "work"
    workdir.mkdir()
    server_env = {
        **os.environ,
        "HIREKIT_INSTANCE_DIR": str(instance),
        "HIREKIT_DATABASE_URL": db_url,
        "HIREKIT_REDIS_URL": "",
        "HIREKIT_WEBHOOK_ALLOW_PRIVATE": "1",
        "PYTHONPATH": str(ROOT),
    }
    with gunicorn(server_env) as (_, base, _port):
        sample_env = {
            **server_env,
            "HIREKIT_URL": base,
            "HIREKIT_KEY": key,
            "RECEIVER_PORT": str(free_port()),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        }
        sample_env.pop("PYTHONPATH")  # `flask --app wsgi` finds wsgi through the install
        names = {page: page.relative_to(ROOT).as_posix() for page in PAGES}
        report = {
            name: run_page(page, sample_env, workdir)
            for page, name in names.items()
            if not ONLY_PAGES or name in ONLY_PAGES
        }
    with capsys.disabled():
        print(
            "\n"
            + "\n".join(
                f"doc samples: {page}: {ran} run (the page {RUNS_PER_PAGE} times), "
                f"{skipped} not marked runnable (not run), {took:.1f} s"
                for page, (ran, skipped, took) in report.items()
            )
        )
    assert sum(ran for ran, _, _ in report.values()) > 0
