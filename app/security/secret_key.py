"""The server secret (HIREKIT_SECRET_KEY): how a comma-separated list of keys is read, where the
embedded demo keeps its generated one (INSTANCE_DIR/secret_key), and the errors that stop a server
started without one, or with a setting still holding deploy/env.example's sample value."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

# app.config's: settings are named to operators by their environment variable
ENV_PREFIX = "HIREKIT_"
INSTANCE_FILE_NAME = "secret_key"
MAKE_ONE = "python -c \"import secrets; print(secrets.token_urlsafe(48))\""
MIN_LENGTH = 32  # characters: a short key could be guessed offline from one token and its signature


class MissingSecretKey(RuntimeError):
    """Start-up refused: nothing configures the server secret, so nothing could sign or verify a
    token."""

    def __init__(self, instance_dir: str | Path):
        super().__init__(
            "HIREKIT_SECRET_KEY is not set. The server signs its opaque tokens (person scroll "
            "tokens, list cursors) "
            "with it and will not start without one, and there is no generated one at "
            f"{instance_secret_path(instance_dir)}. Make one with `{MAKE_ONE}` and set "
            "HIREKIT_SECRET_KEY to it "
            "(e.g. in /etc/hirekit/env, see deploy/env.example). To rotate, set "
            "HIREKIT_SECRET_KEY=new,old: the first "
            "signs, every one verifies. For the embedded demo, `flask --app wsgi demo setup` (run "
            "by `make run`) "
            "generates one into the instance directory."
        )


class WeakSecretKey(MissingSecretKey):
    """Start-up refused: a configured key is too short to resist an offline guess from a token it
    signed."""

    def __init__(self, length: int):
        RuntimeError.__init__(
            self,
            f"HIREKIT_SECRET_KEY holds a key of {length} characters; each key needs at least "
            f"{MIN_LENGTH}. "
            f"Make one with `{MAKE_ONE}`.",
        )


class SampleValue(MissingSecretKey):
    """Start-up refused: a setting still holds deploy/env.example's sample value (a metrics token of
    CHANGE-ME reads /metrics for anyone who has read the example file)."""

    def __init__(self, names: list[str]):
        RuntimeError.__init__(
            self,
            f"{', '.join(names)} still {'holds' if len(names) == 1 else 'hold'} the sample value "
            "of "
            f"deploy/env.example ({SAMPLE_VALUE}), which anyone can read. Set each to a secret of "
            "your own "
            f"(make one with `{MAKE_ONE}`), or leave it empty where the setting is optional.",
        )


SAMPLE_VALUE = "CHANGE-ME"  # what deploy/env.example puts wherever an operator must choose a secret


def sample_value_settings(config) -> list[str]:
    """The environment names (HIREKIT_...) of the settings whose value still contains the sample
    value, anywhere in it (a database URL's password included), in any case."""
    marker = SAMPLE_VALUE.lower()
    found = []
    for name, value in config.items():
        values = value if isinstance(value, (list, tuple)) else [value]
        if any(isinstance(item, str) and marker in item.lower() for item in values):
            found.append(ENV_PREFIX + name)
    return sorted(found)


def require(config) -> None:
    """Refuse to serve without a secret, with a key short enough to guess, or with any setting still
    at the example file's sample value (MissingSecretKey / WeakSecretKey / SampleValue)."""
    keys = [config.get("SECRET_KEY"), *(config.get("SECRET_KEY_FALLBACKS") or [])]
    if not keys[0]:
        raise MissingSecretKey(config["INSTANCE_DIR"])
    for key in keys:
        if len(key) < MIN_LENGTH:
            raise WeakSecretKey(len(key))
    samples = sample_value_settings(config)
    if samples:
        raise SampleValue(samples)


def split_keys(value) -> list[str]:
    """'new, old' or ['new', 'old'] -> ['new', 'old']: the first signs, all verify; blanks are
    dropped."""
    if not value:
        return []
    parts = value.split(",") if isinstance(value, str) else [str(part) for part in value]
    return [part.strip() for part in parts if part.strip()]


def instance_secret_path(instance_dir: str | Path) -> Path:
    return Path(instance_dir) / INSTANCE_FILE_NAME


def read_instance_secret(instance_dir: str | Path) -> list[str]:
    """The keys the demo setup generated into the instance directory; [] when there is no such
    file."""
    try:
        return split_keys(instance_secret_path(instance_dir).read_text())
    except FileNotFoundError:
        return []


def ensure_instance_secret(instance_dir: str | Path) -> tuple[Path, bool]:
    """(path, created): generate a secret into the instance directory (mode 0600) unless one is
    there already.

    O_EXCL makes two concurrent setups agree: the loser reads the winner's file."""
    path = instance_secret_path(instance_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path, False
    with os.fdopen(descriptor, "w") as out:
        out.write(secrets.token_urlsafe(48) + "\n")
    return path, True


def demo_secret(config) -> str:
    """What `demo setup` does about the secret, as the line it prints: keep a configured one, else
    generate or reuse the instance file and use it in this process too."""
    instance_dir = config["INSTANCE_DIR"]
    stored = read_instance_secret(instance_dir)
    if config.get("SECRET_KEY") and (not stored or config["SECRET_KEY"] != stored[0]):
        return "server secret: from HIREKIT_SECRET_KEY"
    path, created = ensure_instance_secret(instance_dir)
    keys = read_instance_secret(instance_dir)
    if not keys:
        raise RuntimeError(
            f"{path} holds no key: delete it and run `flask --app wsgi demo setup` again."
        )
    config["SECRET_KEY"], config["SECRET_KEY_FALLBACKS"] = keys[0], keys[1:]
    return (
        f"server secret: {'generated' if created else 'reusing'} {path} (HIREKIT_SECRET_KEY, "
        "when set, wins)"
    )
