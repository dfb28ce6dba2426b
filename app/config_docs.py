"""docs/configuration.md, generated from app/config.py and the families' settings.py: each setting's
name, default and the comment that is its meaning, so the page cannot drift from the code (`flask
--app wsgi config docs > docs/configuration.md`)."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

from app import config

CONFIG_SOURCE = Path(config.__file__)
SECTION_LINE = re.compile(r"#\s*---\s*(?P<name>.+?)\s*---\s*$")
DEFAULTS_LINE = re.compile(r"(CORE_)?DEFAULTS\b")
SETTING_LINE = re.compile(r'\s*"(?P<key>[A-Z][A-Z0-9_]*)"\s*:')
REGENERATE = "flask --app wsgi config docs > docs/configuration.md"


@dataclass(frozen=True)
class DocumentedSetting:
    key: str
    section: str
    meaning: str


def _trailing_comment(line: str) -> str:
    """The comment ending a line of code ('' when none), found by the tokenizer so a '#' inside a
    string is not one."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(line).readline))
    except (tokenize.TokenError, SyntaxError):
        return ""
    return next(
        (token.string.lstrip("#").strip() for token in tokens if token.type == tokenize.COMMENT), ""
    )


def documented_settings(source: str | None = None) -> list[DocumentedSetting]:
    """Every setting in DEFAULTS' order, with its section and meaning: the core's (app/config.py),
    then each family's settings.py; or those of the one source given."""
    if source is not None:
        return settings_in(source)
    sources = [CONFIG_SOURCE, *config.family_settings_files()]
    return [setting for path in sources for setting in settings_in(path.read_text())]


def settings_in(source: str) -> list[DocumentedSetting]:
    """The settings of the source's DEFAULTS (or CORE_DEFAULTS) mapping in source order, each with
    its section and meaning: the comment lines directly above it (no blank line between) and the
    comment on its own line. A setting without either has meaning ''."""
    lines = source.splitlines()
    start = next(index for index, line in enumerate(lines) if DEFAULTS_LINE.match(line))
    settings: list[DocumentedSetting] = []
    section, pending = "Settings", []
    for line in lines[start + 1 :]:
        stripped = line.strip()
        if stripped.startswith("}"):
            break
        if header := SECTION_LINE.match(stripped):
            section, pending = header["name"], []
        elif stripped.startswith("#"):
            pending.append(stripped.lstrip("#").strip())
        elif setting := SETTING_LINE.match(line):
            meaning = " ".join(part for part in (*pending, _trailing_comment(line)) if part)
            settings.append(DocumentedSetting(setting["key"], section, meaning))
            pending = []
        else:
            pending = []
    return settings


def shown_default(value: object) -> str:
    """A default as an operator would write it in the environment; paths under the instance
    directory as <instance>/."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, list):
        value = ",".join(str(item) for item in value)
    text = str(value).replace(str(config.INSTANCE_DIR), "<instance>")
    if text == "<instance>":
        return "`instance/` in the checkout"
    return f"`{text}`" if text else "empty"


def _row(*cells: str) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def configuration_page() -> str:
    """The whole Markdown page."""
    out = [
        "# Configuration",
        "",
        f"<!-- Generated from app/config.py and plugins/*/settings.py by `{REGENERATE}`: edit the "
        "comments there, not this page. -->",
        "",
        "Every setting is read once, at start, in this order, each later source winning:",
        "",
        "1. the defaults below;",
        "2. the Python or JSON file named by `HIREKIT_CONFIG` (upper-case names without the "
        "prefix, e.g. `RATE_LIMIT`);",
        "3. the environment: `HIREKIT_<NAME>`. Where a `HIREKIT_` variable is unset, the variable "
        "a Procfile platform sets",
        "   for it counts (its *platform twin*: `DATABASE_URL`, `REDIS_URL`, `PORT`, "
        "`WEB_CONCURRENCY`).",
        "",
        "Booleans are `1`, `true`, `yes` or `on` (anything else is false); lists are "
        "comma-separated (or a JSON array);",
        "durations are in seconds unless the name says otherwise. `<instance>` is the instance "
        "directory:",
        "`HIREKIT_INSTANCE_DIR`, by default `instance/` in the checkout.",
        "",
    ]
    section = None
    for setting in documented_settings():
        if setting.section != section:
            section = setting.section
            out += [f"## {section}", "", _row("variable", "default", "meaning"), "|---|---|---|"]
        out.append(
            _row(
                f"`HIREKIT_{setting.key}`",
                shown_default(config.DEFAULTS[setting.key]),
                setting.meaning,
            )
        )
    out += [
        "",
        "## Server processes",
        "",
        "Read straight from the environment, never from the `HIREKIT_CONFIG` file: by gunicorn's "
        "configuration",
        "(`deploy/gunicorn.conf.py`) and its worker class, and `HIREKIT_CONFIG` by the loader "
        "itself:",
        "",
        _row("variable", "default", "meaning"),
        "|---|---|---|",
    ]
    for name, (default, meaning) in config.PROCESS_VARIABLES.items():
        out.append(_row(f"`HIREKIT_{name}`", f"`{default}`" if default else "empty", meaning))
    return "\n".join(_blank_line_before_sections(out)) + "\n"


def _blank_line_before_sections(lines: list[str]) -> list[str]:
    """Markdown needs a blank line between a table and the next heading."""
    result: list[str] = []
    for line in lines:
        if line.startswith("## ") and result and result[-1] != "":
            result.append("")
        result.append(line)
    return result
