"""Operator commands: `flask --app wsgi db|tenants|keys ...`, plus the command groups plugins bring."""

from __future__ import annotations

from pathlib import Path

import click
from flask import current_app
from flask.cli import AppGroup

from app.db import database

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"

db_cli = AppGroup("db", help="Database schema (peewee-migrate migrations under migrations/).")
tenants_cli = AppGroup("tenants", help="Tenants and their first API key.")
keys_cli = AppGroup("keys", help="API keys.")


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
    click.echo(f"applied {len(applied)} migration(s)" + (f": {', '.join(applied)}" if applied else ""))


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
@click.option("--plugin", "plugin_name", default=None, help="Only this plugin's models (the rest of the schema is left as migrated).")
def db_makemigration(name, plugin_name):
    """Write a migration for model changes (developers)."""
    from peewee_migrate.auto import NEWLINE, diff_many
    from peewee_migrate.router import CLEAN_RE

    from app.plugins import all_models, load_plugin

    with database.connection_context():
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


def _compact_header(path: Path, name: str) -> None:
    """peewee-migrate writes a 40-line usage docstring into every file; keep one line instead."""
    import re

    text = path.read_text()
    header = f'"""Migration {name} (peewee-migrate; `flask --app wsgi db upgrade` applies it)."""\n'
    path.write_text(re.sub(r'^""".*?\n"""\n', lambda _: header, text, count=1, flags=re.S))


@tenants_cli.command("create")
@click.argument("slug")
@click.option("--name", default=None, help="Display name (defaults to the id).")
@click.option("--key", default=None, help="Use this key instead of a generated one (at least 24 characters).")
@click.option("--rate-limit", default=None, help='Override the default limit for this tenant, e.g. "6000/minute".')
def tenants_create(slug, name, key, rate_limit):
    """Create a tenant and print its first API key (shown once)."""
    from app.tenancy import TenantError, create_tenant

    try:
        with database.connection_context():
            tenant, plaintext = create_tenant(slug, name, key=key, rate_limit=rate_limit)
    except TenantError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"tenant {tenant.id} created")
    click.echo(f"api key (shown once): {plaintext}")


@tenants_cli.command("list")
def tenants_list():
    """Tenants with their active key count."""
    from app.tenancy import ApiKey, Tenant

    with database.connection_context():
        for tenant in Tenant.select().order_by(Tenant.id):
            active = ApiKey.select().where((ApiKey.tenant == tenant) & (ApiKey.revoked == False)).count()  # noqa: E712
            click.echo(f"{tenant.id}\t{tenant.name}\tkeys={active}\trate_limit={tenant.rate_limit or 'default'}")


@keys_cli.command("create")
@click.argument("tenant")
@click.option("--key", default=None, help="Use this key instead of a generated one (at least 24 characters).")
def keys_create(tenant, key):
    """Issue another key for a tenant (shown once)."""
    from app.tenancy import TenantError, create_key

    try:
        with database.connection_context():
            plaintext = create_key(tenant, key=key)
    except TenantError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"api key (shown once): {plaintext}")


@keys_cli.command("revoke")
@click.argument("prefix")
def keys_revoke(prefix):
    """Revoke the key(s) with this visible prefix."""
    from app.tenancy import revoke_key

    with database.connection_context():
        count = revoke_key(prefix)
    if not count:
        raise click.ClickException(f"no active key with prefix {prefix!r}")
    click.echo(f"revoked {count} key(s)")


@tenants_cli.command("ensure")
@click.argument("slug")
def tenants_ensure(slug):
    """Create the tenant if it is missing, then issue and print a fresh key (for demos and scripts)."""
    from app.tenancy import Tenant, create_key, create_tenant

    with database.connection_context():
        if Tenant.get_or_none(Tenant.id == slug) is None:
            _, plaintext = create_tenant(slug)
        else:
            plaintext = create_key(slug)
    click.echo(f"api key (shown once): {plaintext}")


demo_cli = AppGroup("demo", help="A working embedded setup on a fresh machine.")


@demo_cli.command("setup")
@click.option("--tenant", default="demo", show_default=True)
def demo_setup(tenant):
    """Migrate the database, run each plugin's demo step (e.g. sample datasets), print a key for the demo tenant."""
    applied = upgrade_database()
    click.echo(f"database ready ({len(applied)} migration(s) applied)")
    for setup in current_app.extensions.get("hirekit_demo_steps", []):
        setup()
    ctx = click.get_current_context()
    ctx.invoke(tenants_ensure, slug=tenant)
    port = current_app.config.get("PORT") or "8000"
    click.echo(f"try: curl -H 'Authorization: Bearer <key>' 'http://127.0.0.1:{port}/v1/jobs?page=1&size=10'  (docs: /docs)")


def add_demo_step(app, step) -> None:
    """A plugin's part of `demo setup` (runs inside the app context)."""
    app.extensions.setdefault("hirekit_demo_steps", []).append(step)


def core_models() -> list:
    from app import events, tenancy

    return list(tenancy.MODELS) + list(events.MODELS)


def register_commands(app) -> None:
    for group in (db_cli, tenants_cli, keys_cli, demo_cli):
        app.cli.add_command(group)
    for plugin in current_plugins(app):
        for command in plugin.cli:
            app.cli.add_command(command)


def current_plugins(app):
    return list(app.extensions.get("hirekit_plugins", {}).values())
