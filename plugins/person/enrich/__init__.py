"""Enrichment vendors: the interface the enrich routes speak, what a match is, and the 503 when no
vendor is configured."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from app.errors import ApiError


class VendorUnavailable(ApiError):
    """503 with Retry-After: enrichment is switched off or its upstream is not configured (as
    docs/integrating.md, Conventions, says of every dependency)."""

    def __init__(self, reason: str):
        super().__init__(
            503,
            f"The enrichment vendor is not available: {reason} Set HIREKIT_ENRICH_VENDOR=local "
            "(matches the loaded dataset) or http with HIREKIT_ENRICH_URL.",
            headers={"Retry-After": "30"},
        )


class NoMatch(ApiError):
    def __init__(self, message: str = "No records were found matching your request."):
        super().__init__(404, message)


@dataclass
class Match:
    """A profile the vendor believes is the person, how sure it is (1-10), and which inputs
    agreed."""

    record: dict
    likelihood: int
    matched: list[str] = field(default_factory=list)
    dataset_version: str | None = None


class EnrichVendor(ABC):
    """Finds one person from identifying inputs (normalized names: full_name, email, phone_number,
    company_name, id, ...)."""

    name: str

    @abstractmethod
    def enrich(self, params: dict) -> Match:
        """The best match, or NoMatch (404); upstream failures are ApiErrors (429, 502)."""

    def enrich_many(self, params_list: list[dict]) -> list[Match | ApiError]:
        """One answer per request, in order; a failure is returned in its slot, not raised."""
        answers: list[Match | ApiError] = []
        for params in params_list:
            try:
                answers.append(self.enrich(params))
            except ApiError as error:
                answers.append(error)
        return answers

    @abstractmethod
    def identify(self, params: dict, *, limit: int) -> list[Match]:
        """Up to `limit` candidates the inputs may describe, strongest first (PDL's identify); []
        when none."""

    @abstractmethod
    def by_ids(self, ids: list[str]) -> dict[str, Match]:
        """Enrichment for known person ids (search-enrich overlays each hit with it)."""
