"""A deterministic generator of realistic synthetic person profiles (PDL-shaped), for the sample
dataset, the sandbox and benchmarks."""

from __future__ import annotations

import hashlib
import random
from typing import Iterator

FIRST_NAMES = (
    "james mary robert patricia john jennifer michael linda david elizabeth william barbara "
    "richard susan joseph "
    "jessica thomas sarah charles karen christopher lisa daniel nancy matthew betty anthony "
    "margaret mark sandra "
    "donald ashley steven kimberly paul emily andrew donna joshua michelle kenneth carol kevin "
    "amanda brian "
    "melissa george deborah timothy stephanie ronald rebecca jason sharon edward laura jeffrey "
    "cynthia ryan "
    "kathleen jacob amy gary angela nicholas shirley eric anna jonathan brenda stephen pamela "
    "larry emma justin "
    "nicole scott helen brandon samantha benjamin katherine samuel christine gregory debra "
    "alexander rachel "
    "priya wei yuki carlos sofia mateo lucia ahmed fatima olga ivan chen mei hiroshi aiko raj "
    "ananya lars "
    "ingrid pierre camille giulia luca noah mia liam ava ethan zoe"
).split()
LAST_NAMES = (
    "smith johnson williams brown jones garcia miller davis rodriguez martinez hernandez lopez "
    "gonzalez wilson "
    "anderson thomas taylor moore jackson martin lee perez thompson white harris sanchez clark "
    "ramirez lewis "
    "robinson walker young allen king wright scott torres nguyen hill flores green adams nelson "
    "baker hall "
    "rivera campbell mitchell carter roberts gomez phillips evans turner diaz parker cruz edwards "
    "collins "
    "reyes stewart morris morales murphy cook rogers gutierrez ortiz morgan cooper peterson bailey "
    "reed kelly "
    "howard ramos kim cox ward richardson watson brooks chavez wood james bennett gray mendoza "
    "ruiz hughes "
    "price alvarez castillo sanders patel myers long ross foster jimenez singh wang li zhang "
    "tanaka sato "
    "mueller schmidt rossi dubois novak kowalski silva costa okafor mensah cohen larsen"
).split()
_LOCATION_TABLE = """
locality      | region           | country        | weight | phone prefix
san francisco | california       | united states  | 6      | +1415
new york      | new york         | united states  | 8      | +1212
austin        | texas            | united states  | 4      | +1512
seattle       | washington       | united states  | 4      | +1206
chicago       | illinois         | united states  | 4      | +1312
boston        | massachusetts    | united states  | 4      | +1617
los angeles   | california       | united states  | 5      | +1213
denver        | colorado         | united states  | 2      | +1303
atlanta       | georgia          | united states  | 2      | +1404
miami         | florida          | united states  | 2      | +1305
toronto       | ontario          | canada         | 3      | +1416
vancouver     | british columbia | canada         | 2      | +1604
london        | england          | united kingdom | 5      | +4420
manchester    | england          | united kingdom | 2      | +44161
berlin        | berlin           | germany        | 3      | +4930
munich        | bavaria          | germany        | 2      | +4989
paris         | ile-de-france    | france         | 3      | +331
amsterdam     | north holland    | netherlands    | 2      | +3120
bangalore     | karnataka        | india          | 4      | +9180
mumbai        | maharashtra      | india          | 3      | +9122
tokyo         | tokyo            | japan          | 2      | +813
sydney        | new south wales  | australia      | 2      | +612
sao paulo     | sao paulo        | brazil         | 2      | +5511
mexico city   | mexico city      | mexico         | 2      | +5255
singapore     | singapore        | singapore      | 2      | +656
dublin        | dublin           | ireland        | 1      | +3531
"""
LOCATIONS = tuple(
    (locality, region, country, int(weight), prefix)
    for locality, region, country, weight, prefix in (
        map(str.strip, row.split("|")) for row in _LOCATION_TABLE.strip().splitlines()[1:]
    )
)
ROLES = {  # role: (sub roles, title nouns, skills)
    "engineering": (
        ("software", "devops", "data", "qa", "security"),
        (
            "software engineer",
            "backend engineer",
            "frontend developer",
            "devops engineer",
            "data engineer",
            "site reliability engineer",
            "software engineer in test",
            "security engineer",
            "engineering manager",
            "principal engineer",
            "staff engineer",
            "mobile developer",
        ),
        (
            "python",
            "java",
            "go",
            "javascript",
            "typescript",
            "kubernetes",
            "aws",
            "docker",
            "sql",
            "react",
            "rust",
            "c++",
            "terraform",
            "linux",
            "postgresql",
            "kafka",
            "spark",
            "node.js",
            "graphql",
            "ci/cd",
        ),
    ),
    "sales": (
        ("account_executive", "business_development", "customer_success"),
        (
            "account executive",
            "sales manager",
            "business development representative",
            "vice president of sales",
            "sales director",
            "customer success manager",
        ),
        (
            "negotiation",
            "salesforce",
            "lead generation",
            "crm",
            "cold calling",
            "account management",
            "b2b",
        ),
    ),
    "marketing": (
        ("content", "growth", "product_marketing"),
        (
            "marketing manager",
            "content strategist",
            "growth marketer",
            "product marketing manager",
            "seo specialist",
        ),
        (
            "seo",
            "content marketing",
            "google analytics",
            "copywriting",
            "social media",
            "hubspot",
            "branding",
        ),
    ),
    "research": (
        ("data_science", "academic"),
        ("data scientist", "research scientist", "machine learning engineer", "research analyst"),
        (
            "python",
            "machine learning",
            "statistics",
            "sql",
            "pytorch",
            "tensorflow",
            "r",
            "deep learning",
        ),
    ),
    "product": (
        ("product_management", "design"),
        (
            "product manager",
            "senior product manager",
            "product designer",
            "ux designer",
            "product owner",
        ),
        ("roadmapping", "user research", "figma", "agile", "sql", "a/b testing", "jira"),
    ),
    "finance": (
        ("accounting", "investment"),
        (
            "financial analyst",
            "accountant",
            "controller",
            "chief financial officer",
            "investment analyst",
        ),
        ("excel", "financial modeling", "accounting", "budgeting", "sap", "forecasting"),
    ),
    "human_resources": (
        ("recruiting", "people_ops"),
        (
            "recruiter",
            "technical recruiter",
            "talent acquisition partner",
            "hr business partner",
            "people manager",
        ),
        ("recruiting", "sourcing", "interviewing", "onboarding", "employee relations", "workday"),
    ),
    "health": (
        ("nursing", "medical"),
        ("registered nurse", "nurse practitioner", "physician", "medical assistant", "pharmacist"),
        ("patient care", "bls", "acls", "emr", "icu", "clinical research"),
    ),
}
ROLE_WEIGHTS = {
    "engineering": 30,
    "sales": 14,
    "marketing": 10,
    "research": 8,
    "product": 8,
    "finance": 10,
    "human_resources": 8,
    "health": 12,
}
LEVEL_PREFIXES = (
    ("", (), 40),
    ("senior ", ("senior",), 25),
    ("lead ", ("senior",), 8),
    ("junior ", ("entry",), 10),
    ("head of ", ("director",), 3),
    ("director of ", ("director",), 4),
)
INDUSTRIES = (
    "computer software",
    "internet",
    "financial services",
    "hospital & health care",
    "marketing and advertising",
    "information technology and services",
    "retail",
    "higher education",
    "management consulting",
    "telecommunications",
    "staffing and recruiting",
    "biotechnology",
    "automotive",
    "real estate",
    "insurance",
)
COMPANY_PARTS = (
    (
        "acme",
        "globex",
        "initech",
        "hooli",
        "umbrella",
        "stark",
        "wayne",
        "wonka",
        "cyberdyne",
        "tyrell",
        "soylent",
        "vandelay",
        "massive",
        "blue",
        "red",
        "north",
        "bright",
        "quantum",
        "summit",
        "pioneer",
        "apex",
        "nova",
        "vertex",
        "cobalt",
        "silver",
        "granite",
        "harbor",
        "maple",
        "orbit",
        "zenith",
    ),
    (
        "",
        " labs",
        " systems",
        " health",
        " analytics",
        " dynamics",
        " partners",
        " solutions",
        " technologies",
        " group",
        " capital",
        " networks",
        " software",
        " bank",
        " media",
    ),
)
SIZES = ("1-10", "11-50", "51-200", "201-500", "501-1000", "1001-5000", "5001-10000", "10001+")
SCHOOLS = (
    "stanford university",
    "massachusetts institute of technology",
    "university of california, berkeley",
    "university of texas at austin",
    "new york university",
    "university of washington",
    "university of toronto",
    "university of oxford",
    "imperial college london",
    "technical university of munich",
    "indian institute of technology",
    "university of tokyo",
    "university of sao paulo",
    "arizona state university",
    "ohio state university",
    "georgia institute of technology",
    "boston university",
    "university of michigan",
    "mcgill university",
)
DEGREES = (
    "bachelor of science",
    "bachelor of arts",
    "master of science",
    "master of business administration",
    "doctorates",
)
MAJORS = (
    "computer science",
    "economics",
    "business",
    "mathematics",
    "psychology",
    "nursing",
    "marketing",
    "statistics",
    "mechanical engineering",
    "finance",
    "biology",
    "design",
)
EMAIL_DOMAINS = ("gmail.com", "yahoo.com", "outlook.com", "hotmail.com", "icloud.com", "proton.me")
SUMMARIES = (
    "{title} with {years} years of experience in {skill} and {skill2}.",
    "builds {skill} systems at {company}; previously {past}.",
    "passionate {title} focused on {skill}, {skill2} and mentoring.",
)


def _companies() -> list[tuple[str, str, str, str]]:
    rng = random.Random(20240601)
    companies = []
    for first in COMPANY_PARTS[0]:
        for second in COMPANY_PARTS[1]:
            name = f"{first}{second}"
            domain = name.replace(" ", "") + ".com"
            companies.append((name, domain, rng.choice(INDUSTRIES), rng.choice(SIZES)))
    return companies


COMPANIES = _companies()
_LOCATION_WEIGHTS = [loc[3] for loc in LOCATIONS]
_ROLE_NAMES = list(ROLE_WEIGHTS)
_ROLE_WEIGHTS = [ROLE_WEIGHTS[r] for r in _ROLE_NAMES]
_LEVEL_WEIGHTS = [lvl[2] for lvl in LEVEL_PREFIXES]
# each chunk has its own seeded generator, so output does not depend on how it was parallelized
CHUNK = 10_000


def person_id(seed: int, index: int) -> str:
    return hashlib.blake2b(f"{seed}:{index}".encode(), digest_size=10).hexdigest()


def generate(
    count: int, seed: int = 1, *, start: int = 0, dataset_version: str | None = None
) -> Iterator[dict]:
    """Profiles start .. start+count-1 of the dataset named by `seed`: the same seed always gives
    the same people."""
    version = dataset_version or f"sample-{seed}"
    index = start
    end = start + count
    while index < end:
        chunk = index // CHUNK
        rng = random.Random(seed * 1_000_003 + chunk)
        # realign inside a chunk when `start` is not on a boundary
        for _ in range(index - chunk * CHUNK):
            _profile(rng, seed, 0, version)
        stop = min(end, (chunk + 1) * CHUNK)
        while index < stop:
            yield _profile(rng, seed, index, version)
            index += 1


def _profile(rng: random.Random, seed: int, index: int, version: str) -> dict:
    first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
    middle = rng.choice(FIRST_NAMES) if rng.random() < 0.1 else None
    locality, region, country, _, prefix = rng.choices(LOCATIONS, _LOCATION_WEIGHTS)[0]
    role = rng.choices(_ROLE_NAMES, _ROLE_WEIGHTS)[0]
    sub_roles, titles, skill_pool = ROLES[role]
    level_prefix, levels, _ = rng.choices(LEVEL_PREFIXES, _LEVEL_WEIGHTS)[0]
    base_title = rng.choice(titles)
    title = (
        base_title
        if base_title.startswith(("vice", "chief", "head", "principal", "staff", "senior"))
        else level_prefix + base_title
    )
    if "manager" in title and "manager" not in levels:
        levels = levels + ("manager",)
    if title.startswith(("vice", "chief")):
        levels = ("vp",) if title.startswith("vice") else ("cxo",)
    skills = rng.sample(skill_pool, min(len(skill_pool), rng.randint(3, 8)))
    experience, years = _experience(rng, role, sub_roles, title, levels)
    current = experience[0]["company"]
    handle = f"{first}-{last}-{rng.randint(10, 99999)}"
    linkedin = f"linkedin.com/in/{handle}" if rng.random() < 0.75 else None
    profiles = []
    if linkedin:
        profiles.append(
            {
                "network": "linkedin",
                "id": str(rng.randint(10**7, 10**9)),
                "url": linkedin,
                "username": handle,
            }
        )
    if role == "engineering" and rng.random() < 0.4:
        profiles.append(
            {"network": "github", "id": None, "url": f"github.com/{handle}", "username": handle}
        )
    if rng.random() < 0.15:
        profiles.append(
            {
                "network": "twitter",
                "id": None,
                "url": f"twitter.com/{first}{last}{rng.randint(1, 999)}",
                "username": f"{first}{last}",
            }
        )
    work_email = f"{first}.{last}@{current['website']}" if rng.random() < 0.6 else None
    personal = [
        f"{first}{rng.choice(('.', '_', ''))}{last}{rng.randint(1, 9999)}@"
        f"{rng.choice(EMAIL_DOMAINS)}"
        for _ in range(rng.choice((0, 1, 1, 2)))
    ]
    emails = ([{"address": work_email, "type": "professional"}] if work_email else []) + [
        {"address": e, "type": "personal"} for e in personal
    ]
    phones = [
        f"{prefix}{rng.randint(10 ** (11 - len(prefix)), 10 ** (12 - len(prefix)) - 1)}"
        for _ in range(rng.choice((0, 1, 1, 2)))
    ]
    record = {
        "id": person_id(seed, index),
        "full_name": " ".join(p for p in (first, middle, last) if p),
        "first_name": first,
        "middle_name": middle,
        "last_name": last,
        "sex": rng.choice(("male", "female")),
        "birth_year": rng.randint(1955, 2002) if rng.random() < 0.7 else None,
        "linkedin_url": linkedin,
        "linkedin_id": profiles[0]["id"] if linkedin else None,
        "work_email": work_email,
        "personal_emails": personal,
        "emails": emails,
        "phone_numbers": phones,
        "industry": current["industry"] if rng.random() < 0.92 else None,
        "job_title": title if rng.random() < 0.9 else None,
        "job_title_role": role,
        "job_title_sub_role": rng.choice(sub_roles),
        "job_title_levels": list(levels),
        "job_company_name": current["name"],
        "job_company_industry": current["industry"],
        "job_company_size": current["size"],
        "job_start_date": experience[0]["start_date"],
        "location_name": f"{locality}, {region}, {country}",
        "location_locality": locality,
        "location_region": region,
        "location_country": country,
        "skills": skills,
        "inferred_years_experience": years if rng.random() < 0.95 else None,
        "summary": _summary(rng, title, years, skills, current["name"], experience)
        if rng.random() < 0.4
        else None,
        "experience": experience,
        "education": _education(rng),
        "profiles": profiles,
        "dataset_version": version,
    }
    return record


def _experience(
    rng: random.Random, role: str, sub_roles, title: str, levels
) -> tuple[list[dict], int]:
    jobs = rng.randint(1, 6)
    year, month = 2025, rng.randint(1, 12)
    entries = []
    for position in range(jobs):
        name, website, industry, size = rng.choice(COMPANIES)
        length = rng.randint(6, 60)
        start_total = year * 12 + month - 1 - length
        start = f"{start_total // 12}-{start_total % 12 + 1:02d}"
        end = None if position == 0 else f"{year}-{month:02d}"
        job_title = title if position == 0 else rng.choice(ROLES[role][1])
        entries.append(
            {
                "company": {
                    "id": hashlib.blake2b(name.encode(), digest_size=6).hexdigest(),
                    "name": name,
                    "website": website,
                    "size": size,
                    "industry": industry,
                },
                "title": {
                    "name": job_title,
                    "role": role,
                    "sub_role": rng.choice(sub_roles),
                    "levels": list(levels) if position == 0 else [],
                },
                "start_date": start,
                "end_date": end,
                "is_primary": position == 0,
            }
        )
        gap = rng.randint(0, 4)
        total = start_total - gap
        year, month = total // 12, total % 12 + 1
    years = max(0, 2025 - int(entries[-1]["start_date"][:4]))
    return entries, years


def _education(rng: random.Random) -> list[dict]:
    schools = []
    end_year = rng.randint(1980, 2022)
    for _ in range(rng.choice((0, 1, 1, 1, 2, 2, 3))):
        school = rng.choice(SCHOOLS)
        schools.append(
            {
                "school": {
                    "id": hashlib.blake2b(school.encode(), digest_size=6).hexdigest(),
                    "name": school,
                    "type": "post-secondary institution",
                },
                "degrees": [rng.choice(DEGREES)],
                "majors": [rng.choice(MAJORS)],
                "minors": [],
                "gpa": round(rng.uniform(2.5, 4.0), 2) if rng.random() < 0.3 else None,
                "start_date": str(end_year - 4),
                "end_date": str(end_year),
            }
        )
        end_year -= rng.randint(2, 6)
    return schools


def _summary(rng, title, years, skills, company, experience) -> str:
    template = rng.choice(SUMMARIES)
    past = experience[1]["company"]["name"] if len(experience) > 1 else company
    return template.format(
        title=title, years=years, skill=skills[0], skill2=skills[-1], company=company, past=past
    )
