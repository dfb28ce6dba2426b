"""Operator commands: tenants and keys from the CLI, keys printed once and usable at once."""

import re
import secrets

import pytest

from tests.factories import job_body

pytestmark = pytest.mark.plugins("jobs", "scheduling")


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


def printed_key(output: str) -> str:
    return re.search(r"api key \(shown once\): (\S+)", output).group(1)


def test_tenants_create_prints_a_working_key(app, runner):
    result = runner.invoke(args=["tenants", "create", "acme", "--name", "Acme Inc"])
    assert result.exit_code == 0, result.output
    key = printed_key(result.output)
    assert key.startswith("hk_")
    client = app.test_client()
    assert (
        client.post(
            "/v1/jobs", json=job_body(), headers={"Authorization": f"Bearer {key}"}
        ).status_code
        == 201
    )
    listing = runner.invoke(args=["tenants", "list"])
    assert "acme\tAcme Inc\tkeys=1" in listing.output


def chosen_key(prefix: str = "hk_") -> str:
    return prefix + secrets.token_urlsafe(32)


def works(app, key: str) -> bool:
    status = (
        app.test_client()
        .get("/v1/jobs?page=1&size=1", headers={"Authorization": f"Bearer {key}"})
        .status_code
    )
    assert status in (200, 401)
    return status == 200


WEAK_KEYS = {
    "short": "too-short",
    "long but not hk_": "a-long-operator-chosen-key-0001",
    "hk_ and 31 characters": "hk_" + "Ab3-_xYz9" * 3 + "Qw7R",
    "another prefix": "xx_" + secrets.token_urlsafe(32),
    "not URL-safe": "hk_" + secrets.token_urlsafe(32) + "/+=",
    "repetitive": "hk_" + "ab" * 20,
    "one character": "hk_" + "a" * 40,
}


@pytest.mark.parametrize("weak", WEAK_KEYS.values(), ids=WEAK_KEYS.keys())
@pytest.mark.parametrize(
    "command", [["tenants", "create", "acme"], ["keys", "create", "acme"]], ids=["tenants", "keys"]
)
def test_operator_chosen_key_must_meet_the_generated_keys_rule(app, runner, weak, command):
    if command[0] == "keys":
        assert runner.invoke(args=["tenants", "create", "acme"]).exit_code == 0
    refused = runner.invoke(args=[*command, "--key", weak])
    assert refused.exit_code != 0, refused.output
    assert (
        "'hk_'" in refused.output
        and "32" in refused.output
        and "secrets.token_urlsafe(32)" in refused.output
    )
    assert not works(app, weak)
    strong = chosen_key()
    ok = runner.invoke(args=[*command, "--key", strong])
    assert ok.exit_code == 0, ok.output
    assert works(app, strong)


def test_a_chosen_key_is_not_echoed_and_the_command_line_is_warned_about(app, runner):
    key = chosen_key()
    result = runner.invoke(args=["tenants", "create", "acme", "--key", key])
    assert result.exit_code == 0, result.output
    assert key not in result.output and f"prefix {key[:12]}" in result.output
    assert "shell history" in result.output


def test_a_chosen_key_from_a_hidden_prompt(app, runner):
    assert runner.invoke(args=["tenants", "create", "acme"]).exit_code == 0
    key = chosen_key()
    result = runner.invoke(args=["keys", "create", "acme", "--key-prompt"], input=f"{key}\n{key}\n")
    assert result.exit_code == 0, result.output
    assert key not in result.output and "shell history" not in result.output
    assert works(app, key)
    mismatch = runner.invoke(
        args=["keys", "create", "acme", "--key-prompt"], input=f"{chosen_key()}\n{chosen_key()}\n"
    )
    assert mismatch.exit_code != 0


def test_a_chosen_key_from_an_environment_variable(app, runner):
    key = chosen_key()
    result = runner.invoke(
        args=["tenants", "create", "acme", "--key-env", "ACME_KEY"], env={"ACME_KEY": key}
    )
    assert result.exit_code == 0, result.output
    assert key not in result.output and works(app, key)
    missing = runner.invoke(
        args=["keys", "create", "acme", "--key-env", "NO_SUCH_VARIABLE_H4"],
        env={"NO_SUCH_VARIABLE_H4": None},
    )
    assert missing.exit_code != 0 and "NO_SUCH_VARIABLE_H4" in missing.output
    weak = runner.invoke(
        args=["keys", "create", "acme", "--key-env", "WEAK"], env={"WEAK": "hk_" + "a" * 40}
    )
    assert weak.exit_code != 0 and "random" in weak.output


def test_a_key_given_two_ways_is_refused(runner):
    result = runner.invoke(
        args=["tenants", "create", "acme", "--key", chosen_key(), "--key-env", "X"],
        env={"X": chosen_key()},
    )
    assert result.exit_code != 0 and "one way" in result.output


def key_rows(runner, tenant: str) -> list[dict]:
    result = runner.invoke(args=["keys", "list", tenant])
    assert result.exit_code == 0, result.output
    header, *rows = result.output.splitlines()
    assert header.split("\t") == ["id", "prefix", "created", "last used", "revoked"]
    return [
        dict(zip(["id", "prefix", "created", "last_used", "revoked"], row.split("\t")))
        for row in rows
    ]


def test_keys_list_shows_id_prefix_created_last_used_and_revoked(app, runner):
    first = printed_key(runner.invoke(args=["tenants", "create", "acme"]).output)
    second = printed_key(runner.invoke(args=["keys", "create", "acme"]).output)
    runner.invoke(args=["tenants", "create", "other"])
    assert works(app, first)
    rows = key_rows(runner, "acme")
    assert [row["prefix"] for row in rows] == [first[:12], second[:12]]
    assert all(
        re.fullmatch(r"\d+", row["id"])
        and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", row["created"])
        for row in rows
    )
    assert re.fullmatch(r"\d{4}-.*Z", rows[0]["last_used"]) and rows[1]["last_used"] == "never"
    assert [row["revoked"] for row in rows] == ["no", "no"]
    assert runner.invoke(args=["keys", "revoke", "--yes", "--id", rows[1]["id"]]).exit_code == 0
    assert [row["revoked"] for row in key_rows(runner, "acme")] == ["no", "yes"]
    assert runner.invoke(args=["keys", "list", "nobody"]).exit_code != 0


def test_revoking_a_prefix_shared_by_chosen_keys_is_refused_listing_their_ids(app, runner):
    runner.invoke(args=["tenants", "create", "acme"])
    runner.invoke(args=["tenants", "create", "beta"])
    shared = [chosen_key("hk_sharedpfx"), chosen_key("hk_sharedpfx"), chosen_key("hk_sharedpfx")]
    for tenant, key in zip(["acme", "acme", "beta"], shared):
        assert runner.invoke(args=["keys", "create", tenant, "--key", key]).exit_code == 0
    ambiguous = runner.invoke(args=["keys", "revoke", "--yes", "hk_sharedpfx"])
    assert ambiguous.exit_code != 0, ambiguous.output
    assert all(works(app, key) for key in shared), "an ambiguous prefix revoked something"
    # the first is the tenant's generated key
    acme_ids = [row["id"] for row in key_rows(runner, "acme")][1:]
    beta_id = next(row["id"] for row in key_rows(runner, "beta") if row["prefix"] == "hk_sharedpfx")
    assert (
        all(key_id in ambiguous.output for key_id in [*acme_ids, beta_id])
        and "--id" in ambiguous.output
    )
    by_id = runner.invoke(args=["keys", "revoke", "--yes", "--id", acme_ids[1]])
    assert by_id.exit_code == 0 and "revoked 1" in by_id.output
    assert [works(app, key) for key in shared] == [True, False, True]
    assert runner.invoke(args=["keys", "revoke", "--yes", "--id", acme_ids[1]]).exit_code != 0
    # still two active keys share it
    assert runner.invoke(args=["keys", "revoke", "--yes", "hk_sharedpfx"]).exit_code != 0
    assert runner.invoke(args=["keys", "revoke"]).exit_code != 0
    assert (
        runner.invoke(args=["keys", "revoke", "--yes", "hk_sharedpfx", "--id", beta_id]).exit_code
        != 0
    )


def test_last_used_is_written_at_most_once_a_minute_per_key(make_app, make_tenant):
    from app.data.db import database
    from app.data.tenancy import ApiKey

    app = make_app(AUTH_CACHE_SECONDS=0)
    tenant = make_tenant("acme")
    client = app.test_client()
    with app.app_context(), database.connection_context():
        assert ApiKey.get(ApiKey.tenant == "acme").last_used_at is None
    assert client.get("/v1/jobs?page=1&size=1", headers=tenant.headers).status_code == 200
    with app.app_context(), database.connection_context():
        first = ApiKey.get(ApiKey.tenant == "acme").last_used_at
    for _ in range(3):
        assert client.get("/v1/jobs?page=1&size=1", headers=tenant.headers).status_code == 200
    with app.app_context(), database.connection_context():
        assert ApiKey.get(ApiKey.tenant == "acme").last_used_at == first


def test_duplicate_and_bad_tenant_ids_are_refused(runner):
    assert runner.invoke(args=["tenants", "create", "acme"]).exit_code == 0
    assert "already exists" in runner.invoke(args=["tenants", "create", "acme"]).output
    assert runner.invoke(args=["tenants", "create", "Not A Slug"]).exit_code != 0


def test_keys_create_and_revoke(app, runner):
    runner.invoke(args=["tenants", "create", "acme"])
    key = printed_key(runner.invoke(args=["keys", "create", "acme"]).output)
    client = app.test_client()
    headers = {"Authorization": f"Bearer {key}"}
    assert client.get("/v1/jobs?page=1&size=1", headers=headers).status_code == 200
    revoked = runner.invoke(args=["keys", "revoke", "--yes", key[:12]])
    assert revoked.exit_code == 0 and "revoked 1" in revoked.output
    assert client.get("/v1/jobs?page=1&size=1", headers=headers).status_code == 401
    assert runner.invoke(args=["keys", "revoke", "--yes", key[:12]]).exit_code != 0
    assert runner.invoke(args=["keys", "create", "nobody"]).exit_code != 0


def test_db_status_lists_applied_migrations(runner):
    result = runner.invoke(args=["db", "status"])
    assert "applied  001_core" in result.output and "pending" not in result.output


def test_tenants_update_changes_an_existing_tenants_rate_limit(app, runner):
    key = printed_key(runner.invoke(args=["tenants", "create", "acme"]).output)
    headers = {"Authorization": f"Bearer {key}"}
    client = app.test_client()

    def statuses(count: int) -> list[int]:
        return [
            client.get("/v1/jobs?page=1&size=1", headers=headers).status_code for _ in range(count)
        ]

    assert statuses(3) == [200, 200, 200]
    updated = runner.invoke(args=["tenants", "update", "acme", "--rate-limit", "2/hour"])
    assert updated.exit_code == 0, updated.output
    assert "rate_limit=2/hour" in updated.output
    assert "acme\tacme\tkeys=1\trate_limit=2/hour" in runner.invoke(args=["tenants", "list"]).output
    assert statuses(3) == [200, 200, 429]
    back = runner.invoke(
        args=["tenants", "update", "acme", "--default-rate-limit", "--name", "Acme Inc"]
    )
    assert back.exit_code == 0, back.output
    assert statuses(3) == [200, 200, 200]
    assert (
        "acme\tAcme Inc\tkeys=1\trate_limit=default"
        in runner.invoke(args=["tenants", "list"]).output
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["tenants", "update", "nobody", "--rate-limit", "10/minute"], "Error: no tenant 'nobody'"),
        (
            ["tenants", "update", "acme", "--rate-limit", "lots"],
            "Error: rate limit 'lots' is not a limit like",
        ),
        (["tenants", "update", "acme"], "nothing to change"),
        (
            ["tenants", "create", "other", "--rate-limit", "5/fortnight"],
            "Error: rate limit '5/fortnight' is not a limit like",
        ),
    ],
    ids=["unknown tenant", "unreadable limit", "nothing asked", "unreadable limit at create"],
)
def test_tenants_update_refusals_are_one_line(runner, args, message):
    assert runner.invoke(args=["tenants", "create", "acme"]).exit_code == 0
    refused = runner.invoke(args=args)
    assert refused.exit_code != 0 and message in refused.output, refused.output
    assert "Traceback" not in refused.output
    assert "rate_limit=default" in runner.invoke(args=["tenants", "list"]).output.splitlines()[0]
