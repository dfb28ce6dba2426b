"""The dataset CLI: sample is deterministic, load skips and names malformed lines, upserts by id,
stats reports the dataset."""

from __future__ import annotations

import time

import orjson

from plugins.person.sample import generate


def test_sample_is_deterministic_and_seeds_differ(person_app, tmp_path):
    runner = person_app().test_cli_runner()
    paths = []
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        path = tmp_path / f"{name}.jsonl"
        result = runner.invoke(
            args=["person", "sample", "--count", "25", "--seed", str(seed), "--out", str(path)]
        )
        assert result.exit_code == 0, result.output
        paths.append(path.read_bytes())
    assert paths[0] == paths[1] and paths[0] != paths[2]
    people = [orjson.loads(line) for line in paths[0].splitlines()]
    assert len(people) == 25 and all(1 <= len(p["experience"]) <= 6 for p in people)
    assert not {p["id"] for p in people} & {
        orjson.loads(line)["id"] for line in paths[2].splitlines()
    }


def test_load_skips_malformed_lines_names_them_and_loads_the_rest(person_app, tmp_path):
    good = [orjson.dumps(p).decode() for p in generate(5, 8)]
    lines = [
        good[0],
        "{not json",
        good[1],
        '["an", "array"]',
        good[2],
        '{"full_name": "no id"}',
        "",
        good[3],
        '{"id": "bad-date", "job_start_date": "yesterday"}',
        good[4],
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n")
    app = person_app(SEARCH_INDEX=str(tmp_path / "index"))
    runner = app.test_cli_runner()
    result = runner.invoke(args=["person", "load", str(path), "--replace", "--yes"])
    assert result.exit_code != 0
    assert "loaded 5 profiles" in result.output
    for line_no, reason in (
        (2, "invalid JSON"),
        (4, "not a JSON object"),
        (6, "id"),
        (9, "job_start_date"),
    ):
        assert f"line {line_no}: skipped" in result.output and reason in result.output
    assert "4 malformed line(s)" in result.output
    stats = runner.invoke(args=["person", "stats"])
    assert "profiles: 5" in stats.output and "dataset_version: sample-8" in stats.output


def test_load_upserts_by_id_and_readers_see_the_new_commit(person_app, tmp_path):
    people = list(generate(3, 9))
    path = tmp_path / "first.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(p) for p in people))
    app = person_app(SEARCH_INDEX=str(tmp_path / "index"))
    runner = app.test_cli_runner()
    assert runner.invoke(args=["person", "load", str(path)]).exit_code == 0
    from plugins.person.datasets import sources

    with app.app_context():
        backend = sources().backend()
        assert backend.count({"match_all": {}}) == 3
        changed = {**people[0], "job_company_name": "renamed co"}
        update = tmp_path / "update.jsonl"
        update.write_bytes(orjson.dumps(changed) + b"\n" + orjson.dumps(next(generate(1, 10))))
        assert (
            runner.invoke(args=["person", "load", str(update), "--dataset-version", "v2"]).exit_code
            == 0
        )
        assert backend.count({"match_all": {}}) == 4
        assert (
            backend.get_by_ids([people[0]["id"]])[people[0]["id"]]["job_company_name"]
            == "renamed co"
        )
        assert backend.dataset_info() == {"dataset_version": "v2", "count": 4}


def test_parallel_slices_load_name_bad_lines_and_keep_the_last_copy_of_each_id(tmp_path):
    from plugins.person.backends.embedded import EmbeddedBackend
    from plugins.person.loader import load_file

    people = list(generate(40, 12))
    renamed = {**people[3], "job_company_name": "second copy co"}
    lines = (
        [orjson.dumps(p).decode() for p in people[:20]]
        + ["{broken"]
        + [orjson.dumps(p).decode() for p in people[20:]]
    )
    # a bad line in the second slice: numbered in the whole file, as the first slice's are
    lines.append("[1, 2]")
    lines.append(orjson.dumps(renamed).decode())  # a repeat in another slice: the later line wins
    path = tmp_path / "people.jsonl"
    path.write_text("\n".join(lines) + "\n")
    backend = EmbeddedBackend(str(tmp_path / "index"))
    report = load_file(backend, str(path), replace=True, processes=2)
    assert [line for line, _ in report.skipped] == [21, 42]
    assert "invalid JSON" in report.skipped[0][1] and "not a JSON object" in report.skipped[1][1]
    assert backend.count({"match_all": {}}) == 40
    assert (
        backend.get_by_ids([people[3]["id"]])[people[3]["id"]]["job_company_name"]
        == "second copy co"
    )

    again = {**people[5], "job_company_name": "reloaded co"}
    extra = next(generate(1, 13))
    update = tmp_path / "update.jsonl"
    update.write_bytes(orjson.dumps(again) + b"\n" + orjson.dumps(extra) + b"\n")
    load_file(backend, str(update), processes=2)
    assert backend.count({"match_all": {}}) == 41
    assert (
        backend.get_by_ids([people[5]["id"]])[people[5]["id"]]["job_company_name"] == "reloaded co"
    )
    assert backend.dataset_info()["count"] == 41
    first_page = backend.search({"match_all": {}}, size=2).hits
    assert [p["id"] for p in first_page] == [people[0]["id"], people[1]["id"]]


def test_load_refuses_a_list_where_the_schema_wants_one_value(tmp_path):
    from plugins.person.backends.embedded import EmbeddedBackend
    from plugins.person.loader import load_file

    path = tmp_path / "lists.jsonl"
    path.write_bytes(
        b'{"id": "a", "job_company_name": ["acme", "globex"]}\n{"id": "b", "skills": "python"}\n'
    )
    backend = EmbeddedBackend(str(tmp_path / "index"))
    report = load_file(backend, str(path), replace=True, processes=1)
    assert report.skipped == [(1, "job_company_name: expected one value, not a list")]
    assert backend.search({"term": {"skills": "python"}}, size=5).hits == [
        {"id": "b", "skills": "python"}
    ]


def test_a_delta_runs_in_the_background_and_a_whole_load_in_the_foreground(
    person_app, tmp_path, monkeypatch
):
    """A delta is applied while the machine serves searches: at idle priority, with one indexing
    thread, using at most a tenth of a core, unless --foreground."""
    from plugins.person import cli

    lowered, calls = [], []
    # the test run keeps its priority
    monkeypatch.setattr(cli, "run_in_background", lambda: lowered.append(True) or "recorded")
    real_load = cli.load_file
    monkeypatch.setattr(
        cli,
        "load_file",
        lambda *args, **kwargs: (
            calls.append((kwargs["writer_threads"], kwargs["pace"])) or real_load(*args, **kwargs)
        ),
    )
    people = tmp_path / "people.jsonl"
    people.write_bytes(b"".join(orjson.dumps(p) + b"\n" for p in generate(30, 5)))
    removed = tmp_path / "removed.txt"
    removed.write_text(next(generate(1, 5))["id"] + "\n")
    runner = person_app(SEARCH_INDEX=str(tmp_path / "index")).test_cli_runner()
    runs = [
        (["--replace", "--yes"], False, (0, 1.0)),
        (["--upsert"], True, (1, 0.1)),
        (["--upsert", "--foreground"], False, (0, 1.0)),
        (["--upsert", "--threads", "2"], True, (2, 0.1)),
        ([], False, (0, 1.0)),
        (["--background"], True, (1, 0.1)),
        (["--upsert", "--pace", "0.2"], True, (1, 0.2)),
        (["--upsert", "--foreground", "--pace", "0.3"], False, (0, 0.3)),
    ]
    for options, background, call in runs:
        lowered.clear()
        calls.clear()
        result = runner.invoke(args=["person", "load", str(people), *options])
        assert result.exit_code == 0, (options, result.output)
        assert (lowered == [True], calls) == (background, [call]), options
    lowered.clear()
    assert runner.invoke(args=["person", "load", "--delete-ids", str(removed)]).exit_code == 0
    assert lowered == [True]
    for pace in ("0", "1.5", "-1", "half"):
        result = runner.invoke(args=["person", "load", str(people), "--upsert", "--pace", pace])
        assert result.exit_code == 2 and "--pace" in result.output, pace


def test_a_paced_load_rests_after_each_batch_in_proportion_to_its_work(tmp_path, monkeypatch):
    """--pace 0.25 uses a quarter of a core: after each batch it rests until its CPU time is a
    quarter of the time gone."""
    from plugins.person import loader
    from plugins.person.backends.embedded import EmbeddedBackend

    people = tmp_path / "people.jsonl"
    people.write_bytes(
        b"".join(orjson.dumps(p) + b"\n" for p in generate(2 * loader.BATCH_LINES + 10, 6))
    )
    rests = []
    rested = [0.0]

    def rest(seconds):
        rests.append(seconds)
        rested[0] += seconds

    # the clock of an idle machine: wall time is the CPU time used plus the rests, so a busy
    # machine's stretched wall clock (which rightly shortens the rests) cannot make this test's
    # batches look already paced
    monkeypatch.setattr(loader.time, "sleep", rest)
    monkeypatch.setattr(loader.time, "perf_counter", lambda: time.process_time() + rested[0])
    backend = EmbeddedBackend(str(tmp_path / "index"))
    cpu = time.process_time()
    report = loader.load_file(
        backend, str(people), upsert=True, processes=2, writer_threads=1, pace=0.25
    )
    cpu = time.process_time() - cpu
    assert (
        report.loaded == 2 * loader.BATCH_LINES + 10
        and backend.count({"match_all": {}}) == report.loaded
    )
    assert len(rests) == 3 and all(rest > 0 for rest in rests)
    # it rests for the CPU it used (parsing included: in this process), not more
    assert sum(rests) <= cpu / 0.25
    assert sum(rests) + report.seconds >= 0.5 * cpu / 0.25  # the batches are most of the load's CPU
    rests.clear()
    loader.load_file(backend, str(people), upsert=True, processes=1, writer_threads=1)
    assert rests == []
    # a whole load: not in slices
    report = loader.load_file(backend, str(people), replace=True, processes=2, pace=0.25)
    assert (
        len(rests) == 3
        and report.loaded == backend.count({"match_all": {}}) == 2 * loader.BATCH_LINES + 10
    )
