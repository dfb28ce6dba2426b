"""What the loader's flattening hands the index for each kind of value: the hot path takes shortcuts
for common values (strings, dates seen before, empty lists, shapes seen before), and these pin that
every shortcut answers as the slow path."""

from __future__ import annotations

import datetime as dt

import pytest

from plugins.person import flatten as flattening
from plugins.person.flatten import flatten, present_names


def _ordinal(text: str) -> int:
    parts = [int(p) for p in text.split("-")] + [1, 1]
    return dt.date(parts[0], parts[1], parts[2]).toordinal()


def test_object_array_leaves_keep_every_kind_and_skip_nulls_and_empty_lists():
    flattening._DATE_CACHE.pop("2011-04", None)  # one date the walker has not seen, one it has
    flatten({"id": "warm", "experience": [{"start_date": "2019-02"}]})
    record = {
        "id": "a1",
        "job_title": "data engineer",
        "skills": "python",  # a single value where a list is expected becomes a list of one
        "experience": [
            {
                "company": {"name": "hooli", "size": 51},
                "title": {"name": "engineer", "levels": []},
                "start_date": "2019-02",
                "end_date": "2011-04",
                "is_primary": True,
            },
            None,
            {
                "company": None,
                "title": {"levels": ["senior", None, "lead"]},
                "start_date": 2015,
                "is_primary": False,
            },
        ],
        "education": [{"gpa": "3.5", "majors": []}],
        "unknown": {"ignored": 1},
    }
    assert flatten(record) == {
        "id": "a1",
        "job_title": "data engineer",
        "skills": ["python"],
        "experience.company.name": ["hooli"],
        "experience.company.size": ["51"],
        "experience.title.name": ["engineer"],
        "experience.start_date": [_ordinal("2019-02"), _ordinal("2015")],
        "experience.end_date": [_ordinal("2011-04")],
        "experience.is_primary": ["true", "false"],
        "experience.title.levels": ["senior", "lead"],
        "education.gpa": [3.5],
    }
    # cached for the next record's shortcut
    assert flattening._DATE_CACHE["2011-04"] == _ordinal("2011-04")


@pytest.mark.parametrize(
    "record, message",
    [
        ({"experience": [{"company": {"name": {"x": 1}}}]}, "experience.company.name"),
        ({"experience": [{"start_date": "not a date"}]}, "experience.start_date"),
        ({"experience": [{"title": "engineer"}]}, "experience.title: expected an object"),
        ({"experience": ["hooli"]}, "experience: expected an object"),
        ({"job_title": ["a", "b"]}, "job_title: expected one value"),
        ({"birth_year": "nineteen"}, "birth_year"),
    ],
)
def test_a_value_that_does_not_fit_names_its_path(record, message):
    with pytest.raises(ValueError, match=message):
        flatten(record)


def test_present_names_lists_each_path_and_its_parent_objects_once_whatever_the_cache_holds(
    monkeypatch,
):
    monkeypatch.setattr(flattening, "_NAMES_CACHE_LIMIT", 2)
    monkeypatch.setattr(flattening, "_NAMES_CACHE", {})
    shapes = [
        {"id": "1", "experience.company.name": ["a"], "experience.title.name": ["b"]},
        {"id": "2", "skills": ["x"]},
        {"id": "3", "education.school.name": ["s"]},  # a third shape: the full cache starts over
        # the first shape again
        {"id": "4", "experience.company.name": ["c"], "experience.title.name": ["d"]},
    ]
    expected = [
        {
            "id",
            "experience",
            "experience.company",
            "experience.company.name",
            "experience.title",
            "experience.title.name",
        },
        {"id", "skills"},
        {"id", "education", "education.school", "education.school.name"},
        {
            "id",
            "experience",
            "experience.company",
            "experience.company.name",
            "experience.title",
            "experience.title.name",
        },
    ]
    for flat, names in zip(shapes, expected):
        answer = present_names(flat)
        assert sorted(answer) == sorted(names)
        assert len(answer) == len(set(answer))
    assert len(flattening._NAMES_CACHE) <= 2
