"""`flask candidates do-not-call import|list`: the operator's bulk import of a tenant's do-not-call
list from a file."""

import click

from app.cli import OperatorGroup
from app.data.db import database

candidates_cli = OperatorGroup("candidates", help="Candidates' contact settings.")
do_not_call_cli = OperatorGroup("do-not-call", help="A tenant's do-not-call list.")
candidates_cli.add_command(do_not_call_cli)


def read_numbers(lines) -> tuple[list[str], list[tuple[int, str, str]]]:
    """(the E.164 numbers of a file, one a line (or first CSV column); [(line number, text, why)] of
    refused ones). Blank lines, lines starting with # and a first line naming a column are
    skipped."""
    import marshmallow as ma

    from plugins.candidates.schemas import PhoneNumber

    field = PhoneNumber()
    numbers, refused = [], []
    for number, line in enumerate(lines, start=1):
        text = line.split(",", 1)[0].strip().strip('"')
        if (
            not text
            or text.startswith("#")
            or (number == 1 and not any(ch.isdigit() for ch in text))
        ):
            continue
        try:
            numbers.append(field.deserialize(text))
        except ma.ValidationError as error:
            refused.append((number, text, " ".join(error.messages)))
    return numbers, refused


@do_not_call_cli.command("import")
@click.argument("tenant")
@click.argument("file", type=click.File("r", encoding="utf-8"))
@click.option("--strict", is_flag=True, help="Import nothing when any line is not a phone number.")
def import_command(tenant, file, strict):
    """Add every number of FILE (one E.164 number a line, or a CSV whose first column is one) to
    TENANT's list."""
    from app.data.tenancy import Tenant
    from plugins.candidates.do_not_call import add_numbers

    numbers, refused = read_numbers(file)
    for line, text, why in refused:
        click.echo(f"line {line}: {text!r} refused: {why}", err=True)
    if strict and refused:
        raise click.ClickException(f"{len(refused)} line(s) refused; nothing imported (--strict)")
    with database.connection_context():
        if Tenant.get_or_none(Tenant.id == tenant) is None:
            raise click.ClickException(f"no tenant {tenant!r}")
        added = add_numbers(tenant, numbers)
    click.echo(
        f"{added} number(s) added, {len(numbers) - added} already listed, {len(refused)} refused"
    )


@do_not_call_cli.command("list")
@click.argument("tenant")
def list_command(tenant):
    """Print TENANT's do-not-call numbers, oldest first."""
    from plugins.candidates.do_not_call import DoNotCallNumber

    with database.connection_context():
        query = (
            DoNotCallNumber.select()
            .where(DoNotCallNumber.tenant == tenant)
            .order_by(DoNotCallNumber.created_at, DoNotCallNumber.id)
        )
        for entry in query:
            click.echo(entry.phone_no)
