"""What the deterministic dialogue reads from a candidate's words: yes or no, numbers, and the
callback time asked for, read in the candidate's zone."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from plugins.calls.conversation.understanding import callback_time, number_in, yes_or_no

LA = ZoneInfo("America/Los_Angeles")
NOW = dt.datetime(2026, 12, 1, 15, 0, tzinfo=dt.timezone.utc)  # Tuesday, 07:00 in Los Angeles


@pytest.mark.parametrize(
    "said, meant",
    [
        ("Yes, I do.", True),
        ("Yeah.", True),
        ("Of course", True),
        ("No, it lapsed.", False),
        ("Nope", False),
        ("I don't", False),
        ("Hmm, maybe.", None),
        ("Not sure, yes and no", None),
    ],
)
def test_yes_or_no(said, meant):
    assert yes_or_no(said) is meant


@pytest.mark.parametrize(
    "said, years",
    [
        ("Six years.", 6),
        ("about 3 years", 3),
        ("twenty five years", 25),
        ("eighteen months", 1.5),
        ("two and a half years", 2.5),
        ("a year", 1),
        ("quite a while", None),
        ("a few, I guess", None),
    ],
)
def test_numbers_in_words_and_digits(said, years):
    assert number_in(said, unit_years=True) == years


@pytest.mark.parametrize(
    "said, local",
    [
        ("Call me back tomorrow at 10.", dt.datetime(2026, 12, 2, 10, 0)),
        ("After 5 please.", dt.datetime(2026, 12, 1, 17, 0)),
        ("at 3:30 pm", dt.datetime(2026, 12, 1, 15, 30)),
        ("Friday afternoon works.", dt.datetime(2026, 12, 4, 14, 0)),
        ("this evening", dt.datetime(2026, 12, 1, 18, 0)),
        ("tomorrow at 9 am", dt.datetime(2026, 12, 2, 9, 0)),
        ("at 7 am", dt.datetime(2026, 12, 2, 7, 0)),  # 7 am today has just passed
    ],
)
def test_callback_times_in_the_candidates_zone(said, local):
    assert callback_time(said, now=NOW, zone="America/Los_Angeles") == local.replace(tzinfo=LA)


def test_words_without_a_time_name_none():
    assert callback_time("I'm busy right now", now=NOW, zone="America/Los_Angeles") is None
