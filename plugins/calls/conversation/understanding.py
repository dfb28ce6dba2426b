"""What a candidate's utterance means to the deterministic dialogue: yes or no, a number, a choice,
a request to stop, be called back or a question of their own, and the time a callback is asked for.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from zoneinfo import ZoneInfo

YES = re.compile(
    r"\b(yes|yeah|yep|yup|sure|certainly|definitely|absolutely|of course|correct|that's right|"
    r"that is right|speaking|i do|i have|i am|i can|i will|it is|go ahead|okay|ok|fine)\b",
    re.I,
)
NO = re.compile(
    r"\b(no|nope|nah|not|never|don't|do not|haven't|have not|can't|cannot|won't|isn't|wasn't|"
    r"didn't|i'm not)\b",
    re.I,
)
STRONG_NO = re.compile(r"^\s*(no|nope|nah)\b", re.I)
STRONG_YES = re.compile(
    r"^\s*(yes|yeah|yep|yup|sure|of course|absolutely|definitely|correct)\b", re.I
)

OPT_OUT = re.compile(
    r"\b(don't|do not|never|stop) (ever )?(call|calling|contact|ring)(ing)? me\b|"
    r"\bremove (me|my number)\b|\btake me off\b|\bput me on (your|a|the) do not call\b|"
    r"\bstop calling\b|\bunsubscribe\b",
    re.I,
)
WRONG_NUMBER = re.compile(
    r"\bwrong (number|person)\b|\bno one (by|with) that name\b|"
    r"\bnobody (by|with|here by) that name\b|\bthere('s| is) no \w+ here\b|"
    r"\byou have the wrong\b|\bnot (him|her|them)\b",
    re.I,
)
NOT_INTERESTED = re.compile(
    r"\bnot interested\b|\bno longer interested\b|\bno longer looking\b|"
    r"\bfound (another|a) (job|position|role)\b|\bwithdraw (my|the) application\b",
    re.I,
)
NOT_NOW = re.compile(
    r"\bnot (a )?(good|great|convenient) time\b|\bbad time\b|\bcall (me )?(back|later)\b|"
    r"\bcan you call\b|\bi'm (busy|driving|at work)\b|\bbusy right now\b|\bnot right now\b|"
    r"\bnot now\b|\blater (today|tonight)\b|\banother time\b",
    re.I,
)
NOTHING_MORE = re.compile(
    r"\b(no(pe)?,? (that's|that is) (it|all)|that's all|that is all|nothing (else|more)|"
    r"no (other |more |further )?questions|i'm good|i am good|all good|no thanks|no thank you)\b",
    re.I,
)
REPEAT = re.compile(
    r"^\W*(hello|hi|sorry|pardon|what|huh|come again|excuse me|say again)\W*$|\brepeat\b|"
    r"\bsay (that|it) again\b|\bdidn't (catch|hear|get) (that|it|you)\b",
    re.I,
)
QUESTION_OPENERS = re.compile(
    r"^\s*(what|what's|whats|how|where|when|which|who|why|is there|are there|is it|is this|is "
    r"the|does|do you|"
    r"do i|do they|can i|could i|will i|would i|will there|would there|may i|any)\b",
    re.I,
)

NUMBER_WORDS = {
    "zero": 0,
    "none": 0,
    "no": 0,
    "one": 1,
    "a": 1,
    "an": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "half": 0.5,
    "couple": 2,
}
NUMBER = re.compile(r"(\d+(?:[.,]\d+)?)")
WORD_NUMBER = re.compile(
    r"\b("
    + "|".join(
        sorted((w for w in NUMBER_WORDS if w not in ("a", "an", "no")), key=len, reverse=True)
    )
    + r")\b",
    re.I,
)
A_NUMBER_OF = re.compile(r"\b(a|an) (year|month|decade)\b", re.I)
MONTHS_UNIT = re.compile(r"\bmonths?\b", re.I)


def yes_or_no(text: str) -> bool | None:
    """True for a yes, False for a no, None when the utterance says neither (or both without a clear
    lead)."""
    if STRONG_NO.search(text):
        return False
    if STRONG_YES.search(text):
        return True
    said_yes, said_no = bool(YES.search(text)), bool(NO.search(text))
    if said_yes and not said_no:
        return True
    if said_no and not said_yes:
        return False
    return None


def number_in(text: str, *, unit_years: bool = False) -> float | None:
    """The first number said, in digits or words ('five', 'a couple', 'a year'); months become years
    with `unit_years` ('eighteen months' -> 1.5)."""
    value: float | None = None
    digits = NUMBER.search(text)
    words = WORD_NUMBER.search(text)
    if digits and (not words or digits.start() <= words.start()):
        value = float(digits.group(1).replace(",", "."))
    elif words:
        value = float(NUMBER_WORDS[words.group(1).lower()])
        tail = text[words.end() : words.end() + 12].lower()
        if words.group(1).lower() in ("twenty", "thirty", "forty", "fifty"):
            more = WORD_NUMBER.match(tail.lstrip(" -"))
            if more and NUMBER_WORDS[more.group(1).lower()] < 10:
                value += NUMBER_WORDS[more.group(1).lower()]
        if "and a half" in tail:
            value += 0.5
    elif A_NUMBER_OF.search(text):
        value = 1.0
    if (
        value is not None
        and unit_years
        and MONTHS_UNIT.search(text)
        and not re.search(r"\byears?\b", text, re.I)
    ):
        value = round(value / 12, 2)
    if value is not None and value == int(value):
        value = float(int(value))
    return value


def choice_in(text: str, choices: list[str]) -> str | None:
    """The option named in the utterance (whole words or their plural, any case), the longest when
    several match."""
    named = [
        choice
        for choice in choices
        if re.search(r"\b" + re.escape(choice.lower()) + r"(s|es)?\b", text.lower())
    ]
    return max(named, key=len) if named else None


def is_question(text: str) -> bool:
    """Whether the candidate asks something (a question mark, or an utterance opening like a
    question)."""
    return text.rstrip().endswith("?") or bool(QUESTION_OPENERS.search(text))


def asks_to_repeat(text: str) -> bool:
    """'Sorry?', 'Hello?', 'Can you repeat that?': the last prompt is said again."""
    return bool(REPEAT.search(text))


def wants_opt_out(text: str) -> bool:
    return bool(OPT_OUT.search(text))


def wrong_number(text: str) -> bool:
    return bool(WRONG_NUMBER.search(text))


def not_interested(text: str) -> bool:
    return bool(NOT_INTERESTED.search(text))


def not_now(text: str) -> bool:
    return bool(NOT_NOW.search(text))


def nothing_more(text: str) -> bool:
    return bool(NOTHING_MORE.search(text))


# Callback times: dateparser reads the day and time; these rules settle what it leaves open on a
# phone line
AFTER = re.compile(r"\b(after|from|past)\s+(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?", re.I)
CLOCK = re.compile(
    r"\b(?:at|around|about|by)?\s*(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.|o'clock)?\b", re.I
)
DAY_WORDS = re.compile(
    r"\b(today|tonight|tomorrow|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"this (morning|afternoon|evening)|next week)\b",
    re.I,
)
PART_OF_DAY = {
    "morning": dt.time(9),
    "afternoon": dt.time(14),
    "evening": dt.time(18),
    "tonight": dt.time(18),
}
WORKDAY_PM_BEFORE = 8  # "at 5" on a phone line means 5 pm: calls are not placed before 8 am


def callback_time(
    text: str, *, now: dt.datetime, zone: str, language: str | None = None
) -> dt.datetime | None:
    """The moment a candidate asks to be called back ('tomorrow at 10', 'after 5', 'Friday
    afternoon'), as an aware datetime in `zone`, never in the past; None when the utterance names no
    time."""
    tz = ZoneInfo(zone)
    local_now = now.astimezone(tz)
    day_match = DAY_WORDS.search(text)
    clock = AFTER.search(text) or _clock_time(text)
    if not day_match and not clock:
        return None
    day = local_now.date()
    if day_match:
        word = day_match.group(1).lower()
        if word != "tonight" and not word.startswith("this "):
            day = _day_named(word, local_now.date(), (language or "en")[:2]) or day
    hour_minute = _hour_minute(clock) if clock else None
    if hour_minute is None:
        part = next((time for name, time in PART_OF_DAY.items() if name in text.lower()), None)
        hour_minute = (
            (part.hour, part.minute)
            if part
            else (local_now.hour + 1, 0)
            if not day_match
            else (9, 0)
        )
    hour, minute = hour_minute
    when = dt.datetime.combine(day, dt.time(min(hour, 23), minute), tzinfo=tz)
    if when <= local_now:
        when += dt.timedelta(days=1)
    return when


@functools.lru_cache(maxsize=256)
def _day_named(word: str, today: dt.date, language: str) -> dt.date | None:
    """The day a word names from `today` on ('tomorrow', 'friday', 'next week'), read by dateparser.
    Answers are kept: the first parse of a language loads its data (about 2 s), later ones take tens
    of milliseconds, and a relay asks the same few words all day."""
    import dateparser

    base = dt.datetime.combine(today, dt.time(12))
    settings = {"PREFER_DATES_FROM": "future", "RELATIVE_BASE": base}
    parsed = dateparser.parse(word, languages=[language], settings=settings)
    return parsed.date() if parsed is not None else None


def warm_up(language: str = "en") -> None:
    """Load the date parser's data for `language` now (a relay process calls this at start, so no
    candidate waits for it)."""
    _day_named("tomorrow", dt.date.today(), language)


def _clock_time(text: str):
    for match in CLOCK.finditer(text):
        if match.group(0).strip() and (
            match.group(3) or re.match(r"\s*(at|around|about|by)\b", match.group(0), re.I)
        ):
            return match
    return None


def _hour_minute(match) -> tuple[int, int] | None:
    groups = match.groups()
    hour, minute, meridiem = (groups[1], groups[2], groups[3]) if len(groups) == 4 else groups
    hour_value, minute_value = int(hour), int(minute or 0)
    if hour_value > 23 or minute_value > 59:
        return None
    marker = (meridiem or "").lower().replace(".", "")
    if marker == "pm" and hour_value < 12:
        hour_value += 12
    elif marker == "am" and hour_value == 12:
        hour_value = 0
    elif marker not in ("am", "pm") and hour_value < WORKDAY_PM_BEFORE:
        hour_value += 12
    return hour_value, minute_value
