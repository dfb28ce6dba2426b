"""The local enrichment vendor: matches identifying inputs against the configured dataset through
the search backend.

Likelihood (1-10) is the sum of the weights of the inputs that agree with the profile, capped at 10:
  id (vendor_id / servicegraph_id) 10 · email 6 · profile URL 6 · phone number 5 ·
  full name (or first + last) 3 · current company 2 (a past company 1) · school 1 · location 1 ·
  job title 1.
A name that is given but disagrees subtracts 3. So an email alone is 6, a name with the current
company 5, a name with a past company and a location 3, and email + name + company 10.
"""

from __future__ import annotations

from app.errors import ApiError
from plugins.person.backends import SearchBackend
from plugins.person.enrich import EnrichVendor, Match, NoMatch
from plugins.person.enrich import identity

WEIGHTS = {
    "id": 10,
    "email": 6,
    "profile": 6,
    "phone_number": 5,
    "full_name": 3,
    "company_name": 2,
    "past_company": 1,
    "school": 1,
    "location": 1,
    "job_title": 1,
}
NAME_MISMATCH_PENALTY = 3
CANDIDATES = 20
BATCH_CANDIDATES = 5000
IDENTIFIER_INPUTS = frozenset({"email", "phone_number", "profile"})
EMAIL_FIELDS = ("work_email", "personal_emails", "emails.address")
PROFILE_FIELDS = ("profiles.url", "linkedin_url")
LOCATION_FIELDS = ("location_name", "location_locality", "location_region", "location_country")
IDENTIFIER_FIELDS = {
    "email": EMAIL_FIELDS,
    "profile": PROFILE_FIELDS,
    "phone_number": ("phone_numbers",),
}


class LocalVendor(EnrichVendor):
    """Exact identifiers first, then name plus context; every candidate is scored by the documented
    weights."""

    name = "local"

    def __init__(self, backend: SearchBackend):
        self.backend = backend

    def _version(self) -> str | None:
        return self.backend.dataset_info().get("dataset_version")

    def by_ids(self, ids: list[str]) -> dict[str, Match]:
        version = self._version()
        return {
            pid: Match(record, 10, ["id"], version)
            for pid, record in self.backend.get_by_ids(ids).items()
        }

    def enrich_many(self, params_list: list[dict]) -> list[Match | ApiError]:
        """Bulk: the ids in one fetch and the identifier-only requests (email, phone, profile) in
        one search for the batch; requests with a name keep the one-by-one matcher, since their
        candidates depend on the name's context."""
        answers: list[Match | ApiError | None] = [None] * len(params_list)
        by_id = {i: p["id"] for i, p in enumerate(params_list) if p.get("id")}
        identified = {i: normalized_inputs(p) for i, p in enumerate(params_list) if i not in by_id}
        identified = {
            i: inputs
            for i, inputs in identified.items()
            if inputs and "full_name" not in inputs and set(inputs) & IDENTIFIER_INPUTS
        }
        if by_id:
            found = self.by_ids(list(by_id.values()))
            for i, person_id in by_id.items():
                answers[i] = found.get(person_id) or NoMatch()
        if identified:
            candidates = self._identifier_candidates(identified.values())
            version = self._version()
            for i, inputs in identified.items():
                best = _best_match(inputs, candidates)
                if best is None:
                    answers[i] = NoMatch()
                else:
                    best.dataset_version = version
                    answers[i] = best
        rest = [i for i, answer in enumerate(answers) if answer is None]
        for i, answer in zip(rest, super().enrich_many([params_list[i] for i in rest])):
            answers[i] = answer
        return answers

    def _identifier_candidates(self, inputs_list) -> list[dict]:
        """Every profile that any request's email, phone or profile URL points at, in one search."""
        values: dict[str, set] = {"email": set(), "phone_number": set(), "profile": set()}
        for inputs in inputs_list:
            for key in values:
                values[key].update(inputs.get(key, ()))
        should = [
            {"terms": {path: sorted(values[key])}}
            for key, paths in IDENTIFIER_FIELDS.items()
            if values[key]
            for path in paths
        ]
        wanted = sum(len(v) for v in values.values())
        return self.backend.search(
            {"bool": {"should": should}}, size=min(BATCH_CANDIDATES, CANDIDATES * wanted)
        ).hits

    def enrich(self, params: dict) -> Match:
        if params.get("id"):
            found = self.by_ids([params["id"]])
            if params["id"] not in found:
                raise NoMatch()
            return found[params["id"]]
        inputs = normalized_inputs(params)
        query = candidate_query(inputs)
        if query is None:
            raise NoMatch()
        best = _best_match(inputs, self.backend.search(query, size=CANDIDATES).hits)
        if best is None:
            raise NoMatch()
        best.dataset_version = self._version()
        return best

    def identify(self, params: dict, *, limit: int) -> list[Match]:
        """The enrich matcher's candidates, every one scored, strongest first (equals in the
        search's order)."""
        if params.get("id"):
            return list(self.by_ids([params["id"]]).values())
        inputs = normalized_inputs(params)
        query = candidate_query(inputs)
        if query is None:
            return []
        version = self._version()
        found = sorted(
            _scored(inputs, self.backend.search(query, size=max(limit, CANDIDATES)).hits),
            key=lambda match: -match.likelihood,
        )[:limit]
        for match in found:
            match.dataset_version = version
        return found


def _scored(inputs: dict, candidates: list[dict]) -> list[Match]:
    """Each candidate some input agrees with, with its likelihood, in the candidates' order."""
    found = []
    for record in candidates:
        likelihood, matched = score(inputs, record)
        if likelihood > 0:
            found.append(Match(record, likelihood, matched))
    return found


def _best_match(inputs: dict, candidates: list[dict]) -> Match | None:
    """The candidate with the highest likelihood (the first of equals), or None when no input agrees
    with any."""
    best: Match | None = None
    for match in _scored(inputs, candidates):
        if best is None or match.likelihood > best.likelihood:
            best = match
    return best


def normalized_inputs(params: dict) -> dict:
    """The inputs in the dataset's form (lowercase names, E.164 phones, bare profile URLs); absent
    ones are left out."""
    inputs: dict = {}
    if params.get("email"):
        inputs["email"] = [identity.email(e) for e in _as_list(params["email"])]
    if params.get("phone_number"):
        phones = [p for p in (identity.phone(v) for v in _as_list(params["phone_number"])) if p]
        if phones:
            inputs["phone_number"] = phones
    if params.get("profile"):
        inputs["profile"] = [identity.profile_url(p) for p in _as_list(params["profile"])]
    full_name = params.get("full_name")
    if not full_name and params.get("first_name") and params.get("last_name"):
        parts = [params["first_name"], params.get("middle_name"), params["last_name"]]
        full_name = " ".join(p for p in parts if p)
        inputs["first_last"] = (
            identity.name(params["first_name"]),
            identity.name(params["last_name"]),
        )
    if full_name:
        inputs["full_name"] = identity.name(full_name)
    for key in ("company_name", "school", "location"):  # one value or a list: any of them may agree
        if params.get(key):
            inputs[key] = [identity.name(value) for value in _as_list(params[key])]
    if params.get("job_title"):
        inputs["job_title"] = identity.name(params["job_title"])
    return inputs


def candidate_query(inputs: dict) -> dict | None:
    """One DSL query whose hits include every profile an identifier or the name points at."""
    should = []
    for key, fields in (("email", EMAIL_FIELDS), ("profile", PROFILE_FIELDS)):
        for path in fields:
            if key in inputs:
                should.append({"terms": {path: inputs[key]}})
    if "phone_number" in inputs:
        should.append({"terms": {"phone_numbers": inputs["phone_number"]}})
    name_clause = None
    if "first_last" in inputs:
        first, last = inputs["first_last"]
        name_clause = {
            "bool": {
                "should": [
                    {"term": {"full_name": inputs["full_name"]}},
                    {
                        "bool": {
                            "filter": [
                                {"term": {"first_name": first}},
                                {"term": {"last_name": last}},
                            ]
                        }
                    },
                ]
            }
        }
    elif "full_name" in inputs:
        name_clause = {"term": {"full_name": inputs["full_name"]}}
    if name_clause:
        context = _context_clauses(inputs)
        should.append(
            {"bool": {"must": [name_clause], "should": context}} if context else name_clause
        )
    if not should:
        return None
    return {"bool": {"should": should}}


def _context_clauses(inputs: dict) -> list[dict]:
    clauses = []
    if "company_name" in inputs:
        clauses.append({"terms": {"job_company_name": inputs["company_name"]}})
        clauses.append({"terms": {"experience.company.name": inputs["company_name"]}})
    if "school" in inputs:
        clauses.append({"terms": {"education.school.name": inputs["school"]}})
    if "location" in inputs:
        parts = list(
            dict.fromkeys(
                part for location in inputs["location"] for part in _location_parts(location)
            )
        )
        for path in LOCATION_FIELDS:
            clauses.append({"terms": {path: parts}})
    if "job_title" in inputs:
        clauses.append({"match": {"job_title": {"query": inputs["job_title"], "operator": "or"}}})
    return clauses


def score(inputs: dict, record: dict) -> tuple[int, list[str]]:
    """(likelihood 1-10 or 0 for no agreement, names of the inputs that agreed) by the weights in
    the module docstring."""
    matched: list[str] = []
    total = 0
    if "email" in inputs and set(inputs["email"]) & _emails(record):
        matched.append("email")
    if "phone_number" in inputs and set(inputs["phone_number"]) & set(
        record.get("phone_numbers") or []
    ):
        matched.append("phone_number")
    if "profile" in inputs and set(inputs["profile"]) & _profiles(record):
        matched.append("profile")
    if "full_name" in inputs:
        if _name_agrees(inputs, record):
            matched.append("full_name")
        else:
            total -= NAME_MISMATCH_PENALTY
    if "company_name" in inputs:
        companies = set(inputs["company_name"])
        if (record.get("job_company_name") or "") in companies:
            matched.append("company_name")
        elif companies & {
            (e.get("company") or {}).get("name") for e in record.get("experience") or []
        }:
            matched.append("company_name")
            total += WEIGHTS["past_company"] - WEIGHTS["company_name"]
    if "school" in inputs and set(inputs["school"]) & {
        (e.get("school") or {}).get("name") for e in record.get("education") or []
    }:
        matched.append("school")
    if "location" in inputs and any(
        _location_agrees(location, record) for location in inputs["location"]
    ):
        matched.append("location")
    if (
        "job_title" in inputs
        and record.get("job_title")
        and identity.words(inputs["job_title"]) <= identity.words(record["job_title"])
    ):
        matched.append("job_title")
    if not matched:
        return 0, []
    total += sum(WEIGHTS[name] for name in matched)
    return max(1, min(10, total)), matched


def _name_agrees(inputs: dict, record: dict) -> bool:
    if inputs["full_name"] == record.get("full_name"):
        return True
    if "first_last" in inputs:
        return inputs["first_last"] == (record.get("first_name"), record.get("last_name"))
    return False


def _emails(record: dict) -> set[str]:
    found = {record.get("work_email")} | set(record.get("personal_emails") or [])
    found |= {e.get("address") for e in record.get("emails") or [] if isinstance(e, dict)}
    return {e for e in found if e}


def _profiles(record: dict) -> set[str]:
    found = {record.get("linkedin_url")} | {
        p.get("url") for p in record.get("profiles") or [] if isinstance(p, dict)
    }
    return {identity.profile_url(p) for p in found if p}


def _location_parts(location: str) -> list[str]:
    parts = [location] + [p.strip() for p in location.split(",") if p.strip()]
    return list(dict.fromkeys(parts))


def _location_agrees(location: str, record: dict) -> bool:
    parts = set(_location_parts(location))
    return any(record.get(path) in parts for path in LOCATION_FIELDS)


def _as_list(value) -> list:
    return value if isinstance(value, list) else [value]
