"""`flask --app wsgi person sample|load|stats|create-index`: build, load and inspect the person
datasets."""

from __future__ import annotations

import os
import time

import click
import orjson
from flask import current_app
from flask.cli import AppGroup

from app.cli import YES_OPTION, confirm_or_abort
from plugins.person import datasets, sample
from plugins.person.loader import BadIdsFile, load_file, read_ids
from plugins.person.pools import fork_pool
from plugins.person.priority import run_in_background

person_cli = AppGroup(
    "person",
    help="Person datasets: generate a sample, load JSONL into the search backend, inspect it.",
)

SANDBOX_OPTION = click.option(
    "--sandbox",
    is_flag=True,
    help="Act on the sandbox dataset (HIREKIT_SANDBOX_*) instead of production.",
)


def _chunk_lines(args) -> bytes:
    seed, start, count, version = args
    return b"".join(
        orjson.dumps(p) + b"\n"
        for p in sample.generate(count, seed, start=start, dataset_version=version)
    )


def write_sample(
    path: str,
    count: int,
    seed: int,
    *,
    dataset_version: str | None = None,
    processes: int | None = None,
    progress=None,
) -> None:
    """Write `count` generated profiles to `path` (JSONL), chunks generated in parallel and written
    in order."""
    jobs = [
        (seed, start, min(sample.CHUNK, count - start), dataset_version)
        for start in range(0, count, sample.CHUNK)
    ]
    processes = processes or os.cpu_count() or 1
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    temporary = f"{path}.partial"
    with open(temporary, "wb") as out:
        if processes > 1 and len(jobs) > 1:
            with fork_pool(processes) as pool:
                for blob, job in zip(pool.imap(_chunk_lines, jobs), jobs):
                    out.write(blob)
                    progress and progress(job[2])
        else:
            for job in jobs:
                out.write(_chunk_lines(job))
                progress and progress(job[2])
    os.replace(temporary, path)


@person_cli.command("sample")
@click.option("--count", default=10_000, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--seed",
    default=1,
    show_default=True,
    type=int,
    help="Same seed, same people; different seeds, different ids.",
)
@click.option(
    "--out", "out", required=True, type=click.Path(dir_okay=False), help="JSONL file to write."
)
@click.option(
    "--dataset-version", default=None, help="Written into each profile (default sample-<seed>)."
)
@click.option(
    "--processes",
    default=None,
    type=click.IntRange(min=1),
    help="Generator processes (default: CPU count).",
)
def sample_command(count, seed, out, dataset_version, processes):
    """Generate COUNT realistic synthetic profiles into a JSONL file."""
    started = time.perf_counter()
    with click.progressbar(length=count, label=f"generating {count} profiles") as bar:
        write_sample(
            out,
            count,
            seed,
            dataset_version=dataset_version,
            processes=processes,
            progress=bar.update,
        )
    elapsed = time.perf_counter() - started
    click.echo(
        f"wrote {count} profiles to {out} in {elapsed:.1f}s ({count / elapsed:,.0f} profiles/s)"
    )


# on a machine its searches keep busy, each share of a core a load takes shows in their latency
BACKGROUND_PACE = 0.1


@person_cli.command("load")
@click.argument("path", required=False, type=click.Path(exists=True, dir_okay=False))
@SANDBOX_OPTION
@click.option(
    "--replace",
    is_flag=True,
    help="Empty the dataset first (readers keep the old data until the commit).",
)
@click.option(
    "--upsert",
    is_flag=True,
    help="PATH is a delta: records whose id exists replace it, new ones are added, all "
    "published at once (a malformed line publishes nothing).",
)
@click.option(
    "--delete-ids",
    "delete_ids",
    type=click.Path(exists=True, dir_okay=False),
    help="Remove "
    "the ids listed in this file (one per line), in the same publish as PATH's records.",
)
@click.option(
    "--dataset-version",
    default=None,
    help="Default: the records' dataset_version, else today's date.",
)
@click.option(
    "--processes",
    default=None,
    type=click.IntRange(min=1),
    help="Parser processes (default: CPU count).",
)
@click.option(
    "--threads",
    default=0,
    type=click.IntRange(min=0),
    help="Engine indexing threads (0: automatic).",
)
@click.option(
    "--background/--foreground",
    default=None,
    help="--background (a delta's default): run at idle CPU priority (SCHED_IDLE, else nice 10) "
    "with one "
    "indexing thread, so searches served from this machine keep its cores; --foreground (a whole "
    "load's "
    "default): full speed.",
)
@click.option(
    "--pace",
    default=None,
    type=click.FloatRange(min=0, max=1, min_open=True),
    help="The most of one core the load uses, resting after each batch (default: "
    f"{BACKGROUND_PACE:g} in the background, 1 in the foreground).",
)
@YES_OPTION
def load_command(
    path,
    sandbox,
    replace,
    upsert,
    delete_ids,
    dataset_version,
    processes,
    threads,
    background,
    pace,
    yes,
):
    """Stream a JSONL file into the search backend, upserting by id; malformed lines are reported
    and skipped.
    --replace asks first unless --yes. --upsert and --delete-ids apply a dataset delta: searches
    answer from the previous version until the whole delta is published, and the dataset_version
    advances only then."""
    if replace and (upsert or delete_ids):
        raise click.UsageError(
            "--replace loads a whole dataset; a delta (--upsert, --delete-ids) cannot be combined "
            "with it"
        )
    if path is None and not delete_ids:
        raise click.UsageError("give a JSONL file to load, or --delete-ids FILE")
    if upsert and path is None:
        raise click.UsageError("--upsert needs the JSONL file of the delta's records")
    try:
        removed = read_ids(delete_ids) if delete_ids else []
    except BadIdsFile as error:
        raise click.ClickException(f"{delete_ids}: {error}; nothing was changed") from None
    backend = _backend(sandbox)
    side = "sandbox" if sandbox else "production"
    if replace:
        confirm_or_abort(yes, f"Replace every profile of the {side} dataset with {path}?")
    if background is None:
        background = bool(upsert or delete_ids)
    pace = pace or (BACKGROUND_PACE if background else 1.0)
    if background:
        click.echo(
            f"loading in the background: {run_in_background()}, one indexing thread unless "
            "--threads, using at "
            f"most {pace:.0%} of a core (--pace)",
            err=True,
        )
        threads = threads or 1
    total_bytes = os.path.getsize(path) if path else 0
    with click.progressbar(
        length=max(1, total_bytes), label=f"loading {os.path.basename(path or delete_ids)}"
    ) as bar:
        per_line = max(1, total_bytes // max(1, _estimate_lines(path))) if path else 0
        report = load_file(
            backend,
            path,
            replace=replace,
            upsert=upsert,
            delete_ids=removed,
            dataset_version=dataset_version,
            processes=processes,
            writer_threads=threads,
            progress=lambda lines: bar.update(lines * per_line),
            pace=pace,
        )
    for line_no, reason in report.skipped[:50]:
        click.echo(
            f"line {line_no}: {'rejected' if not report.published else 'skipped'}: {reason}",
            err=True,
        )
    if len(report.skipped) > 50:
        click.echo(f"... and {len(report.skipped) - 50} more", err=True)
    if not report.published:
        raise click.ClickException(
            f"{len(report.skipped)} malformed line(s) in the delta {path}: nothing was published, "
            "the dataset is unchanged; fix the lines and apply the delta again"
        )
    rate = report.loaded / report.seconds if report.seconds else 0
    click.echo(
        f"loaded {report.loaded} profiles into the {side} dataset ({backend.name}) in "
        f"{report.seconds:.1f}s "
        f"({rate:,.0f} profiles/s)"
        + (f"; removed {report.deleted} of {len(removed)} listed ids" if delete_ids else "")
    )
    if report.count is not None:
        click.echo(f"published: {report.count} profiles in the dataset")
    if report.skipped:
        raise click.ClickException(
            f"{len(report.skipped)} malformed line(s) skipped; every other line was loaded"
        )


def _estimate_lines(path: str) -> int:
    with open(path, "rb") as handle:
        head = handle.read(1 << 20)
    lines = head.count(b"\n") or 1
    return max(1, int(lines * os.path.getsize(path) / max(1, len(head))))


@person_cli.command("stats")
@SANDBOX_OPTION
def stats_command(sandbox):
    """Show the backend, dataset version and profile count."""
    backend = _backend(sandbox)
    info = backend.dataset_info()
    click.echo(f"backend: {backend.name}")
    click.echo(f"dataset_version: {info.get('dataset_version')}")
    click.echo(f"profiles: {info.get('count')}")


@person_cli.command("create-index")
@SANDBOX_OPTION
@click.option("--replace", is_flag=True, help="Drop an existing index first.")
@YES_OPTION
def create_index_command(sandbox, replace, yes):
    """Create the index with the mapping derived from the person schema (Elasticsearch or embedded).
    --replace asks first unless --yes."""
    backend = _backend(sandbox)
    if replace:
        confirm_or_abort(
            yes, f"Drop the {'sandbox' if sandbox else 'production'} index and every profile in it?"
        )
    backend.create_index(replace=replace)
    click.echo(f"index ready ({backend.name})")


def _backend(sandbox: bool):
    backend = datasets.build_backend(current_app.config, sandbox)
    if backend is None:
        raise click.ClickException(
            "the search backend is `none` (or has no URL): set HIREKIT_SEARCH_BACKEND / "
            "HIREKIT_SANDBOX_SEARCH_BACKEND"
        )
    return backend


@person_cli.command("suppress")
@click.option(
    "--email",
    default=None,
    help="Suppress the person with this email (any of their profile's emails).",
)
@click.option("--id", "person_id", default=None, help="Suppress the person with this dataset id.")
@click.option("--list", "list_all", is_flag=True, help="List the suppression list instead.")
@click.option("--remove", is_flag=True, help="Take the --email or --id off the list instead.")
def suppress_command(email, person_id, list_all, remove):
    """Keep a person who opted out out of every person answer (search, enrich, bulk, retrieve,
    identify), on both backends and across dataset reloads; --list shows the list, --remove takes
    one off it."""
    from app.data.db import database
    from plugins.person import suppression

    with database.connection_context():
        if list_all:
            if email or person_id or remove:
                raise click.UsageError("--list takes no --email, --id or --remove")
            for entry in suppression.entries():
                click.echo(
                    f"{entry.kind}\t{entry.value}\t{entry.created_at.isoformat(timespec='seconds')}Z"
                )
            return
        if bool(email) == bool(person_id):
            raise click.UsageError("give one of --email or --id (or --list)")
        kind, value = (suppression.EMAIL, email) if email else (suppression.ID, person_id)
        try:
            changed = (
                suppression.unsuppress(kind, value) if remove else suppression.suppress(kind, value)
            )
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint=f"--{kind}") from None
    if remove:
        click.echo(f"{kind} {'removed from' if changed else 'was not on'} the suppression list")
    else:
        click.echo(f"{kind} {'suppressed' if changed else 'was already suppressed'}")
