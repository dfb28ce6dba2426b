"""Dataset deltas on the embedded index: `person load --upsert` and `--delete-ids` replace, add and
remove profiles in one publish; searches and the dataset version move from the old dataset to the
new one at once, never half-way; scroll tokens from before a publish are refused with a clear 400;
malformed deltas and ids files change nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest

from plugins.person.backends.embedded import EmbeddedBackend
from plugins.person.backends.embedded import backend as embedded_backend
from plugins.person.backends.embedded import build
from plugins.person.loader import load_file
from plugins.person.sample import generate

ROOT = Path(__file__).resolve().parents[2]
PEOPLE = 300
RENAMED = "delta co"


def write_jsonl(path, records) -> str:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return str(path)


@pytest.fixture
def loaded(tmp_path):
    """An index of 300 generated profiles at dataset_version v1: (index directory, the profiles)."""
    people = list(generate(PEOPLE, 41))
    directory = str(tmp_path / "index")
    load_file(
        EmbeddedBackend(directory),
        write_jsonl(tmp_path / "v1.jsonl", people),
        replace=True,
        processes=1,
        dataset_version="v1",
    )
    return directory, people


def delta_files(tmp_path, people, *, changed=range(0, 20), new=10, removed=range(100, 105)):
    """A delta of `people`: those at `changed` renamed, `new` new profiles, the ids at `removed`
    listed for removal."""
    records = [{**people[k], "job_company_name": RENAMED} for k in changed] + list(
        generate(new, 42)
    )
    for record in records:  # the version comes from --dataset-version, or stays
        del record["dataset_version"]
    ids = tmp_path / "removed.txt"
    ids.write_text("".join(people[k]["id"] + "\n" for k in removed))
    return write_jsonl(tmp_path / "delta.jsonl", records), str(ids)


def renamed_count(backend) -> int:
    return backend.count({"term": {"job_company_name": RENAMED}})


def test_upsert_with_delete_ids_replaces_adds_and_removes_and_advances_the_version(
    person_app, loaded, tmp_path
):
    directory, people = loaded
    delta, ids = delta_files(tmp_path, people)
    runner = person_app(SEARCH_INDEX=directory).test_cli_runner()
    result = runner.invoke(
        args=["person", "load", delta, "--upsert", "--delete-ids", ids, "--dataset-version", "v2"]
    )
    assert result.exit_code == 0, result.output
    assert "loaded 30 profiles" in result.output and "removed 5 of 5 listed ids" in result.output
    assert f"published: {PEOPLE + 10 - 5} profiles" in result.output
    backend = EmbeddedBackend(directory)
    assert backend.dataset_info() == {"dataset_version": "v2", "count": PEOPLE + 10 - 5}
    assert renamed_count(backend) == 20
    found = backend.get_by_ids([people[0]["id"], people[100]["id"], people[200]["id"]])
    assert found[people[0]["id"]]["job_company_name"] == RENAMED  # replaced, not duplicated
    assert people[100]["id"] not in found and found[people[200]["id"]] == people[200]
    assert backend.count({"term": {"id": people[0]["id"]}}) == 1


def test_delete_ids_alone_removes_and_an_id_both_upserted_and_listed_ends_up_removed(
    person_app, loaded, tmp_path
):
    directory, people = loaded
    runner = person_app(SEARCH_INDEX=directory).test_cli_runner()
    ids = tmp_path / "ids.txt"
    ids.write_text(
        f"{people[1]['id']}\n\n  {people[2]['id']}  \n"
        + orjson.dumps({"id": people[3]["id"]}).decode()
        + "\nnot-a-loaded-id\n"
    )
    result = runner.invoke(
        args=["person", "load", "--delete-ids", str(ids), "--dataset-version", "v1-minus"]
    )
    assert result.exit_code == 0, result.output
    assert "removed 3 of 4 listed ids" in result.output
    backend = EmbeddedBackend(directory)
    assert backend.dataset_info() == {"dataset_version": "v1-minus", "count": PEOPLE - 3}

    delta, ids = delta_files(tmp_path, people, changed=[10, 11], new=0, removed=[11])
    assert (
        runner.invoke(args=["person", "load", delta, "--upsert", "--delete-ids", ids]).exit_code
        == 0
    )
    assert backend.get_by_ids([people[10]["id"], people[11]["id"]]).keys() == {people[10]["id"]}
    # no version given, none in the records: kept
    assert backend.dataset_info()["dataset_version"] == "v1-minus"


def test_a_delta_with_a_malformed_line_publishes_nothing_and_names_the_line(
    person_app, loaded, tmp_path
):
    directory, people = loaded
    good = [orjson.dumps({**people[k], "job_company_name": RENAMED}).decode() for k in range(3)]
    path = tmp_path / "bad-delta.jsonl"
    path.write_text(
        "\n".join([good[0], "{oops", good[1], '{"full_name": "no id"}', good[2]]) + "\n"
    )
    ids = tmp_path / "ids.txt"
    ids.write_text(people[50]["id"] + "\n")
    runner = person_app(SEARCH_INDEX=directory).test_cli_runner()
    result = runner.invoke(
        args=[
            "person",
            "load",
            str(path),
            "--upsert",
            "--delete-ids",
            str(ids),
            "--dataset-version",
            "v2",
        ]
    )
    assert result.exit_code != 0
    assert (
        "line 2: rejected: invalid JSON" in result.output
        and "line 4: rejected: id" in result.output
    )
    assert "2 malformed line(s)" in result.output and "nothing was published" in result.output
    backend = EmbeddedBackend(directory)
    assert backend.dataset_info() == {"dataset_version": "v1", "count": PEOPLE}
    assert renamed_count(backend) == 0 and people[50]["id"] in backend.get_by_ids(
        [people[50]["id"]]
    )


@pytest.mark.parametrize(
    "content, line, reason",
    [
        ("a1\nb2 c3\n", 3, "one id per line"),
        ("a1\n\n{\"id\": 7}\n", 4, "a JSON line needs a string \"id\""),
        ("{broken\n", 2, "invalid JSON"),
    ],
    ids=["two ids on a line", "JSON without a string id", "broken JSON"],
)
def test_a_malformed_ids_file_is_a_cli_error_naming_its_line_and_changes_nothing(
    person_app, loaded, tmp_path, content, line, reason
):
    directory, people = loaded
    ids = tmp_path / "ids.txt"
    ids.write_text(people[0]["id"] + "\n" + content)  # the first line is a good id
    delta, _ = delta_files(tmp_path, people)
    result = (
        person_app(SEARCH_INDEX=directory)
        .test_cli_runner()
        .invoke(args=["person", "load", delta, "--upsert", "--delete-ids", str(ids)])
    )
    assert result.exit_code == 1
    assert f"line {line}: {reason}" in result.output and "nothing was changed" in result.output
    backend = EmbeddedBackend(directory)
    assert (
        backend.dataset_info() == {"dataset_version": "v1", "count": PEOPLE}
        and renamed_count(backend) == 0
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["person", "load", "/no/such/delta.jsonl", "--upsert"], "does not exist"),
        (["person", "load", "--delete-ids", "/no/such/ids.txt"], "does not exist"),
        (["person", "load"], "give a JSONL file to load, or --delete-ids FILE"),
        (["person", "load", "--upsert", "--delete-ids", "{ids}"], "--upsert needs the JSONL file"),
        (["person", "load", "{delta}", "--upsert", "--replace", "--yes"], "cannot be combined"),
    ],
    ids=[
        "missing delta",
        "missing ids file",
        "nothing to do",
        "upsert without a file",
        "upsert with replace",
    ],
)
def test_delta_usage_errors_are_clear(person_app, loaded, tmp_path, args, message):
    directory, people = loaded
    delta, ids = delta_files(tmp_path, people)
    args = [a.format(ids=ids, delta=delta) for a in args]
    result = person_app(SEARCH_INDEX=directory).test_cli_runner().invoke(args=args)
    assert result.exit_code == 2 and message in result.output
    assert EmbeddedBackend(directory).dataset_info() == {"dataset_version": "v1", "count": PEOPLE}


def test_readers_keep_the_old_dataset_until_the_delta_is_published(loaded, tmp_path, monkeypatch):
    """The engine's commit is on disk but dataset.json does not name it yet: a serving reader still
    answers the old dataset and version; once published it answers the new one, all of it."""
    directory, people = loaded
    reader = EmbeddedBackend(directory)  # a gunicorn worker already serving
    assert reader.dataset_info()["dataset_version"] == "v1" and renamed_count(reader) == 0
    committed, release = threading.Event(), threading.Event()
    publish = EmbeddedBackend.write_meta

    def held_publish(self, **kwargs):
        committed.set()
        assert release.wait(30)
        publish(self, **kwargs)

    monkeypatch.setattr(EmbeddedBackend, "write_meta", held_publish)
    delta, ids = delta_files(tmp_path, people)
    loading = threading.Thread(
        target=load_file,
        args=(EmbeddedBackend(directory), delta),
        kwargs={
            "upsert": True,
            "delete_ids": [people[k]["id"] for k in range(100, 105)],
            "dataset_version": "v2",
            "processes": 1,
        },
    )
    loading.start()
    try:
        assert committed.wait(30)
        # committed, unpublished
        assert embedded_backend.engine_opstamp(reader.engine_dir) != reader.read_meta()["opstamp"]
        assert reader.dataset_info() == {"dataset_version": "v1", "count": PEOPLE}
        assert reader.count({"match_all": {}}) == PEOPLE and renamed_count(reader) == 0
        assert people[100]["id"] in reader.get_by_ids([people[100]["id"]])
    finally:
        release.set()
        loading.join()
    assert reader.dataset_info() == {"dataset_version": "v2", "count": PEOPLE + 5}
    assert reader.count({"match_all": {}}) == PEOPLE + 5 and renamed_count(reader) == 20


def test_a_parallel_loads_graft_commit_is_never_searched(loaded, tmp_path, monkeypatch):
    """Slice loads graft their segments in one commit and delete older copies of re-loaded ids in
    the next: between the two, the index holds both copies; readers must not see that commit."""
    directory, people = loaded
    reader = EmbeddedBackend(directory)
    assert reader.count({"match_all": {}}) == PEOPLE
    seen_after_graft = []
    graft = build._graft

    def observed_graft(*args):
        graft(*args)
        seen_after_graft.append((reader.count({"match_all": {}}), renamed_count(reader)))

    monkeypatch.setattr(build, "_graft", observed_graft)
    again = write_jsonl(
        tmp_path / "again.jsonl", [{**p, "job_company_name": RENAMED} for p in people[:40]]
    )
    load_file(EmbeddedBackend(directory), again, processes=2, dataset_version="v2")
    assert seen_after_graft == [(PEOPLE, 0)]
    assert reader.count({"match_all": {}}) == PEOPLE and renamed_count(reader) == 40
    assert reader.dataset_info()["dataset_version"] == "v2"


def test_searches_during_a_delta_in_another_process_see_it_whole_or_not_at_all(
    make_app, loaded, tmp_path
):
    """`person load --upsert` run as an operator runs it, while this process searches: every answer
    is the old dataset (v1: 300 profiles, none renamed) or the new one (v2: 2,300 profiles, 300
    renamed), never a mix."""
    directory, people = loaded
    changed = [{**p, "job_company_name": RENAMED} for p in people]
    delta = write_jsonl(tmp_path / "delta.jsonl", changed + list(generate(2000, 43)))
    app = make_app(SEARCH_INDEX=directory)
    reader = EmbeddedBackend(directory)
    seen = set()

    def look() -> None:
        """What one version answers: counts read between two reads of the same version came from
        that version (the snapshot only moves forward)."""
        version = reader.dataset_info()["dataset_version"]
        answer = (version, reader.count({"match_all": {}}), renamed_count(reader))
        if reader.dataset_info()["dataset_version"] == version:
            seen.add(answer)

    env = {
        **os.environ,
        "HIREKIT_SEARCH_INDEX": directory,
        "HIREKIT_DATABASE_URL": app.config["DATABASE_URL"],
        "HIREKIT_SECRET_KEY": app.config["SECRET_KEY"],
        "HIREKIT_REDIS_URL": "",
        "PYTHONPATH": str(ROOT),
    }
    update = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "flask",
            "--app",
            "wsgi",
            "person",
            "load",
            delta,
            "--upsert",
            "--dataset-version",
            "v2",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    while update.poll() is None:
        look()
        # the load runs at idle priority: on one core, a loop that never sleeps would starve it
        time.sleep(0.002)
    output = update.stdout.read().decode()
    assert update.returncode == 0, output
    look()
    assert seen <= {("v1", PEOPLE, 0), ("v2", PEOPLE + 2000, PEOPLE)}
    assert ("v2", PEOPLE + 2000, PEOPLE) in seen and len(seen) >= 2


@pytest.fixture
def delta_client(make_app, make_tenant, loaded):
    directory, people = loaded
    app = make_app(SEARCH_INDEX=directory)
    return app.test_client(), {"X-API-Key": make_tenant("delta").key}, directory, people


@pytest.mark.parametrize(
    "body",
    [
        {"query": {"match_all": {}}, "size": 50},
        {"query": {"match_all": {}}, "size": 50, "sort": [{"birth_year": "asc"}]},
        {"query": {"match": {"job_title": "engineer"}}, "size": 20},
    ],
    ids=["index order", "number sort", "relevance"],
)
def test_a_scroll_begun_before_a_publish_is_refused_with_a_400_saying_restart(
    delta_client, tmp_path, body
):
    client, headers, directory, people = delta_client
    first = client.post("/v2/person/search", json=body, headers=headers)
    assert first.status_code == 200 and first.json["scroll_token"]
    second = client.post(
        "/v2/person/search",
        json={**body, "scroll_token": first.json["scroll_token"]},
        headers=headers,
    )
    assert second.status_code == 200  # no publish in between: the walk goes on
    delta, ids = delta_files(tmp_path, people)
    load_file(
        EmbeddedBackend(directory), delta, upsert=True, delete_ids=[people[100]["id"]], processes=1
    )
    refused = client.post(
        "/v2/person/search",
        json={**body, "scroll_token": second.json["scroll_token"]},
        headers=headers,
    )
    assert refused.status_code == 400
    assert "updated since this scroll began" in refused.json["error"]["message"]
    assert "start the scroll again" in refused.json["error"]["message"]
    assert refused.json["error"]["fields"] == {
        "scroll_token": ["The dataset was updated since this scroll began."]
    }
    # restarting walks the new version
    again = client.post("/v2/person/search", json=body, headers=headers)
    assert again.status_code == 200
    assert (
        client.post(
            "/v2/person/search",
            json={**body, "scroll_token": again.json["scroll_token"]},
            headers=headers,
        ).status_code
        == 200
    )


def test_a_delta_that_publishes_nothing_leaves_open_scrolls_walking(delta_client, tmp_path):
    client, headers, directory, people = delta_client
    body = {"query": {"match_all": {}}, "size": 100}
    first = client.post("/v2/person/search", json=body, headers=headers)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        orjson.dumps({**people[0], "job_company_name": RENAMED}).decode() + "\n{broken\n"
    )
    report = load_file(EmbeddedBackend(directory), str(bad), upsert=True, processes=1)
    assert not report.published and report.skipped[0][0] == 2
    rest = client.post(
        "/v2/person/search",
        json={**body, "scroll_token": first.json["scroll_token"]},
        headers=headers,
    )
    assert rest.status_code == 200 and rest.json["data"][0]["id"] == people[100]["id"]
