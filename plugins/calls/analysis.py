"""Turn a finished call's transcript into a summary and an assessment (score, recommendation,
per-question answers).

Rule-based by default; with HIREKIT_LLM_URL set, an OpenAI-compatible model writes them and the
rules are the fallback whenever the model is unreachable or answers something unusable.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Callable

log = logging.getLogger("hirekit.calls")

ADVANCE_AT, HOLD_AT = 75, 50
RECOMMENDATIONS = ("advance", "hold", "reject")
NEGATIVE = re.compile(r"\b(no|not|never|don't|do not|haven't|have not|can't|cannot|won't)\b", re.I)
AFFIRMATIVE = re.compile(
    r"\b(yes|yeah|yep|sure|certainly|definitely|absolutely|of course|i do|i have|i can)\b", re.I
)
YEARS = re.compile(r"(\d+)\s*\+?\s*(?:or more\s+)?years?", re.I)
YES_NO_OPENERS = (
    "do ",
    "does ",
    "are ",
    "is ",
    "have ",
    "has ",
    "can ",
    "could ",
    "will ",
    "would ",
    "did ",
    "were ",
)
SUBSTANTIVE_WORDS = 6

# A chat model: messages in, text out (app.outbound.llm's client, or anything with that shape)
ChatModel = Callable[[list[dict]], str]


@dataclass(frozen=True)
class CallContext:
    candidate_name: str
    job_title: str
    job_description: str
    questions: list[str]
    transcript: list[dict]


def answers_by_question(context: CallContext) -> list[str | None]:
    """What the candidate said after each question (None when it went unanswered)."""
    answers: list[list[str]] = [[] for _ in context.questions]
    for turn in context.transcript:
        index = turn.get("question_index")
        if (
            turn.get("speaker") == "candidate"
            and isinstance(index, int)
            and 0 <= index < len(answers)
        ):
            answers[index].append(turn.get("text", "").strip())
    return [" ".join(parts).strip() or None for parts in answers]


def required_years(question: str, description: str) -> int:
    """The years a question asks for ('at least 3 years', '3+ years'), else the job description's,
    else 1."""
    for text in (question, description):
        found = YEARS.search(text or "")
        if found:
            return int(found.group(1))
    return 1


def judge(question: str, answer: str | None, description: str) -> tuple[bool, str]:
    """Whether one answer meets what the question asks, and why."""
    if not answer:
        return False, "no answer"
    text = question.strip().lower()
    if re.search(r"how many years|years of", text):
        stated = re.search(r"(\d+)", answer)
        if not stated:
            return False, "no number of years given"
        needed = required_years(question, description)
        return int(stated.group(1)) >= needed, f"{stated.group(1)} years stated, {needed} required"
    if text.startswith(YES_NO_OPENERS):
        if NEGATIVE.search(answer) and not re.match(r"\s*yes\b", answer, re.I):
            return False, "answered no"
        return bool(AFFIRMATIVE.search(answer)), "answered yes" if AFFIRMATIVE.search(
            answer
        ) else "unclear answer"
    substantive = len(answer.split()) >= SUBSTANTIVE_WORDS
    return substantive, "substantive answer" if substantive else "very short answer"


def recommendation_for(score: int) -> str:
    return "advance" if score >= ADVANCE_AT else "hold" if score >= HOLD_AT else "reject"


def analyze_with_rules(context: CallContext) -> tuple[str, dict]:
    answers = []
    for question, answer in zip(context.questions, answers_by_question(context)):
        meets, note = judge(question, answer, context.job_description)
        answers.append(
            {"question": question, "answer": answer, "meets_requirement": meets, "note": note}
        )
    met = sum(1 for a in answers if a["meets_requirement"])
    score = round(100 * met / len(answers)) if answers else 0
    recommendation = recommendation_for(score) if answers else "hold"
    parts = [
        f"{context.candidate_name} was screened by phone for the {context.job_title} position."
    ]
    for entry in answers:
        said = f'said "{entry["answer"].rstrip(".")}"' if entry["answer"] else "gave no answer"
        parts.append(f'Asked "{entry["question"]}", they {said}.')
    if answers:
        parts.append(f"{met} of {len(answers)} requirements met; recommendation: {recommendation}.")
    else:
        parts.append(
            "The job has no screening questions, so there is nothing to assess; recommendation: "
            "hold."
        )
    return " ".join(parts), {
        "score": score,
        "recommendation": recommendation,
        "answers": answers,
        "analyzer": "rules",
    }


LLM_INSTRUCTIONS = (
    "You assess phone screening calls for recruiters. Reply with JSON only: "
    '{"summary": "<3-5 sentences: who, which job, what they said about each question>", '
    '"score": <0-100>, "recommendation": "advance|hold|reject", '
    '"answers": [{"question": "...", "answer": "...", "meets_requirement": true|false, "note": '
    '"..."}]} '
    "with one answers entry per question, in order."
)


def analyze_with_model(context: CallContext, model: ChatModel, model_name: str) -> tuple[str, dict]:
    """Ask the model; raises ValueError when its answer does not have the shape we promise
    clients."""
    prompt = json.dumps(
        {
            "candidate": context.candidate_name,
            "job_title": context.job_title,
            "job_description": context.job_description[:4000],
            "questions": context.questions,
            "transcript": context.transcript,
        }
    )
    reply = model(
        [{"role": "system", "content": LLM_INSTRUCTIONS}, {"role": "user", "content": prompt}]
    )
    match = re.search(r"\{.*\}", reply, re.S)
    data = json.loads(match.group(0) if match else reply)
    score = int(data["score"])
    if (
        not 0 <= score <= 100
        or data["recommendation"] not in RECOMMENDATIONS
        or not str(data["summary"]).strip()
    ):
        raise ValueError("model answer out of bounds")
    answers = data["answers"]
    if len(answers) != len(context.questions):
        raise ValueError("model did not answer every question")
    clean = [
        {
            "question": question,
            "answer": entry.get("answer"),
            "meets_requirement": bool(entry.get("meets_requirement")),
            "note": entry.get("note"),
        }
        for question, entry in zip(context.questions, answers)
    ]
    return str(data["summary"]).strip(), {
        "score": score,
        "recommendation": data["recommendation"],
        "answers": clean,
        "analyzer": f"llm:{model_name}",
    }


def analyze(
    context: CallContext, model: ChatModel | None = None, model_name: str = ""
) -> tuple[str, dict]:
    """(summary, assessment): the model's when one is configured and answers well, else the
    rules'."""
    if model is not None:
        try:
            return analyze_with_model(context, model, model_name)
        except Exception as exc:  # noqa: BLE001 - any model failure falls back to the rules
            log.warning("call analysis by model failed (%s); using the rules", exc)
    return analyze_with_rules(context)


def configured_model(config) -> ChatModel | None:
    """The OpenAI-compatible chat model of app.outbound.llm when HIREKIT_LLM_URL is set; None means
    rules only."""
    from app.outbound.llm import LlmClient, configured

    if not configured(config):
        return None
    client = LlmClient.from_config(config)
    return lambda messages: client.chat(messages, json_mode=True)
