"""The loader's C fast path (one JSON line to the engine document) against the Python path it stands
in for: for every line it either answers exactly what the Python path answers or steps aside, and it
never accepts a line the Python path rejects. A wrong answer here would index a profile differently
depending on how the package was built."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plugins.person import profile_fields, sample
from plugins.person.backends.embedded import layout, lines

pytestmark = pytest.mark.skipif(
    not lines.fast_path_built(),
    reason="the C fast path is not built (no C compiler when the package was installed)",
)

PEOPLE = Path(__file__).with_name("people8.jsonl")


def python_path(raw: bytes, seq: int):
    """What the Python path answers for a line: ("ok", id, seq, document, version) or ("bad",
    exception type)."""
    try:
        record = orjson.loads(raw)
        if not isinstance(record, dict):
            return ("bad", TypeError)
        record_id, seq, document = layout.prepare_document(record, raw, seq)
    except ValueError as exc:  # orjson.JSONDecodeError included
        return ("bad", type(exc))
    version = record.get("dataset_version")
    return (
        "ok",
        record_id,
        seq,
        normalized(document),
        version if isinstance(version, str) else None,
    )


def normalized(document) -> dict:
    """The document as tantivy reads it; `_field_names` is a set of terms, so its order does not
    matter."""
    parsed = orjson.loads(document)
    parsed["_field_names"] = sorted(parsed["_field_names"])
    return parsed


def fast_path(raw: bytes, seq: int):
    answer = lines._fastdoc.prepare(raw, seq)
    if answer is None:
        return None
    record_id, seq, document, version = answer
    return ("ok", record_id, seq, normalized(document), version)


def check_line(raw: bytes, seq: int = 7) -> bool:
    """Asserts the fast path agrees with the Python path on `raw`; True when it answered (did not
    step aside)."""
    expected, fast = python_path(raw, seq), fast_path(raw, seq)
    if fast is None:
        return False
    assert expected[0] == "ok", (
        f"the fast path indexed a line the Python path rejects ({expected[1].__name__}): {raw!r}"
    )
    assert fast == expected, raw
    return True


def test_every_generated_and_sample_profile_takes_the_fast_path_and_is_indexed_as_the_python_path_does():  # noqa: E501 - the test's name
    raws = [
        orjson.dumps(person) for person in sample.generate(3000, seed=5, dataset_version="2026-11")
    ]
    raws += [line.strip() for line in PEOPLE.read_bytes().splitlines() if line.strip()]
    taken = [check_line(raw, seq) for seq, raw in enumerate(raws)]
    assert all(taken), (
        f"{taken.count(False)} of {len(raws)} usual profiles fell back to the Python path"
    )


@pytest.mark.parametrize(
    "raw",
    [
        # a repeated key: Python keeps the last value
        b'{"id":"a","full_name":"ann","full_name":"bo"}',
        b'{"id":"a","experience":[{"start_date":"2020-01","start_date":"2021-01"}]}',
        b'{"id":"a","full_name":7}',  # a number where a keyword is expected is str()-ed by Python
        # a string where an integer is expected is int()-ed by Python
        b'{"id":"a","birth_year":"1990"}',
        b'{"id":"a","birth_year":1990.0}',
        b'{"id":"a","job_start_date":2015}',  # a year as a number is a date to Python
        b'{"id":"a","job_start_date":" 2015-01"}',
        b'{"id":"a","job_start_date":"2015-01-01T10:00:00"}',
        b'{"id":"a","education":[{"gpa":"3.5"}]}',
        # an escape in a value the min/max sort keys compare
        b'{"id":"a","skills":["b\\u00e9","a"]}',
        b'{"id":"a\\u00e9"}',
        b'{"\\u0069d":"a"}',  # an escape in a key
    ],
)
def test_values_python_converts_or_keys_it_merges_take_the_python_path(raw):
    assert fast_path(raw, 1) is None
    assert python_path(raw, 1)[0] == "ok"


@pytest.mark.parametrize(
    "raw",
    [
        b'{"id":"a",}',
        b'{"id":"a"} x',
        b'{"id":"a","birth_year":01}',
        b'{"id":"a","birth_year":1.}',
        b'{"id":"a","x":NaN}',
        b'{"id":"a","x":1e400}',
        b'{"id":"a","x":[-1e309]}',
        b'{"id":"a","education":[{"gpa":1e999}]}',
        b'{"id":"a\x01"}',
        b'{"id":"a","x":"\xff"}',
        b'{"id":"a","x":"\xed\xa0\x80"}',
        b'{"id":"a","x":"\\ud800"}',
        b'{"id":"a","x":"\\q"}',
        b'{"id":"a","x":[1,]}',
        b'{"id":"a"',
        b'["id"]',
        b'"a"',
        b'{"id":""}',
        b'{"id":5}',
        b'{"full_name":"no id"}',
        b'{"id":"a","full_name":["x"]}',
        b'{"id":"a","experience":"x"}',
        b'{"id":"a","skills":[["x"]]}',
        b'{"id":"a","job_start_date":"2015-13"}',
        b'{"id":"a","job_start_date":"0000"}',
        b'{"id":"a","job_start_date":"2015-02-30"}',
        b'{"id":"a","birth_year":3000000000}',
        b'{"id":"a","birth_year":123456789012345678901}',
        b'{"id":"a","full_name":{"x":1}}',
    ],
)
def test_lines_the_python_path_rejects_are_never_indexed_by_the_fast_path(raw):
    assert python_path(raw, 1)[0] == "bad"
    assert fast_path(raw, 1) is None


def test_lists_inside_object_arrays_are_walked_through_as_the_python_path_does():
    assert check_line(
        b'{"id":"a","experience":[[{"title":{"name":"x"}}, null], {"title":{"name":["y", null]}}]}'
    )


@pytest.mark.parametrize("raw", [b'{"id":false}', b'{"id":"a","dataset_version":true}'])
def test_a_boolean_id_or_dataset_version_is_left_to_the_python_path(raw):
    assert fast_path(raw, 1) is None


def test_prepare_line_raises_as_the_loader_expects_for_each_kind_of_bad_line():
    with pytest.raises(orjson.JSONDecodeError):
        lines.prepare_line(b'{"id":"a",}', 1)
    with pytest.raises(TypeError):
        lines.prepare_line(b'["a"]', 1)
    with pytest.raises(ValueError, match="birth_year"):
        lines.prepare_line(b'{"id":"a","birth_year":"old"}', 1)
    assert lines.prepare_line(b'{"id":"a","dataset_version":"2026-11"}', 1)[::3] == ("a", "2026-11")


def test_a_sequence_past_the_index_limit_is_refused_by_both_paths():
    raw = b'{"id":"a"}'
    assert fast_path(raw, layout.SEQ_MAX) is not None
    assert fast_path(raw, layout.SEQ_MAX + 1) is None
    with pytest.raises(ValueError, match="sequence exhausted"):
        lines.prepare_line(raw, layout.SEQ_MAX + 1)


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(
        [
            "2020",
            "2020-02",
            "2020-02-29",
            "2019-02-29",
            "1-1",
            "2020-1-5",
            "",
            "é",
            "a\"b",
            "a\\b",
            "\u2028",
            "\x00",
        ]
    ),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["name", "id", "levels", "x"]), inner, max_size=3),
    ),
    max_leaves=6,
)
_objects = st.dictionaries(
    st.sampled_from(
        [
            "company",
            "title",
            "start_date",
            "end_date",
            "is_primary",
            "school",
            "gpa",
            "degrees",
            "address",
            "type",
            "network",
            "url",
            "other",
        ]
    ),
    _values,
    max_size=5,
)
_record = st.fixed_dictionaries(
    {"id": st.one_of(st.text(min_size=1, max_size=8), _scalars)},
    optional={
        key: _values
        for key in [
            "full_name",
            "birth_year",
            "skills",
            "job_title",
            "job_start_date",
            "dataset_version",
            "inferred_years_experience",
            "summary",
            "personal_emails",
            "unknown",
        ]
    }
    | {
        key: st.one_of(st.lists(_objects, max_size=3), _objects, _values)
        for key in ["experience", "education", "emails", "profiles"]
    },
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_record)
def test_any_record_is_indexed_as_the_python_path_does_or_left_to_it(record):
    check_line(orjson.dumps(record))


_dates = st.dates().flatmap(
    lambda day: st.sampled_from(
        [f"{day:%Y}", f"{day:%Y-%m}", f"{day:%Y-%m-%d}", f"{day.year:04d}-{day.month}"]
    )
)
_BY_KIND = {
    profile_fields.KEYWORD: st.one_of(st.text(max_size=10), st.booleans()),
    profile_fields.TEXT: st.text(max_size=20),
    profile_fields.INTEGER: st.one_of(st.integers(-3000, 3000), st.integers(-(2**31), 2**31 - 1)),
    profile_fields.FLOAT: st.one_of(
        st.floats(allow_nan=False, allow_infinity=False), st.integers(-100, 100)
    ),
    profile_fields.DATE: _dates,
    profile_fields.BOOLEAN: st.one_of(st.booleans(), st.sampled_from(["true", "false"])),
}


def _leaf(kind: str, many: bool):
    value = st.one_of(st.none(), _BY_KIND[kind])
    return st.one_of(value, st.lists(value, max_size=3)) if many else value


def _object(paths: dict[str, str]):
    """An object of an object array, its sub-objects built from the dotted paths below it."""
    heads: dict[str, dict[str, str]] = {}
    leaves = {}
    for sub, kind in paths.items():
        head, _, rest = sub.partition(".")
        if rest:
            heads.setdefault(head, {})[rest] = kind
        else:
            leaves[head] = _leaf(kind, True)
    return st.fixed_dictionaries(
        {},
        optional={
            **leaves,
            **{head: st.one_of(st.none(), _object(below)) for head, below in heads.items()},
        },
    )


_well_typed = st.fixed_dictionaries(
    {"id": st.text(min_size=1, max_size=8)},
    optional={
        f.path: _leaf(f.kind, f.multi)
        for f in profile_fields.FIELDS.values()
        if not f.in_object_array and f.path != "id"
    }
    | {
        parent: st.lists(
            st.one_of(
                st.none(),
                _object({sub: profile_fields.FIELDS[f"{parent}.{sub}"].kind for sub in children}),
            ),
            max_size=3,
        )
        for parent, children in profile_fields.OBJECT_ARRAYS.items()
    },
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_well_typed)
def test_any_well_typed_record_is_indexed_as_the_python_path_does(record):
    check_line(orjson.dumps(record))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=40), st.integers(0, 60))
def test_damaged_lines_are_never_indexed_differently(noise, at):
    raw = orjson.dumps(
        {
            "id": "a",
            "full_name": "ann",
            "skills": ["x", "y"],
            "birth_year": 1990,
            "experience": [{"company": {"name": "c"}, "start_date": "2020-01"}],
        }
    )
    check_line((raw[:at] + noise + raw[at:]).strip())


def test_a_load_answers_every_search_the_same_on_either_path(tmp_path, monkeypatch):
    """A bulk load (slices in parallel processes) through the fast path and one through the Python
    path answer the same counts for every value each profile holds, every `exists`, and the same
    order for the sorts on twin keys."""
    from plugins.person.backends.embedded import EmbeddedBackend
    from plugins.person.dsl import validate_query
    from plugins.person.flatten import flatten
    from plugins.person.loader import load_file

    people = list(sample.generate(200, seed=9, dataset_version="2026-11"))
    path = tmp_path / "people.jsonl"
    path.write_bytes(
        b"".join(orjson.dumps(person) + b"\n" for person in people) + PEOPLE.read_bytes()
    )
    fast = EmbeddedBackend(str(tmp_path / "fast"))
    load_file(fast, str(path), replace=True, processes=2)
    monkeypatch.setattr(lines, "_prepare_fast", lines._no_fast_path)
    assert not lines.fast_path_built()
    python = EmbeddedBackend(str(tmp_path / "python"))
    load_file(python, str(path), replace=True, processes=2)

    queries = [
        {"exists": {"field": name}}
        for name in sorted({n for path in profile_fields.FIELDS for n in path.split(".")[:1]})
    ]
    queries += [{"exists": {"field": path}} for path in profile_fields.FIELDS]
    for person in people[:60]:
        for field_path, value in flatten(person).items():
            kind = profile_fields.FIELDS[field_path].kind
            for one in (value if isinstance(value, list) else [value])[:2]:
                if kind == profile_fields.TEXT:
                    queries.append({"match": {field_path: one}})
                elif kind == profile_fields.DATE:
                    queries.append(
                        {
                            "range": {
                                field_path: {"gte": person.get(field_path, "1900"), "lte": "2100"}
                            }
                        }
                        if not profile_fields.FIELDS[field_path].in_object_array
                        else {"exists": {"field": field_path}}
                    )
                else:
                    queries.append({"term": {field_path: one}})
    assert fast.count({"match_all": {}}) == python.count({"match_all": {}}) == len(people) + 8
    for query in map(validate_query, queries):
        assert fast.count(query) == python.count(query), query
    for sort in (
        [("birth_year", "asc")],
        [("skills", "asc")],
        [("skills", "desc")],
        [("job_start_date", "desc")],
    ):
        ids = [
            [hit["id"] for hit in backend.search({"match_all": {}}, size=300, sort=sort).hits]
            for backend in (fast, python)
        ]
        assert ids[0] == ids[1], sort
