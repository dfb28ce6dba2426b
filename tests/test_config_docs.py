"""docs/configuration.md is generated from app/config.py: every setting and every HIREKIT_* variable
the code reads has a meaning there, and the page in the repository is what the generator writes
today."""

import re
from pathlib import Path

from app import config
from app.config_docs import REGENERATE, configuration_page, documented_settings

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "configuration.md"
# Where the service's own processes read HIREKIT_* variables (tests and benches have their own:
# HIREKIT_TEST_*, ...).
CODE = [
    *ROOT.glob("app/**/*.py"),
    *ROOT.glob("plugins/**/*.py"),
    *ROOT.glob("deploy/**/*"),
    ROOT / "worker.py",
    ROOT / "wsgi.py",
    ROOT / "Makefile",
    ROOT / "Procfile",
]
VARIABLE = re.compile(r"HIREKIT_([A-Z0-9_]*[A-Z0-9])\b")
# the suite's and benches' own variables (the Makefile passes them on)
TEST_TOOLS = ("TEST_", "BENCH_", "FUZZ_")


def test_every_setting_has_a_meaning():
    settings = documented_settings()
    assert [setting.key for setting in settings] == list(config.DEFAULTS)
    assert [setting.key for setting in settings if not setting.meaning] == []


def test_a_setting_without_a_comment_is_reported_undocumented():
    source = '''DEFAULTS = {
    # --- Core ---
    # the first one's meaning,
    # on two lines
    "FIRST": 1,
    "SECOND": "a # in a string",
    "THIRD": 3,  # said on its line

    "FOURTH": 4,
}'''
    found = {
        setting.key: (setting.section, setting.meaning) for setting in documented_settings(source)
    }
    assert found == {
        "FIRST": ("Core", "the first one's meaning, on two lines"),
        "SECOND": ("Core", ""),
        "THIRD": ("Core", "said on its line"),
        "FOURTH": ("Core", ""),
    }


def test_every_variable_the_code_reads_is_documented():
    documented = set(config.DEFAULTS) | set(config.PROCESS_VARIABLES) | {"INSTANCE_DIR"}
    read = {
        name
        for path in CODE
        if path.is_file()
        for name in VARIABLE.findall(path.read_text(errors="replace"))
        if not name.startswith(TEST_TOOLS)
    }
    assert read - documented == set(), (
        "add these to app/config.py (DEFAULTS or PROCESS_VARIABLES) with a meaning"
    )


def test_the_configuration_page_is_current():
    assert PAGE.read_text() == configuration_page(), (
        f"docs/configuration.md is stale: run `{REGENERATE}`"
    )


def test_env_example_points_at_the_configuration_page():
    example = (ROOT / "deploy" / "env.example").read_text()
    assert "docs/configuration.md" in example and "README" not in example
