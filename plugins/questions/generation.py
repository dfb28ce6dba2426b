"""Screening-question generators: a deterministic rule-based extractor over the job, and a
model-backed one that falls back to it.

The rules ask what a recruiter screens on first: years in the must-have skills the description
names, those skills, certifications and licenses it names, work authorization, location or workplace
type, schedule, start date, pay within the job's range, and physical or background-check
requirements it states."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Protocol

from app.outbound import llm

# Questions are generated from the first this many characters of a description (a posting's
# requirements come well within them): the rules scan the text once per term they know, so this
# bounds what one generation costs (well under a second of one core) whatever the description's
# length, up to its bound of 50,000.
MAX_DESCRIPTION_READ = 20_000

log = logging.getLogger("hirekit.questions")

MIN_QUESTIONS = 5
MAX_QUESTIONS = 10
MAX_YEARS_QUESTIONS = 3
MAX_SKILLS_PER_QUESTION = 4


@dataclass(frozen=True)
class JobFacts:
    """What a generator reads about a job."""

    title: str
    description: str = ""
    city: str | None = None
    state_name: str | None = None
    country: str | None = None
    workplace_type: str | None = None
    employment_type: str | None = None
    start_date: str | None = None
    min_pay_rate: float | None = None
    max_pay_rate: float | None = None
    pay_frequency: str | None = None
    pay_rate_currency: str | None = None

    @classmethod
    def of(cls, job) -> JobFacts:
        return cls(
            **{
                name: getattr(job, name, None)
                for name in cls.__dataclass_fields__
                if name != "description"
            },
            description=(job.description or "")[:MAX_DESCRIPTION_READ],
        )


class QuestionGenerator(Protocol):
    def generate(self, job: JobFacts) -> list[str]:
        """5-10 screening questions for the job, most important first."""


# ---- reading the description -------------------------------------------------

WORD_NUMBERS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
NUMBER = r"\d{1,2}|" + "|".join(WORD_NUMBERS)
YEARS = re.compile(
    rf"\b(?P<low>{NUMBER})(?:\s*\(\d{{1,2}}\))?\s*(?:\+|plus|or "
    r"more)?\s*(?:(?:-|–|to)\s*(?P<high>\d{1,2})\s*\+?\s*)?"
    rf"years?'?\s*(?:of\s+)?(?P<rest>[^.;:\n!?]*)",
    re.IGNORECASE,
)
QUALIFIERS = re.compile(
    r"^(?:(?:recent|relevant|professional|hands-on|progressive|paid|full-time|prior|direct|proven|"
    r"previous|demonstrated|solid|strong|practical|production|industry|clinical|work|working)\s+)+",
    re.IGNORECASE,
)
SUBJECT_STOPS = re.compile(
    r"\s*(?:,|\(|\bis\b|\bare\b|\brequired\b|\bpreferred\b|\bstrongly\b|\bwith a\b|\band a\b|"
    r"\band an\b|\bis a plus\b|\bwhere\b|\bwhich\b|\bthat\b|\bwhile\b)",
    re.IGNORECASE,
)
OPTIONAL_MARKERS = re.compile(
    r"nice[- ]to[- ]have|preferred|a plus\b|bonus|desirable|is helpful|would be great",
    re.IGNORECASE,
)
OPTIONAL_HEADER = re.compile(
    r"^\s*(?:#+\s*)?(?:nice[- ]to[- ]haves?|preferred(?: qualifications| skills)?|bonus(?: "
    r"points)?|"
    r"pluses)\s*:?\s*$",
    re.IGNORECASE,
)
HEADER = re.compile(r"^\s*(?:#+\s*)?[A-Za-z][\w /&'-]{0,60}:\s*$")


@dataclass(frozen=True)
class Requirement:
    sentence: str
    optional: bool


def requirements(description: str) -> list[Requirement]:
    """The description's sentences, each marked optional when it sits under a nice-to-have header or
    says so."""
    found: list[Requirement] = []
    optional_section = False
    for line in description.splitlines():
        if OPTIONAL_HEADER.match(line):
            optional_section = True
            continue
        if HEADER.match(line):
            optional_section = False
            continue
        for sentence in re.split(r"(?<=[.!?;])\s+", line.strip(" \t-*•")):
            if sentence.strip():
                found.append(
                    Requirement(
                        sentence.strip(),
                        optional_section or bool(OPTIONAL_MARKERS.search(sentence)),
                    )
                )
    return found


def _number(text: str) -> int:
    return int(text) if text.isdigit() else WORD_NUMBERS[text.lower()]


@dataclass(frozen=True)
class YearsAsked:
    years: int
    upper: int | None
    phrase: str  # "ICU experience", "experience building APIs in Python"


def years_requirements(sentences: list[Requirement]) -> list[YearsAsked]:
    """'3+ years of ICU experience' -> YearsAsked(3, None, 'ICU experience'), for must-have
    sentences only."""
    found: list[YearsAsked] = []
    for requirement in sentences:
        if requirement.optional:
            continue
        for match in YEARS.finditer(requirement.sentence):
            phrase = _experience_phrase(match.group("rest"))
            if phrase is None:
                continue
            low = _number(match.group("low"))
            high = int(match.group("high")) if match.group("high") else None
            if 0 < low <= 40 and not any(seen.phrase.lower() == phrase.lower() for seen in found):
                found.append(YearsAsked(low, high, phrase))
    return found


def _experience_phrase(rest: str) -> str | None:
    rest = rest.strip()
    if re.match(r"(?:of\s+)?(?:age|old)\b", rest, re.IGNORECASE):
        return None  # "18 years of age" is an age requirement, not experience
    rest = QUALIFIERS.sub("", rest)
    lowered = rest.lower()
    if lowered.startswith("experience"):
        tail = QUALIFIERS.sub("", rest[len("experience") :].strip())
        tail = _cut(tail)
        return f"experience {tail}" if tail else "relevant experience"
    head, separator, _ = rest.partition(" experience")
    if not separator and not lowered.endswith("experience"):
        subject = _cut(rest)
        if not subject:
            return None
        first = subject.split()[0].lower()
        if first.endswith("ing") or first in EXPERIENCE_PREPOSITIONS:
            return f"experience {subject}"
        return f"{subject} experience" if len(subject.split()) <= 5 else None
    subject = _cut(head.removesuffix("experience").strip())
    return f"{subject} experience" if subject else "relevant experience"


EXPERIENCE_PREPOSITIONS = (
    "with",
    "in",
    "as",
    "on",
    "using",
    "at",
    "for",
    "within",
    "across",
    "leading",
    "managing",
)


def _cut(text: str) -> str:
    text = SUBJECT_STOPS.split(text, maxsplit=1)[0]
    words = text.split()[:8]
    return " ".join(words).strip(" -–,")


@dataclass(frozen=True)
class Term:
    """A skill or credential: how it is named in questions, and the pattern that finds it in a
    description."""

    name: str
    pattern: str
    case_sensitive: bool = False

    def search(self, text: str):
        return re.search(self.pattern, text, 0 if self.case_sensitive else re.IGNORECASE)

    def find(self, text: str) -> bool:
        return self.search(text) is not None

    def position(self, text: str) -> int:
        match = self.search(text)
        return match.start() if match else len(text)


def _terms(*names: str, case_sensitive: bool = False) -> list[Term]:
    return [
        Term(name, rf"(?<![\w+#.]){re.escape(name)}(?![\w+#])", case_sensitive) for name in names
    ]


SKILLS: list[Term] = [
    # software
    *_terms(
        "Python",
        "Java",
        "JavaScript",
        "TypeScript",
        "Node.js",
        "Ruby on Rails",
        "Rust",
        "Scala",
        "Kotlin",
        "PHP",
        "C++",
        "C#",
        ".NET",
        "PostgreSQL",
        "MySQL",
        "MongoDB",
        "Redis",
        "Kafka",
        "RabbitMQ",
        "Elasticsearch",
        "Docker",
        "Kubernetes",
        "Terraform",
        "AWS",
        "GCP",
        "Azure",
        "Django",
        "Flask",
        "FastAPI",
        "React",
        "GraphQL",
        "gRPC",
        "Linux",
        "CI/CD",
        "microservices",
        "distributed systems",
        "Spark",
        "Airflow",
        "Snowflake",
    ),
    Term(
        "Go",
        r"\bGo(?:lang)?\b(?! (?:to|ahead|live|back|beyond|above|through)\b)",
        case_sensitive=True,
    ),
    Term("SQL", r"(?<![\w/])SQL\b", case_sensitive=True),
    Term("REST APIs", r"\bREST(?:ful)?\b", case_sensitive=True),
    # healthcare
    *_terms(
        "ICU",
        "PACU",
        "NICU",
        "telemetry",
        "med-surg",
        "oncology",
        "pediatrics",
        "labor and delivery",
        "Epic",
        "Cerner",
        "IV therapy",
        "wound care",
        "medication administration",
        "patient assessment",
        "triage",
        "ventilator management",
        "charting",
    ),
    Term("EHR/EMR", r"\bE[HM]R\b", case_sensitive=True),
    Term("ER", r"\bER\b|emergency department|emergency room", case_sensitive=False),
    # warehouse and logistics
    *_terms(
        "forklift",
        "pallet jack",
        "reach truck",
        "order picker",
        "RF scanner",
        "WMS",
        "inventory",
        "cycle counts",
        "order picking",
        "picking and packing",
        "shipping and receiving",
        "loading and unloading",
    ),
    # office and customer facing
    *_terms("Excel", "Salesforce", "SAP", "QuickBooks", "customer service", "bilingual", "Spanish"),
]

CREDENTIAL_ACRONYMS = (
    "BLS",
    "ACLS",
    "PALS",
    "NRP",
    "TNCC",
    "CCRN",
    "CEN",
    "CPR",
    "OSHA 10",
    "OSHA 30",
    "ServSafe",
    "PMP",
    "CPA",
    "CISSP",
    "Security+",
    "CKA",
    "HAZMAT",
    "TWIC",
)
CREDENTIALS: list[Term] = [
    *[
        Term(f"{name} certification", rf"(?<![\w+]){re.escape(name)}(?![\w+])", case_sensitive=True)
        for name in CREDENTIAL_ACRONYMS
    ],
    Term("First Aid certification", r"\bfirst aid\b"),
    Term("AWS certification", r"\bAWS Certified\b|\bAWS certification\b"),
    Term(
        "forklift certification",
        r"\bforklift (?:certification|certificate|license|operator card)\b|\bcertified forklift\b",
    ),
    Term(
        "RN license",
        r"\bRN licen[cs]e\b|\bregistered nurse licen[cs]e\b|\blicensed (?:as an? )?RN\b|\bRN "
        r"licensure\b",
    ),
    Term("LPN license", r"\bLPN\b(?: licen[cs]e)?", case_sensitive=True),
    Term("CNA certification", r"\bCNA\b", case_sensitive=True),
    Term("CDL", r"\bCDL\b(?:[- ]?(?:Class )?[AB]\b)?", case_sensitive=True),
    Term("driver's license", r"\bdriver'?s licen[cs]e\b"),
]

SCHEDULE_PATTERNS = [
    r"\b(?:day|night|evening|overnight|graveyard|swing|rotating|first|second|third|1st|2nd|3rd|early|late)\s+shifts?\b",
    r"\b\d{1,2}-hour (?:(?:day|night|evening|overnight)\s+)?shifts?\b",
    r"\b(?:every other|alternating|some|rotating)\s+weekends?\b",
    r"\bweekends?\b",
    r"\bholidays?\b",
    r"\bon-call\b",
    r"\bovertime\b",
    r"\bmonday\s*(?:-|–|through|to)\s*friday\b",
    r"\b\d{1,2}(?::\d\d)?\s*(?:am|pm)\s*(?:-|–|to)\s*\d{1,2}(?::\d\d)?\s*(?:am|pm)\b",
]
LIFTING = re.compile(
    r"\blift(?:ing)?\s+(?:up to\s+|at least\s+)?(\d{2,3})\s*(?:lbs?|pounds)\b", re.IGNORECASE
)
BACKGROUND_CHECK = re.compile(r"\bbackground (?:check|screening)\b", re.IGNORECASE)
DRUG_SCREEN = re.compile(r"\bdrug (?:screen|test)(?:ing)?\b", re.IGNORECASE)
IMMEDIATE_START = re.compile(
    r"\b(?:start|available)\s+(?:immediately|asap)\b|\bimmediate start\b", re.IGNORECASE
)

COUNTRY_NAMES = {
    "us": "the United States",
    "usa": "the United States",
    "united states": "the United States",
    "united states of america": "the United States",
    "uk": "the United Kingdom",
    "gb": "the United Kingdom",
    "united kingdom": "the United Kingdom",
    "ca": "Canada",
    "de": "Germany",
    "fr": "France",
    "in": "India",
    "au": "Australia",
    "nl": "the Netherlands",
    "ie": "Ireland",
    "mx": "Mexico",
    "es": "Spain",
}
CURRENCY_SYMBOLS = {"USD": "$", "CAD": "CA$", "AUD": "A$", "EUR": "€", "GBP": "£", "INR": "₹"}
FREQUENCIES = {
    "hour": "per hour",
    "hourly": "per hour",
    "day": "per day",
    "daily": "per day",
    "week": "per week",
    "weekly": "per week",
    "month": "per month",
    "monthly": "per month",
    "year": "per year",
    "yearly": "per year",
    "annual": "per year",
    "annually": "per year",
    "salary": "per year",
}


ORDINALS = {"1st": "first", "2nd": "second", "3rd": "third"}


def schedule_phrases(description: str) -> list[str]:
    """Shift and schedule phrases in order of appearance; one inside another ('night shifts' in
    '12-hour night shifts') once."""
    found: list[tuple[int, int, str]] = []
    for pattern in SCHEDULE_PATTERNS:
        for match in re.finditer(pattern, description, re.IGNORECASE):
            found.append((match.start(), match.end(), match.group(0)))
    found.sort(key=lambda item: (item[0], -item[1]))
    phrases: list[str] = []
    seen: set[str] = set()
    last_end = -1
    for start, end, text in found:
        if end <= last_end:
            continue  # inside a longer phrase already taken
        last_end = max(last_end, end)
        words = [ORDINALS.get(word.lower(), word) for word in text.split()]
        phrase = " ".join(words)
        phrase = (
            phrase
            if phrase[:1].isupper() and phrase.split()[0].lower() in ("monday",)
            else phrase.lower()
        )
        if phrase.lower() not in seen:
            seen.add(phrase.lower())
            phrases.append(phrase)
    return phrases


def join_words(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def country_name(country: str | None) -> str | None:
    if not country:
        return None
    return COUNTRY_NAMES.get(country.strip().lower(), country.strip())


def money(amount: float, currency: str | None) -> str:
    text = f"{amount:,.2f}".removesuffix(".00")
    code = (currency or "USD").upper()
    symbol = CURRENCY_SYMBOLS.get(code)
    return f"{symbol}{text}" if symbol else f"{text} {code}"


def workplace(job: JobFacts) -> str:
    stated = (job.workplace_type or "").lower().replace("-", "").replace(" ", "")
    for kind in ("remote", "hybrid"):
        if kind in stated:
            return kind
    if stated in ("onsite", "inoffice", "office", "inperson"):
        return "onsite"
    text = f"{job.title} {job.description}".lower()
    if "hybrid" in text:
        return "hybrid"
    if re.search(
        r"\bfully remote\b|\b100% remote\b|\bremote (?:role|position|job)\b|\bwork from home\b",
        text,
    ):
        return "remote"
    return "onsite"


# ---- the rules ---------------------------------------------------------------


class RuleBasedGenerator:
    """Deterministic questions from the job's fields and description: no network, the same job gives
    the same list."""

    def generate(self, job: JobFacts) -> list[str]:
        sentences = requirements(job.description)
        must = " ".join(r.sentence for r in sentences if not r.optional)
        years = years_requirements(sentences)[:MAX_YEARS_QUESTIONS]
        questions = [self.years_question(asked) for asked in years]
        covered = " ".join(asked.phrase for asked in years)
        skills = [
            t
            for t in SKILLS
            if t.find(must) and not t.find(covered) and not self._is_credential_only(t, must)
        ]
        skills = [t.name for t in sorted(skills, key=lambda t: t.position(must))]
        if skills:
            questions.append(self.skills_question(skills[:MAX_SKILLS_PER_QUESTION]))
        credentials = [
            t.name
            for t in sorted(
                (t for t in CREDENTIALS if t.find(must)), key=lambda t: t.position(must)
            )
        ]
        if credentials:
            questions.append(self.credentials_question(credentials))
        questions.append(self.authorization_question(job))
        questions.append(self.location_question(job))
        questions.append(self.schedule_question(job))
        questions.append(self.start_question(job))
        questions.append(self.pay_question(job))
        physical = self.physical_question(job.description)
        if physical:
            questions.append(physical)
        screening = self.background_question(job.description)
        if screening:
            questions.append(screening)
        return unique(questions)[:MAX_QUESTIONS]

    @staticmethod
    def _is_credential_only(term: Term, text: str) -> bool:
        """'forklift certification' is asked about as a credential, not again as a skill."""
        return term.name == "forklift" and not re.search(
            r"\bforklift\b(?! (?:certification|certificate|license))", text, re.I
        )

    @staticmethod
    def years_question(asked: YearsAsked) -> str:
        wanted = (
            f"{asked.years} to {asked.upper} years"
            if asked.upper
            else f"at least {asked.years} year{'s' if asked.years > 1 else ''}"
        )
        return f"How many years of {asked.phrase} do you have? This role asks for {wanted}."

    @staticmethod
    def skills_question(skills: list[str]) -> str:
        return (
            f"This role requires {join_words(skills)}. Describe your hands-on experience with "
            f"{'each' if len(skills) > 1 else 'it'}, including a recent example."
        )

    @staticmethod
    def credentials_question(credentials: list[str]) -> str:
        if len(credentials) == 1:
            return (
                f"Do you currently hold a valid {credentials[0]}? Please include its "
                "expiration date."
            )
        return (
            f"Which of these do you currently hold: {join_words(credentials)}? Please include "
            "expiration dates."
        )

    @staticmethod
    def authorization_question(job: JobFacts) -> str:
        where = country_name(job.country) or "the country where this role is based"
        return (
            f"Are you legally authorized to work in {where}, and will you now or in the future "
            "require visa sponsorship?"
        )

    @staticmethod
    def location_question(job: JobFacts) -> str:
        place = ", ".join(part for part in (job.city, job.state_name) if part) or country_name(
            job.country
        )
        kind = workplace(job)
        if kind == "remote":
            where = country_name(job.country)
            return (
                f"This role is fully remote{f' within {where}' if where else ''}. Where are you "
                "based, and do you have "
                "a reliable workspace and internet connection?"
            )
        if kind == "hybrid":
            return (
                "This role is hybrid, with regular on-site days"
                f"{f' in {place}' if place else ''}. Are you able to commute there?"
            )
        if place:
            return (
                f"This role is on-site in {place}. Are you able to commute there reliably, or "
                "would you need to relocate?"
            )
        return (
            "This role is on-site. Where are you based, and are you able to commute to the "
            "work location?"
        )

    @staticmethod
    def schedule_question(job: JobFacts) -> str:
        phrases = schedule_phrases(job.description)
        if phrases:
            return (
                f"The schedule for this role includes {join_words(phrases[:4])}. Are you able "
                "to work that schedule?"
            )
        employment = (job.employment_type or "").replace("_", "-").strip().lower()
        if employment:
            return f"This is a {employment} position. Does that fit the hours you are looking for?"
        return "What days and hours are you available to work?"

    @staticmethod
    def start_question(job: JobFacts) -> str:
        if job.start_date:
            return (
                f"This role starts on {job.start_date[:10]}. Could you start by then? If not, what "
                "is the earliest date "
                "you could start?"
            )
        if IMMEDIATE_START.search(job.description):
            return "This role needs someone who can start right away. How soon could you start?"
        return (
            "When is the earliest date you could start, and do you need to give notice to a "
            "current employer?"
        )

    @staticmethod
    def pay_question(job: JobFacts) -> str:
        per = FREQUENCIES.get((job.pay_frequency or "").strip().lower(), "")
        per = f" {per}" if per else ""
        low, high = job.min_pay_rate, job.max_pay_rate
        if low is not None and high is not None and high > low:
            band = (
                f"{money(low, job.pay_rate_currency)} to {money(high, job.pay_rate_currency)}{per}"
            )
            return (
                f"The pay range for this role is {band}. Do your pay expectations fall within "
                "that range?"
            )
        if low is not None or high is not None:
            amount = money(low if low is not None else high, job.pay_rate_currency)
            return f"This role pays {amount}{per}. Does that meet your pay expectations?"
        return "What are your pay expectations for this role?"

    @staticmethod
    def physical_question(description: str) -> str | None:
        lifting = LIFTING.search(description)
        if not lifting:
            return None
        standing = (
            " and standing or walking for most of a shift"
            if re.search(r"\bstand(?:ing)?\b", description, re.I)
            else ""
        )
        return (
            f"This role requires lifting up to {lifting.group(1)} lbs{standing}. Are you able to "
            "perform these duties, "
            "with or without reasonable accommodation?"
        )

    @staticmethod
    def background_question(description: str) -> str | None:
        checks = [
            name
            for name, pattern in (
                ("a background check", BACKGROUND_CHECK),
                ("a drug screen", DRUG_SCREEN),
            )
            if pattern.search(description)
        ]
        if not checks:
            return None
        return (
            f"This role requires {join_words(checks)} before starting. Are you willing to "
            f"complete {'them' if len(checks) > 1 else 'it'}?"
        )


def normalized(text: str) -> str:
    """Question text compared for duplicates: case, spacing and punctuation ignored."""
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def unique(questions: list[str]) -> list[str]:
    seen: set[str] = set()
    kept = []
    for question in questions:
        key = normalized(question)
        if key and key not in seen:
            seen.add(key)
            kept.append(question)
    return kept


# ---- the model ---------------------------------------------------------------

SYSTEM_PROMPT = (
    "You are an experienced technical recruiter writing phone-screen questions. Answer only with "
    "JSON of the form "
    '{"questions": ["...", "..."]}: between 5 and 10 short questions, most important first, that '
    'screen for the '
    "must-have skills and years of experience the description names (never invent requirements it "
    "does not state), "
    "work authorization, location or workplace type, schedule or shift, availability to start, pay "
    "expectations "
    "within the stated range, and any certifications or licenses it names."
)


class ModelGenerator:
    """Questions from an OpenAI-compatible model; on any error, timeout or unusable answer, the
    fallback's questions."""

    def __init__(self, fallback: QuestionGenerator, config=None):
        self.fallback = fallback
        self.config = config

    def generate(self, job: JobFacts) -> list[str]:
        try:
            answer = llm.LlmClient.from_config(self.config).chat_json(self.messages(job))
            return self.questions_from(answer)
        except llm.LlmError as error:
            log.warning("question model not used, falling back to rules: %s", error)
            return self.fallback.generate(job)

    @staticmethod
    def messages(job: JobFacts) -> list[dict]:
        facts = {
            name: value
            for name, value in job.__dict__.items()
            if value not in (None, "") and name != "description"
        }
        lines = "\n".join(f"{name}: {value}" for name, value in facts.items())
        return [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"{lines}\n\nDescription:\n{job.description}"},
        ]

    @staticmethod
    def questions_from(answer) -> list[str]:
        items = answer.get("questions") if isinstance(answer, dict) else answer
        if not isinstance(items, list):
            raise llm.LlmError("model answer has no questions list")
        questions = unique(
            [
                item.strip()
                for item in items
                if isinstance(item, str) and 8 <= len(item.strip()) <= 500
            ]
        )
        if len(questions) < MIN_QUESTIONS:
            raise llm.LlmError(
                f"model gave {len(questions)} usable questions, fewer than {MIN_QUESTIONS}"
            )
        return questions[:MAX_QUESTIONS]


def generator_for(config) -> QuestionGenerator:
    """The model-backed generator when a model is configured, else the rule-based one."""
    rules = RuleBasedGenerator()
    return ModelGenerator(rules, config) if llm.configured(config) else rules
