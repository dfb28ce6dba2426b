"""Operator commands: `flask --app wsgi db|tenants|keys ...`, plus the command groups plugins
bring."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import click
from flask import current_app
from flask.cli import AppGroup

from app.data.db import database

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"


class OperatorGroup(AppGroup):
    """A command group whose commands report a refused operator input (a bad slug, an unknown tenant
    or plugin) or a database that does not exist or refuses connections as one `Error:` line and
    exit status 1, never as a traceback."""

    def invoke(self, ctx):
        import peewee

        from app.plugins import PluginError
        from app.server.startup_checks import database_unusable
        from app.data.tenancy import TenantError

        try:
            return super().invoke(ctx)
        except (TenantError, PluginError) as exc:
            raise click.ClickException(str(exc)) from exc
        except peewee.OperationalError as exc:
            raise click.ClickException(
                database_unusable(exc, current_app.config["DATABASE_URL"])
            ) from exc


YES_OPTION = click.option(
    "--yes", "-y", is_flag=True, help="Do not ask for confirmation (for scripts)."
)


def confirm_or_abort(yes: bool, question: str) -> None:
    """Ask before a destructive step unless --yes was given; anything but y (an empty stdin
    included) aborts."""
    if not yes:
        click.confirm(question, abort=True)


db_cli = OperatorGroup("db", help="Database schema (peewee-migrate migrations under migrations/).")
tenants_cli = OperatorGroup("tenants", help="Tenants and their first API key.")
keys_cli = OperatorGroup("keys", help="API keys.")


def run_sweep(sweep, counted: str) -> None:
    """A cron command's body: run `sweep` in a database connection and echo the count it returns,
    `<count> <counted>`."""
    with database.connection_context():
        count = sweep()
    click.echo(f"{count} {counted}")


def migration_router():
    from peewee_migrate import Router

    return Router(database.obj, migrate_dir=str(MIGRATIONS_DIR), ignore=["basemodel"])


def upgrade_database() -> list[str]:
    """Apply every pending migration; returns the names applied."""
    with database.connection_context():
        return migration_router().run()


@db_cli.command("upgrade")
def db_upgrade():
    """Apply pending migrations."""
    applied = upgrade_database()
    click.echo(
        f"applied {len(applied)} migration(s)" + (f": {', '.join(applied)}" if applied else "")
    )


@db_cli.command("status")
def db_status():
    """List applied and pending migrations."""
    with database.connection_context():
        router = migration_router()
        for name in router.done:
            click.echo(f"applied  {name}")
        for name in router.diff:
            click.echo(f"pending  {name}")


@db_cli.command("makemigration")
@click.argument("name")
@click.option(
    "--plugin",
    "plugin_name",
    default=None,
    help="Only this plugin's models (the rest of the schema is left as migrated).",
)
def db_makemigration(name, plugin_name):
    """Write a migration for model changes (developers)."""
    from unittest import mock

    from peewee_migrate.auto import NEWLINE, diff_many
    from peewee_migrate.router import CLEAN_RE

    from app.plugins import all_models, load_plugin

    with (
        database.connection_context(),
        mock.patch("peewee_migrate.auto.diff_model_indexes", diff_indexes_by_columns),
    ):
        router = migration_router()
        for migration in router.diff:
            router.run_one(migration, router.migrator, fake=True)
        if plugin_name:
            own = list(load_plugin(plugin_name).models) if plugin_name != "core" else core_models()
            own_tables = {m._meta.table_name for m in own}
            others = [m for m in router.migrator.orm if m._meta.table_name not in own_tables]
            models = list(own) + others
        else:
            models = all_models()
        migrate = diff_many(models, list(router.migrator.orm), router.migrator)
        if not migrate:
            click.echo("no changes")
            return
        rollback = diff_many(list(router.migrator.orm), models, router.migrator, reverse=True)

        def indent(changes):
            return CLEAN_RE.sub("\n", NEWLINE + NEWLINE.join("\n\n".join(changes).split("\n")))

        created = router.compile(name, indent(migrate), indent(rollback))
        _compact_header(MIGRATIONS_DIR / f"{created}.py", created)
        click.echo(f"created migrations/{created}.py")


# What the migration generator relies on in peewee and peewee-migrate beyond their documented API
# (tests/test_private_overrides.py checks it against the code), with what a user would notice
# without it.
PRIVATE_OVERRIDES = {
    "peewee": {
        "private ._unique": "an index's uniqueness (peewee's Index): without matching indexes by "
        "columns, `flask "
        "--app wsgi db makemigration` on an unchanged schema writes a drop and a re-add of each of "
        "the 59 indexes of the 19 tables",
        "private ._expressions": "an index's columns (peewee's Index), for the same 59 indexes",
    },
    "peewee-migrate": {
        "private import peewee_migrate.auto._is_implicit_field_index": "peewee-migrate's test for "
        "the 1-column index "
        "a field's own add/drop makes, which would otherwise be written twice",
    },
}


def diff_indexes_by_columns(
    model, source, *, fields_to_add=None, fields_to_remove=None
) -> list[str]:
    """peewee-migrate's index diff with indexes matched by their columns and uniqueness, not by
    name. The migrations' frozen models name an index after the model class (job_tenant_id_number),
    the live models after the table (jobs_tenant_id_number), so matching by name wrote a drop and a
    re-add of every index of an unchanged table."""
    from peewee_migrate.auto import _is_implicit_field_index, add_index, drop_index

    def by_signature(indexes) -> dict:
        return {
            (
                index._unique,
                tuple(getattr(part, "column_name", str(part)) for part in index._expressions),
            ): index
            for index in indexes
        }

    wanted = by_signature(model._meta.fields_to_index())
    present = by_signature(source._meta.fields_to_index())
    dropped = [
        drop_index(index)
        for signature, index in sorted(present.items())
        if signature not in wanted
        and not _is_implicit_field_index(index, fields_to_remove or set())
    ]
    added = [
        add_index(index)
        for signature, index in sorted(wanted.items())
        if signature not in present and not _is_implicit_field_index(index, fields_to_add or set())
    ]
    return dropped + added


def _compact_header(path: Path, name: str) -> None:
    """peewee-migrate writes a 40-line usage docstring into every file; keep one line instead."""
    import re

    text = path.read_text()
    header = f'"""Migration {name} (peewee-migrate; `flask --app wsgi db upgrade` applies it)."""\n'
    path.write_text(re.sub(r'^""".*?\n"""\n', lambda _: header, text, count=1, flags=re.S))


def chosen_key_options(command):
    """--key, --key-prompt and --key-env: an operator-chosen key, from the command line, a hidden
    prompt or a variable.

    The command receives `key` (None for a generated one); a key given on the command line lands in
    shell history."""

    @click.option(
        "--key",
        "key_argument",
        default=None,
        metavar="KEY",
        help="Use this key instead of a generated one: 'hk_' and at least 32 random URL-safe "
        "characters. "
        "It stays in your shell history: prefer --key-prompt or --key-env.",
    )
    @click.option(
        "--key-prompt", is_flag=True, default=False, help="Type the chosen key at a hidden prompt."
    )
    @click.option(
        "--key-env",
        default=None,
        metavar="NAME",
        help="Read the chosen key from environment variable NAME.",
    )
    @functools.wraps(command)
    def wrapper(*args, key_argument, key_prompt, key_env, **kwargs):
        if sum((key_argument is not None, key_prompt, key_env is not None)) > 1:
            raise click.UsageError("give the key one way: --key, --key-prompt or --key-env")
        key = key_argument
        if key_argument is not None:
            click.echo(
                "note: a key given with --key stays in your shell history; --key-prompt or "
                "--key-env do not",
                err=True,
            )
        elif key_prompt:
            key = click.prompt("API key", hide_input=True, confirmation_prompt=True)
        elif key_env is not None:
            key = os.environ.get(key_env)
            if not key:
                raise click.UsageError(f"environment variable {key_env} is not set or empty")
        return command(*args, key=key.strip() if key is not None else None, **kwargs)

    return wrapper


def report_new_key(plaintext: str, chosen: bool) -> None:
    """Print a generated key once (with its id); a chosen key is not echoed back, only its id and
    prefix."""
    from app.data.tenancy import key_for

    row = key_for(plaintext)
    if chosen:
        click.echo(f"api key: the chosen one, id {row.id}, prefix {row.prefix}")
    else:
        click.echo(f"api key (shown once): {plaintext}")
        click.echo(f"key id: {row.id}")


@tenants_cli.command("create")
@click.argument("slug")
@click.option("--name", default=None, help="Display name (defaults to the id).")
@chosen_key_options
@click.option(
    "--rate-limit",
    default=None,
    help='Override the default limit for this tenant, e.g. "6000/minute".',
)
@click.option(
    "--candidate-retention-days",
    type=click.IntRange(min=1),
    default=None,
    help="Erase candidates with no activity for longer than this many days (default: kept until "
    "erased).",
)
def tenants_create(slug, name, key, rate_limit, candidate_retention_days):
    """Create a tenant and print its first API key (shown once)."""
    from app.data.tenancy import create_tenant

    with database.connection_context():
        tenant, plaintext = create_tenant(
            slug,
            name,
            key=key,
            rate_limit=rate_limit,
            candidate_retention_days=candidate_retention_days,
        )
        click.echo(f"tenant {tenant.id} created")
        report_new_key(plaintext, chosen=key is not None)


@tenants_cli.command("update")
@click.argument("slug")
@click.option("--name", default=None, help="New display name.")
@click.option("--rate-limit", default=None, help='The tenant\'s own limit, e.g. "6000/minute".')
@click.option(
    "--default-rate-limit",
    is_flag=True,
    help="Drop the tenant's own limit: HIREKIT_RATE_LIMIT applies again.",
)
@click.option(
    "--candidate-retention-days",
    type=click.IntRange(min=1),
    default=None,
    help="Erase candidates with no activity for longer than this many days.",
)
@click.option(
    "--keep-candidates",
    is_flag=True,
    help="Drop the candidate retention: candidates are kept until erased.",
)
def tenants_update(
    slug, name, rate_limit, default_rate_limit, candidate_retention_days, keep_candidates
):
    """Change an existing tenant's name, rate limit (every worker applies it within
    HIREKIT_AUTH_CACHE_SECONDS) or candidate retention."""
    from app.data.tenancy import update_tenant

    if (
        name is None
        and rate_limit is None
        and not default_rate_limit
        and candidate_retention_days is None
        and not keep_candidates
    ):
        raise click.UsageError(
            "nothing to change: give --name, --rate-limit, --default-rate-limit, "
            "--candidate-retention-days or --keep-candidates"
        )
    with database.connection_context():
        tenant = update_tenant(
            slug,
            name=name,
            rate_limit=rate_limit,
            default_rate_limit=default_rate_limit,
            candidate_retention_days=candidate_retention_days,
            keep_candidates=keep_candidates,
        )
    retention = (
        f" candidate_retention_days={tenant.candidate_retention_days or 'none'}"
        if candidate_retention_days is not None or keep_candidates
        else ""
    )
    click.echo(
        f"tenant {tenant.id} updated: name={tenant.name} rate_limit="
        f"{tenant.rate_limit or 'default'}{retention}"
    )


@tenants_cli.command("list")
def tenants_list():
    """Tenants with their active key count (one query)."""
    import peewee as pw

    from app.data.tenancy import ApiKey, Tenant

    active_keys = pw.fn.COUNT(ApiKey.id).alias("active_keys")
    tenants = (
        Tenant.select(Tenant, active_keys)
        .join(
            ApiKey,
            pw.JOIN.LEFT_OUTER,
            on=(ApiKey.tenant == Tenant.id) & (ApiKey.revoked == False),  # noqa: E712
        )
        .group_by(Tenant.id)
        .order_by(Tenant.id)
    )
    with database.connection_context():
        for tenant in tenants:
            retention = (
                f"\tcandidate_retention_days={tenant.candidate_retention_days}"
                # shown where set: candidates are kept by default
                if tenant.candidate_retention_days
                else ""
            )
            click.echo(
                f"{tenant.id}\t{tenant.name}\tkeys={tenant.active_keys}\trate_limit="
                f"{tenant.rate_limit or 'default'}"
                f"{retention}"
            )


@keys_cli.command("create")
@click.argument("tenant")
@chosen_key_options
def keys_create(tenant, key):
    """Issue another key for a tenant (shown once)."""
    from app.data.tenancy import create_key

    with database.connection_context():
        plaintext = create_key(tenant, key=key)
        report_new_key(plaintext, chosen=key is not None)


@keys_cli.command("list")
@click.argument("tenant")
def keys_list(tenant):
    """A tenant's keys, revoked ones too: id, prefix, created, last used (to the minute),
    revoked."""
    from app.data.tenancy import tenant_keys

    def moment(value):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value else "never"

    with database.connection_context():
        keys = tenant_keys(tenant)
    click.echo("id\tprefix\tcreated\tlast used\trevoked")
    for key in keys:
        click.echo(
            f"{key.id}\t{key.prefix}\t{moment(key.created_at)}\t{moment(key.last_used_at)}\t"
            f"{'yes' if key.revoked else 'no'}"
        )


@keys_cli.command("revoke")
@click.argument("prefix", required=False)
@click.option(
    "--id",
    "key_id",
    type=int,
    default=None,
    help="Revoke the key with this id (see `keys list TENANT`).",
)
@YES_OPTION
def keys_revoke(prefix, key_id, yes):
    """Revoke one key: by its visible prefix when no other active key shares it, or by --id. Asks
    first unless --yes."""
    from app.data.tenancy import revoke_key, revoke_key_id

    if (prefix is None) == (key_id is None):
        raise click.UsageError("give a key's visible prefix or --id ID (one of them)")
    confirm_or_abort(
        yes,
        f"Revoke the key {'with prefix ' + repr(prefix) if key_id is None else f'with id {key_id}'}"
        "? "
        "Clients using it get 401 from then on",
    )
    with database.connection_context():
        count = revoke_key(prefix) if key_id is None else revoke_key_id(key_id)
    if not count:
        raise click.ClickException(
            f"no active key with prefix {prefix!r}"
            if key_id is None
            else f"no active key with id {key_id}"
        )
    click.echo(f"revoked {count} key(s)")


@tenants_cli.command("ensure")
@click.argument("slug")
def tenants_ensure(slug):
    """Create the tenant if it is missing, then issue and print a fresh key (for demos and
    scripts)."""
    from app.data.tenancy import Tenant, create_key, create_tenant

    with database.connection_context():
        if Tenant.get_or_none(Tenant.id == slug) is None:
            _, plaintext = create_tenant(slug)
        else:
            plaintext = create_key(slug)
    click.echo(f"api key (shown once): {plaintext}")


def active_keys_of(tenant: str) -> list:
    """The tenant's keys that are not revoked, oldest first; none when there is no such tenant."""
    from app.data.tenancy import Tenant, tenant_keys

    with database.connection_context():
        if Tenant.get_or_none(Tenant.id == tenant) is None:
            return []
        return [key for key in tenant_keys(tenant) if not key.revoked]


config_cli = OperatorGroup("config", help="The settings of app/config.py.")


@config_cli.command("docs")
def config_docs():
    """Print docs/configuration.md (every setting: name, default, meaning), generated from
    app/config.py."""
    from app.config_docs import configuration_page

    click.echo(configuration_page(), nl=False)


demo_cli = OperatorGroup("demo", help="A working embedded setup on a fresh machine.")


@demo_cli.command("setup")
@click.option("--tenant", default="demo", show_default=True)
def demo_setup(tenant):
    """Generate the server secret (once, into the instance directory), migrate the database, run
    each plugin's demo step (e.g. sample datasets), print a key for the demo tenant (only the first
    time: later runs say where keys come from)."""
    from app.security.secret_key import demo_secret

    click.echo(demo_secret(current_app.config))
    applied = upgrade_database()
    click.echo(f"database ready ({len(applied)} migration(s) applied)")
    for setup in current_app.extensions.get("hirekit_demo_steps", []):
        setup()
    existing = active_keys_of(tenant)
    # a second `make run`: the key printed the first time still works, keys are never shown again
    if existing:
        click.echo(
            f"api key: tenant {tenant!r} already has {len(existing)} active key(s) (the newest "
            "starts "
            f"{existing[-1].prefix}); use the one printed when it was made, or make another with "
            f"`flask --app wsgi keys create {tenant}`"
        )
    else:
        click.get_current_context().invoke(tenants_ensure, slug=tenant)
    port = current_app.config.get("PORT") or "8000"
    click.echo(
        f"try: curl -H 'Authorization: Bearer <key>' 'http://127.0.0.1:{port}"
        "/v1/jobs?page=1&size=10'  (docs: /docs)"
    )


openapi_cli = OperatorGroup(
    "openapi",
    help="The OpenAPI document kept in the repository as the contract (docs/openapi.json).",
)


@openapi_cli.command("write")
@click.argument("path", required=False, type=click.Path(dir_okay=False, path_type=Path))
def openapi_write(path):
    """Write the document the code builds to PATH (default docs/openapi.json); refused while a
    breaking change from the document there is not named in CHANGELOG.md."""
    from app.http import openapi_contract as contract

    path = path or contract.SNAPSHOT
    document = contract.built_document(current_app.extensions["hirekit_factory"])
    previous = contract.read_snapshot(path)
    unnamed = contract.unnamed_in_changelog(contract.breaking_changes(previous or {}, document))
    if unnamed:
        raise click.ClickException(
            f"breaking changes not named in CHANGELOG.md (name each subject in backticks under "
            f"Unreleased, then run this again):\n{contract.describe(unnamed)}"
        )
    path.write_text(contract.serialized(document))
    click.echo(
        f"wrote {path} ({len(document['paths'])} paths, {len(document['components']['schemas'])} "
        "schemas)"
    )


def add_demo_step(app, step) -> None:
    """A plugin's part of `demo setup` (runs inside the app context)."""
    app.extensions.setdefault("hirekit_demo_steps", []).append(step)


def core_models() -> list:
    from app.data import events, tenancy

    return list(tenancy.MODELS) + list(events.MODELS)


def register_commands(app) -> None:
    from app.background.worker import worker_command

    for group in (db_cli, tenants_cli, keys_cli, config_cli, demo_cli, openapi_cli, worker_command):
        app.cli.add_command(group)
    for plugin in current_plugins(app):
        for command in plugin.cli:
            app.cli.add_command(command)


def current_plugins(app):
    return list(app.extensions.get("hirekit_plugins", {}).values())
