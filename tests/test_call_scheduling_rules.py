"""next_attempt_at: the one function that decides when a scheduled call may be attempted."""

import datetime as dt

import pytest

from plugins.calls.schedule_rules import ScheduleError, next_attempt_at

# 2026-03-02 is a Monday
MONDAY_0800 = dt.datetime(2026, 3, 2, 8, 0)
SETTING = {
    "window_start_time": "09:00:00",
    "window_end_time": "17:00:00",
    "days_of_week": [1, 2, 3, 4, 5],
    "daily_attempts": 2,
    "total_attempts": 4,
    "retry_interval": 60,
    "call_schedule_minutes": 0,
}


def at(day: int, hour: int, minute: int = 0) -> dt.datetime:
    """2026-03-<day> hh:mm UTC (day 2 = Monday)."""
    return dt.datetime(2026, 3, day, hour, minute)


def next_for(setting=None, *, triggered_at=MONDAY_0800, attempts=(), now=None, timezone="UTC"):
    return next_attempt_at(
        {**SETTING, **(setting or {})},
        triggered_at=triggered_at,
        attempts=list(attempts),
        now=now or triggered_at,
        timezone=timezone,
    )


def test_before_the_window_waits_for_it_to_open():
    assert next_for() == at(2, 9)


def test_inside_the_window_is_now():
    assert next_for(triggered_at=at(2, 10, 30)) == at(2, 10, 30)


def test_call_schedule_minutes_delays_the_first_attempt():
    assert next_for({"call_schedule_minutes": 45}, triggered_at=at(2, 10)) == at(2, 10, 45)


def test_the_window_end_is_exclusive_and_late_triggers_roll_to_the_next_allowed_day():
    assert next_for(triggered_at=at(2, 17)) == at(3, 9)
    assert next_for({"call_schedule_minutes": 30}, triggered_at=at(2, 16, 45)) == at(3, 9)


def test_only_on_days_of_week():
    friday_evening = at(6, 18)
    assert next_for(triggered_at=friday_evening) == at(9, 9)  # the weekend is skipped: Monday 9th
    assert next_for({"days_of_week": [3]}, triggered_at=at(2, 10)) == at(4, 9)  # Wednesday only
    assert next_for({"days_of_week": [6, 7]}, triggered_at=at(2, 10)) == at(7, 9)  # Saturday


def test_retry_waits_retry_interval_after_the_previous_attempt():
    assert next_for(attempts=[at(2, 9)], now=at(2, 9, 5)) == at(2, 10)
    assert next_for({"retry_interval": 0}, attempts=[at(2, 9)], now=at(2, 9, 5)) == at(2, 9, 5)


def test_a_retry_past_the_window_rolls_to_the_next_allowed_day():
    assert next_for(attempts=[at(2, 16, 30)], now=at(2, 16, 31)) == at(3, 9)
    assert next_for(attempts=[at(6, 16, 30)], now=at(6, 16, 31)) == at(9, 9)  # Friday -> Monday


def test_daily_attempts_caps_one_day_then_moves_on():
    assert next_for(attempts=[at(2, 9), at(2, 10)], now=at(2, 10, 1)) == at(3, 9)
    assert next_for({"daily_attempts": 1}, attempts=[at(2, 9)], now=at(2, 9, 1)) == at(3, 9)
    assert next_for({"daily_attempts": 0}) is None


def test_total_attempts_ends_the_series():
    four = [at(2, 9), at(2, 10), at(3, 9), at(3, 10)]
    assert next_for(attempts=four, now=at(3, 10, 1)) is None
    assert next_for({"total_attempts": 0}) is None
    assert next_for(attempts=four[:3], now=at(3, 9, 1)) == at(3, 10)


def test_no_allowed_day_means_no_attempt():
    assert next_for({"days_of_week": []}) is None


def test_the_window_is_in_the_configured_timezone():
    # 09:00 in New York on Monday 2 March 2026 (EST, UTC-5) is 14:00 UTC
    assert next_for(triggered_at=at(2, 8), timezone="America/New_York") == at(2, 14)
    # Monday 23:30 UTC is Monday 18:30 in New York: after the window, so Tuesday 09:00 EST
    assert next_for(triggered_at=at(2, 23, 30), timezone="America/New_York") == at(3, 14)


def test_daily_attempts_are_counted_per_local_day():
    # both attempts are on Monday in New York although the second is Tuesday 01:00 UTC
    attempts = [at(2, 16), dt.datetime(2026, 3, 3, 1, 0)]
    setting = {"window_start_time": "09:00:00", "window_end_time": "21:00:00"}
    assert next_for(
        setting, attempts=attempts, now=dt.datetime(2026, 3, 3, 1, 5), timezone="America/New_York"
    ) == at(3, 14)


@pytest.mark.parametrize("start, end", [("22:00:00", "06:00:00"), ("09:00:00", "09:00:00")])
def test_windows_that_cross_midnight_are_rejected(start, end):
    with pytest.raises(ScheduleError):
        next_for({"window_start_time": start, "window_end_time": end})


def test_now_later_than_the_earliest_time_wins():
    assert next_for(attempts=[at(2, 9)], now=at(2, 12)) == at(2, 12)
