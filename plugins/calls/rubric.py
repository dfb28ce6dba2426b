"""How a screening answer is judged: a question's rubric (its answer type, what meets it, knockout,
weight), the typed value read from the candidate's words, its 0-5 score, and the weighted assessment
of a whole call."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from plugins.calls.analysis import (
    SUBSTANTIVE_WORDS,
    YES_NO_OPENERS,
    recommendation_for,
    required_years,
)
from plugins.calls.conversation.understanding import choice_in, number_in, yes_or_no

MAX_SCORE = 5
TEXT_MIN_WORDS = 3  # a shorter answer to an open question is followed up
EVASIVE = re.compile(
    r"\b(i don't know|i do not know|not sure|maybe|it depends|i guess|whatever|no comment|"
    r"hard to say|i'd rather not|pass)\b",
    re.I,
)
NUMBER_WORDING = re.compile(
    r"\bhow many\b|\bhow much\b|\byears of\b|\bhow long\b|\bnumber of\b", re.I
)


@dataclass(frozen=True)
class Rubric:
    """A question's rubric with the gaps filled: an answer type inferred from the wording when none
    is set, and for 'how many years' questions the years the question (or the job description) asks
    for."""

    answer_type: str
    expected: str | None = None
    minimum: float | None = None
    choices: list[str] = field(default_factory=list)
    accepted: list[str] = field(default_factory=list)
    knockout: bool = False
    weight: float = 1.0


def inferred_type(question: str) -> str:
    text = question.strip().lower()
    if NUMBER_WORDING.search(text):
        return "number"
    if text.startswith(YES_NO_OPENERS):
        return "yes_no"
    return "text"


def resolve(question: str, stored, description: str = "") -> Rubric:
    """The rubric a question is judged by: its stored one (a QuestionRubric row, or None) completed
    by inference."""
    answer_type = (stored.answer_type if stored is not None else None) or inferred_type(question)
    minimum = stored.minimum if stored is not None else None
    if answer_type == "number" and minimum is None and re.search(r"\byears?\b", question, re.I):
        minimum = float(required_years(question, description))
    if stored is None:
        return Rubric(
            answer_type=answer_type,
            expected="yes" if answer_type == "yes_no" else None,
            minimum=minimum,
        )
    return Rubric(
        answer_type=answer_type,
        expected=stored.expected or ("yes" if answer_type == "yes_no" else None),
        minimum=minimum,
        choices=list(stored.choices or []),
        accepted=list(stored.accepted or []),
        knockout=bool(stored.knockout),
        weight=float(stored.weight if stored.weight is not None else 1.0),
    )


def read_value(rubric: Rubric, text: str):
    """The typed value the words give (bool, number, a choice, or the text itself), None when they
    give none: no number for a number question, neither yes nor no, no option named, or an evasion.
    """
    if rubric.answer_type == "yes_no":
        return yes_or_no(text)
    if rubric.answer_type == "number":
        return number_in(text, unit_years=rubric.minimum is not None)
    if rubric.answer_type == "choice":
        return choice_in(text, rubric.choices)
    stripped = " ".join(text.split())
    count = len(stripped.split())
    if count < TEXT_MIN_WORDS or (EVASIVE.search(stripped) and count < SUBSTANTIVE_WORDS):
        return None
    return stripped


def valid_value(rubric: Rubric, value) -> bool:
    """Whether a value (a model's, say) has the question's type: what the record may keep."""
    if rubric.answer_type == "yes_no":
        return isinstance(value, bool)
    if rubric.answer_type == "number":
        return (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and 0 <= value < 1_000_000
        )
    if rubric.answer_type == "choice":
        return isinstance(value, str) and value in rubric.choices
    return isinstance(value, str) and bool(value.strip())


def judge(rubric: Rubric, value) -> tuple[int, bool, str]:
    """(score 0-5, meets the requirement, a note) for a typed value; None is unanswered."""
    if value is None:
        return 0, False, "no answer"
    if rubric.answer_type == "yes_no":
        wanted = (rubric.expected or "yes") == "yes"
        meets = value is wanted
        return (MAX_SCORE if meets else 0), meets, f"answered {'yes' if value else 'no'}"
    if rubric.answer_type == "number":
        if rubric.minimum is None or rubric.minimum <= 0:
            return MAX_SCORE, True, f"{_plain(value)} stated"
        meets = value >= rubric.minimum
        score = (
            MAX_SCORE
            if meets
            else max(0, min(MAX_SCORE - 1, round(MAX_SCORE * value / rubric.minimum)))
        )
        return score, meets, f"{_plain(value)} stated, {_plain(rubric.minimum)} required"
    if rubric.answer_type == "choice":
        meets = not rubric.accepted or value in rubric.accepted
        return (MAX_SCORE if meets else 0), meets, f"chose {value}"
    count = len(str(value).split())
    meets = count >= SUBSTANTIVE_WORDS
    score = min(MAX_SCORE, max(1, 1 + count // 6))
    return score, meets, "substantive answer" if meets else "very short answer"


def _plain(number: float) -> str:
    return str(int(number)) if float(number) == int(number) else str(number)


def assess(results: list[dict]) -> dict:
    """The call's assessment from its per-question results: the score (0-100) weighs each question's
    0-5 score by its weight; a knockout question answered without meeting it makes the
    recommendation reject and is named in `knockouts_failed`; a knockout left unanswered holds the
    recommendation at hold at best."""
    total_weight = sum(entry.get("weight", 1.0) for entry in results)
    earned = sum(
        entry.get("weight", 1.0) * (entry.get("score") or 0) / MAX_SCORE for entry in results
    )
    score = round(100 * earned / total_weight) if total_weight > 0 else 0
    failed = [
        entry["question"]
        for entry in results
        if entry.get("knockout")
        and entry.get("value") is not None
        and not entry.get("meets_requirement")
    ]
    open_knockouts = [
        entry for entry in results if entry.get("knockout") and entry.get("value") is None
    ]
    if failed:
        recommendation = "reject"
    elif not results:
        recommendation = "hold"
    else:
        recommendation = recommendation_for(score)
        if open_knockouts and recommendation == "advance":
            recommendation = "hold"
    return {"score": score, "recommendation": recommendation, "knockouts_failed": failed}
