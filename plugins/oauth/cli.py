"""`flask users create|list|set-password|disable|enable|delete`: the people of a tenant who sign in
to authorize agent hosts on the MCP servers; `flask oauth purge`: expired codes and tokens
deleted."""

import click

from app.cli import OperatorGroup, YES_OPTION, confirm_or_abort
from app.data.db import database

users_cli = OperatorGroup(
    "users", help="Tenant users who sign in to authorize MCP clients (agent hosts)."
)


def read_password(password: str | None) -> str:
    return (
        password
        if password is not None
        else click.prompt("Password", hide_input=True, confirmation_prompt=True)
    )


@users_cli.command("create")
@click.argument("tenant")
@click.argument("email")
@click.option("--name", default=None, help="The person's name (default: the email).")
@click.option("--password", default=None, help="The password (default: asked for, hidden).")
@click.option("--admin", is_flag=True, help="The user may manage the tenant's users.")
def create_command(tenant, email, name, password, admin):
    """Create a user of TENANT who signs in with EMAIL."""
    from plugins.oauth.users import UserError, create_user

    with database.connection_context():
        try:
            user = create_user(tenant, email, name or email, read_password(password), admin=admin)
        except UserError as error:
            raise click.ClickException(str(error)) from None
    click.echo(f"created user {user.email} ({user.id}) of tenant {tenant}")


@users_cli.command("list")
@click.argument("tenant")
def list_command(tenant):
    """The users of TENANT: id, email, name, admin, disabled."""
    from plugins.oauth.models import OAuthUser

    with database.connection_context():
        rows = list(
            OAuthUser.select().where(OAuthUser.tenant == tenant).order_by(OAuthUser.created_at)
        )
    for user in rows:
        click.echo(
            "\t".join(
                (
                    str(user.id),
                    user.email,
                    user.name,
                    "admin" if user.admin else "-",
                    "disabled" if user.disabled else "enabled",
                )
            )
        )


@users_cli.command("set-password")
@click.argument("email")
@click.option("--password", default=None, help="The new password (default: asked for, hidden).")
def set_password_command(email, password):
    """Give the user with EMAIL a new password."""
    from plugins.oauth.users import UserError, find_user, set_password

    with database.connection_context():
        try:
            set_password(find_user(email), read_password(password))
        except UserError as error:
            raise click.ClickException(str(error)) from None
    click.echo(f"password changed for {email}")


def set_disabled(email: str, disabled: bool) -> None:
    from plugins.oauth.users import find_user

    with database.connection_context():
        user = find_user(email)
        user.disabled = disabled
        user.save()


@users_cli.command("disable")
@click.argument("email")
def disable_command(email):
    """Stop the user from signing in; their access tokens stop working at once."""
    set_disabled(email, True)
    click.echo(f"disabled {email}")


@users_cli.command("enable")
@click.argument("email")
def enable_command(email):
    """Let a disabled user sign in again."""
    set_disabled(email, False)
    click.echo(f"enabled {email}")


@users_cli.command("delete")
@click.argument("email")
@YES_OPTION
def delete_command(email, yes):
    """Delete the user with EMAIL, their authorizations and tokens."""
    from plugins.oauth.users import find_user

    confirm_or_abort(yes, f"Delete the user {email} and every token they authorized?")
    with database.connection_context():
        find_user(email).delete_instance(recursive=True)
    click.echo(f"deleted {email}")


oauth_cli = OperatorGroup("oauth", help="The authorization server's upkeep.")


@oauth_cli.command("purge")
def purge_command():
    """Delete expired authorization codes and tokens (a worker does it every
    HIREKIT_OAUTH_PURGE_INTERVAL; without Redis, run this from cron)."""
    from plugins.oauth.expiry import described, purge_expired

    with database.connection_context():
        click.echo(described(purge_expired()))
