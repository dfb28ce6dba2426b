"""What the agent may tell a candidate about the job: facts from the job record and the job's FAQ,
found by keywords. An answer is only ever one of these facts, worded from the record; anything else
is passed to the recruiter."""

from __future__ import annotations

import re
from dataclasses import dataclass

PASS_TO_RECRUITER = "I don't have that information, so I'll pass that question to the recruiter."

STOPWORDS = frozenset(
    "a an and are as at be but by can could do does for from have how i if in is it its me my of "
    "on or our "
    "so that the there this to was what whats when where which who will with would you your about "
    "any there's "
    "is there are there tell know like much many get be being been job role position".split()
)

# Topic -> the words that ask about it; each is answered from one part of the job record
TOPIC_WORDS = {
    "pay": (
        "pay",
        "paid",
        "salary",
        "wage",
        "wages",
        "rate",
        "compensation",
        "money",
        "earn",
        "hourly",
        "payment",
    ),
    "workplace": (
        "remote",
        "hybrid",
        "onsite",
        "on-site",
        "office",
        "home",
        "wfh",
        "in-person",
        "person",
        "telecommute",
        "workplace",
    ),
    "location": ("where", "location", "located", "address", "city", "based", "commute"),
    "employment_type": (
        "full-time",
        "fulltime",
        "full",
        "part-time",
        "part",
        "contract",
        "permanent",
        "temporary",
        "temp",
        "employment",
        "hours",
    ),
    "start_date": ("start", "starting", "begin", "beginning", "startdate"),
    "duration": ("long", "duration", "length", "months", "weeks"),
    "description": (
        "involve",
        "involves",
        "duties",
        "responsibilities",
        "day-to-day",
        "tasks",
        "describe",
        "description",
        "entail",
    ),
    "title": ("title", "called"),
}
TOPIC_ORDER = (
    "pay",
    "workplace",
    "employment_type",
    "start_date",
    "duration",
    "location",
    "description",
    "title",
)


@dataclass(frozen=True)
class Fact:
    """One thing the agent may say: its topic (a job field or faq:<n>) and the sentence."""

    source: str
    text: str


def words(text: str) -> set[str]:
    """The content words of a text, lower-case, with a plural or -ing ending dropped."""
    found = set()
    for word in re.findall(r"[a-z0-9][a-z0-9'-]*", text.lower()):
        if word in STOPWORDS:
            continue
        found.add(word)
        for ending in ("ing", "es", "s"):
            if word.endswith(ending) and len(word) - len(ending) >= 3:
                found.add(word[: -len(ending)])
                break
    return found


def _money(value: float) -> str:
    return f"{value:,.2f}".rstrip("0").rstrip(".") if value != int(value) else f"{int(value):,}"


def job_facts(job) -> dict[str, str]:
    """The sentences the job record supports, by topic (a topic the record leaves empty is
    absent)."""
    facts: dict[str, str] = {"title": f"The role is {job.title}."}
    currency = f" {job.pay_rate_currency}" if job.pay_rate_currency else ""
    per = f" {job.pay_frequency.lower()}" if job.pay_frequency else ""
    if (
        job.min_pay_rate is not None
        and job.max_pay_rate is not None
        and job.min_pay_rate != job.max_pay_rate
    ):
        facts["pay"] = (
            f"The pay is {_money(job.min_pay_rate)} to {_money(job.max_pay_rate)}{currency}{per}."
        )
    elif job.min_pay_rate is not None or job.max_pay_rate is not None:
        rate = job.min_pay_rate if job.min_pay_rate is not None else job.max_pay_rate
        facts["pay"] = f"The pay is {_money(rate)}{currency}{per}."
    if job.workplace_type:
        facts["workplace"] = f"The role is {job.workplace_type.lower()}."
    place = (
        ", ".join(part for part in (job.city, job.state_name, job.country) if part) or job.address
    )
    if place:
        facts["location"] = f"The job is located in {place}."
    if job.employment_type:
        facts["employment_type"] = f"It is a {job.employment_type.lower()} position."
    if job.start_date:
        facts["start_date"] = f"The expected start date is {job.start_date}."
    if job.duration:
        facts["duration"] = f"The expected duration is {job.duration}."
    if job.description:
        first = re.split(r"(?<=[.!?])\s+", " ".join(job.description.split()))[0][:300]
        facts["description"] = f"In short: {first}"
    return facts


def answer_question(question: str, job, faq: list[dict]) -> Fact | None:
    """The fact that answers the candidate's question, or None (then the recruiter is told). An FAQ
    entry answers when most of its question's content words are in the candidate's; a job topic
    answers when one of its words is asked about and the record holds it. Asking about something
    neither holds (a benefit the job does not mention) finds nothing."""
    asked = words(question)
    if not asked:
        return None
    best: tuple[float, Fact] | None = None
    for index, entry in enumerate(faq):
        entry_words = words(entry.get("question", ""))
        if not entry_words:
            continue
        shared = asked & entry_words
        overlap = len(shared) / len(entry_words)
        if shared and overlap >= 0.5 and (best is None or overlap > best[0]):
            best = (overlap, Fact(f"faq:{index}", entry["answer"]))
    if best is not None:
        return best[1]
    facts = job_facts(job)
    lowered = question.lower()
    for topic in TOPIC_ORDER:
        if topic in facts and any(_mentions(lowered, asked, word) for word in TOPIC_WORDS[topic]):
            return Fact(topic, facts[topic])
    return None


def _mentions(lowered: str, asked: set[str], word: str) -> bool:
    return (
        word in asked or ("-" in word and word in lowered) or (word == "where" and word in lowered)
    )


def fact_for_source(source: str, job, faq: list[dict]) -> Fact | None:
    """The fact a source names (a job topic or faq:<n>), None when the record does not hold it."""
    if source.startswith("faq:"):
        try:
            index = int(source[4:])
        except ValueError:
            return None
        return Fact(source, faq[index]["answer"]) if 0 <= index < len(faq) else None
    text = job_facts(job).get(source)
    return Fact(source, text) if text else None


def fact_sources(job, faq: list[dict]) -> dict[str, str]:
    """Every fact the agent may state, by source: what a model is given to choose from."""
    return {
        **job_facts(job),
        **{f"faq:{i}": f"Q: {e['question']} A: {e['answer']}" for i, e in enumerate(faq)},
    }
