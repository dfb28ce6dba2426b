"""`flask privacy log|expire|erase`: the operator's view of erasures, the retention sweep for
deployments without Redis (cron), and an erasure asked for outside the API."""

import click

from app.cli import OperatorGroup
from app.data.db import database

privacy_cli = OperatorGroup("privacy", help="Erasure log, retention and erasure of candidates.")


@privacy_cli.command("log")
@click.option("--tenant", default=None, help="Only this tenant's erasures.")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="The newest N entries.",
)
def log_command(tenant, limit):
    """The erasure log, newest first: time, tenant, candidate id, reason, key id, counts (no
    personal data)."""
    import orjson

    from plugins.privacy.models import Erasure
    from plugins.privacy.services import erasures_query

    with database.connection_context():
        entries = list(
            erasures_query(tenant)
            .order_by(Erasure.created_at.desc(), Erasure.id.desc())
            .limit(limit)
        )
    for entry in entries:
        click.echo(
            "\t".join(
                (
                    entry.created_at.isoformat(timespec="milliseconds") + "Z",
                    entry.tenant_id,
                    str(entry.candidate_id),
                    entry.reason,
                    f"key={entry.key_id if entry.key_id else '-'}",
                    orjson.dumps(entry.counts, option=orjson.OPT_SORT_KEYS).decode(),
                )
            )
        )


@privacy_cli.command("expire")
@click.option("--dry-run", is_flag=True, help="Only list the candidates that would be erased.")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    help="At most this many candidates (default HIREKIT_CANDIDATE_RETENTION_BATCH).",
)
def expire_command(dry_run, limit):
    """Erase the candidates past their tenant's candidate_retention_days (one batch); cron it where
    no worker runs."""
    from flask import current_app

    from plugins.privacy.retention import expire

    with database.connection_context():
        expired = expire(
            limit=limit or int(current_app.config["CANDIDATE_RETENTION_BATCH"]), dry_run=dry_run
        )
    for candidate in expired:
        click.echo(
            f"{candidate.tenant_id}\t{candidate.candidate_id}\tlast_active_at="
            f"{candidate.last_active_at.isoformat(timespec='milliseconds')}Z"
        )
    click.echo(f"{len(expired)} candidate(s) {'would be erased' if dry_run else 'erased'}")


@privacy_cli.command("erase")
@click.argument("tenant")
@click.argument("candidate_id")
def erase_command(tenant, candidate_id):
    """Erase one candidate of TENANT, as DELETE /v1/candidates/CANDIDATE_ID does (logged without a
    key id)."""
    from app.errors import NotFound
    from plugins.privacy.erasure import erase_candidate

    with database.connection_context():
        try:
            entry = erase_candidate(tenant, candidate_id)
        except NotFound as exc:
            raise click.ClickException(exc.message) from None
    click.echo(f"erased candidate {entry.candidate_id} of {tenant}: {entry.counts}")
