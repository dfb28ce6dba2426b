"""`make test`'s two annoyances gone: ruff lints the files git tracks (an untracked scratch file or
generated client in the tree does not fail it; outside git every file is linted), and the summary
names each skip reason once."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
UNUSED_IMPORT = "import os\n"


def make_lint(directory: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["make", "-o", "install-dev", f"BIN={BIN}", "lint"],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.skipif(
    shutil.which("make") is None or shutil.which("git") is None, reason="needs make and git"
)
def test_lint_checks_the_files_git_tracks_and_every_file_outside_git(tmp_path):
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "kept.py").write_text('"""Tracked and clean."""\n')
    (tmp_path / "scratch.py").write_text(UNUSED_IMPORT)
    assert make_lint(tmp_path).returncode != 0  # no git: every file, the scratch one too
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "kept.py", "Makefile"], cwd=tmp_path, check=True)
    untracked = make_lint(tmp_path)
    assert untracked.returncode == 0, untracked.stdout + untracked.stderr
    # a tracked file deleted in the work tree is not an error either
    (tmp_path / "kept.py").unlink()
    assert make_lint(tmp_path).returncode == 0
    subprocess.run([*git, "add", "scratch.py"], cwd=tmp_path, check=True)
    tracked = make_lint(tmp_path)
    assert tracked.returncode != 0 and "scratch.py" in tracked.stdout + tracked.stderr


def test_the_summary_names_each_skip_reason_once_with_its_count(tmp_path):
    (tmp_path / "test_skips.py").write_text(
        "import pytest\n"
        "NEEDS_DB = pytest.mark.skipif(True, reason='PostgreSQL tests need "
        "HIREKIT_TEST_DATABASE_URL')\n"
        "@NEEDS_DB\n@pytest.mark.parametrize('n', range(3))\ndef test_a(n): pass\n"
        "@NEEDS_DB\ndef test_b(): pass\n"
        "def test_c(): pytest.skip('no Chromium here')\n"
        "def test_d(): pass\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "tests.skip_summary",
            "-rfExX",
            "-p",
            "no:cacheprovider",
            str(tmp_path / "test_skips.py"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = done.stdout.splitlines()
    assert "SKIPPED 4 tests: PostgreSQL tests need HIREKIT_TEST_DATABASE_URL" in lines, done.stdout
    assert "SKIPPED 1 test: no Chromium here" in lines
    assert sum("HIREKIT_TEST_DATABASE_URL" in line for line in lines) == 1, done.stdout
