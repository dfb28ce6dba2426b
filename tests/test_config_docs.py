"""docs/configuration.md is generated from app/config.py: every setting and every HIREKIT_* variable
the code reads has a meaning there, and the page in the repository is what the generator writes
today."""

import re
from pathlib import Path

import pytest

from app import config
from app.plugins import PluginError
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
        "add these with a meaning to app/config.py (CORE_DEFAULTS or PROCESS_VARIABLES) or to "
        "their family's settings.py"
    )


def test_a_familys_settings_are_read_from_its_package_and_never_twice(tmp_path, monkeypatch):
    assert config.DEFAULTS["WEBHOOK_TIMEOUT"] == 10.0  # plugins/webhooks/settings.py
    assert "WEBHOOK_TIMEOUT" not in config.CORE_DEFAULTS
    first, second = tmp_path / "first.py", tmp_path / "second.py"
    first.write_text('DEFAULTS = {"WIDGET_SIZE": 1}\n')
    second.write_text('DEFAULTS = {"WIDGET_SIZE": 2, "LOG_LEVEL": "DEBUG"}\n')
    monkeypatch.setattr(config, "family_settings_files", lambda: [first])
    assert config.family_defaults() == {"WIDGET_SIZE": 1}
    monkeypatch.setattr(config, "family_settings_files", lambda: [first, second])
    with pytest.raises(PluginError, match="LOG_LEVEL.*WIDGET_SIZE"):
        config.family_defaults()


def test_a_familys_setting_is_typed_from_the_environment_like_the_cores():
    loaded = config.load_config(environ={"HIREKIT_WEBHOOK_TIMEOUT": "2.5", "HIREKIT_PORT": "9"})
    assert (loaded["WEBHOOK_TIMEOUT"], loaded["PORT"]) == (2.5, 9)


def test_the_configuration_page_is_current():
    assert PAGE.read_text() == configuration_page(), (
        f"docs/configuration.md is stale: run `{REGENERATE}`"
    )


def test_env_example_points_at_the_configuration_page():
    example = (ROOT / "deploy" / "env.example").read_text()
    assert "docs/configuration.md" in example and "README" not in example
