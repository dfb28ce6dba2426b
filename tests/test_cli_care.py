"""Operator commands take care: destructive ones ask first unless --yes, refused inputs are one
`Error:` line (no traceback), and `tenants list` reads everything in one query."""

import pytest

from app.data.db import database

sqlite_only = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@sqlite_only
def test_keys_revoke_asks_first_and_no_answer_revokes_nothing(runner, make_tenant):
    key = make_tenant("acme").key
    declined = runner.invoke(args=["keys", "revoke", key[:12]], input="n\n")
    assert (
        declined.exit_code == 1
        and "Revoke the key" in declined.output
        and "Aborted" in declined.output
    )
    scripted = runner.invoke(args=["keys", "revoke", key[:12]])  # no stdin: no confirmation
    assert scripted.exit_code == 1
    assert (
        runner.invoke(args=["keys", "list", "acme"]).output.strip().splitlines()[1].endswith("\tno")
    )  # still active
    assert runner.invoke(args=["keys", "revoke", key[:12]], input="y\n").exit_code == 0
    # nothing active left to revoke
    assert runner.invoke(args=["keys", "revoke", "--yes", key[:12]]).exit_code == 1


@sqlite_only
def test_person_replace_asks_first_unless_yes(runner, tmp_path):
    declined = runner.invoke(args=["person", "create-index", "--replace"], input="n\n")
    assert declined.exit_code == 1 and "Drop the production index" in declined.output
    assert runner.invoke(args=["person", "create-index", "--replace", "--yes"]).exit_code == 0
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    refused = runner.invoke(args=["person", "load", str(empty), "--replace"])
    assert refused.exit_code == 1 and "Replace every profile" in refused.output


@sqlite_only
@pytest.mark.parametrize(
    "args",
    [
        ["tenants", "create", "Bad Slug!"],
        ["tenants", "ensure", "Bad Slug!"],
        ["keys", "create", "no-such-tenant"],
        ["keys", "list", "no-such-tenant"],
        ["db", "makemigration", "x", "--plugin", "no-such-plugin"],
    ],
)
def test_bad_names_are_one_error_line(runner, args):
    result = runner.invoke(args=args)
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert [line for line in result.output.splitlines() if line] == [result.output.strip()]
    assert result.output.startswith("Error: ")


def test_tenants_list_is_one_query(runner, make_tenant, monkeypatch):
    for slug in ("alpha", "beta", "gamma"):
        make_tenant(slug)
    runner.invoke(args=["keys", "create", "beta"])
    statements = []
    real_execute = type(database.obj).execute_sql

    def counting(self, sql, params=None, *args, **kwargs):
        statements.append(sql)
        return real_execute(self, sql, params, *args, **kwargs)

    monkeypatch.setattr(type(database.obj), "execute_sql", counting)
    result = runner.invoke(args=["tenants", "list"])
    assert result.exit_code == 0, result.output
    rows = {line.split("\t")[0]: line.split("\t")[2] for line in result.output.strip().splitlines()}
    assert rows == {"alpha": "keys=1", "beta": "keys=2", "gamma": "keys=1"}
    assert len([sql for sql in statements if sql.lstrip().upper().startswith("SELECT")]) == 1, (
        statements
    )


@sqlite_only
def test_makemigration_writes_only_what_the_models_changed(runner, monkeypatch, tmp_path):
    """Unchanged models write no migration (the migrations' indexes are named after the class, the
    models' after the table: matched by name, every index was dropped and re-added); a new index
    writes that index alone."""
    import shutil

    from app import cli
    from plugins.jobs.models import Job

    migrations = tmp_path / "migrations"
    shutil.copytree(cli.MIGRATIONS_DIR, migrations, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cli, "MIGRATIONS_DIR", migrations)
    before = sorted(path.name for path in migrations.iterdir())

    unchanged = runner.invoke(args=["db", "makemigration", "nothing"])
    assert unchanged.exit_code == 0 and unchanged.output.strip() == "no changes", unchanged.output
    assert sorted(path.name for path in migrations.iterdir()) == before

    monkeypatch.setattr(Job._meta, "indexes", [*Job._meta.indexes, (("tenant", "status"), False)])
    changed = runner.invoke(args=["db", "makemigration", "jobs_by_status", "--plugin", "jobs"])
    assert changed.exit_code == 0, changed.output
    (written,) = set(migrations.glob("*_jobs_by_status.py"))
    migrate_part = written.read_text().split("def rollback")[0]
    assert "migrator.add_index('jobs', 'tenant', 'status', unique=False)" in migrate_part
    assert migrate_part.count("add_index") == 1 and "drop_index" not in migrate_part
