"""A candidate's time zone and where it came from: set explicitly, else the phone number's zone (phonenumbers' data),
narrowed by the candidate's state, city and country when the number spans several, else the tenant's default zone,
else the server's HIREKIT_TIMEZONE. Stored on the candidate row (timezone, timezone_source) whenever an input changes."""

from __future__ import annotations

import functools
import re
from zoneinfo import available_timezones

import phonenumbers
from flask import current_app
from phonenumbers import geocoder
from phonenumbers import timezone as phone_zones

from app.data.db import utcnow

EXPLICIT, PHONE, LOCATION, TENANT, SERVER = "explicit", "phone", "location", "tenant", "server"
SOURCES = (EXPLICIT, PHONE, LOCATION, TENANT, SERVER)
UNKNOWN_ZONE = "Etc/Unknown"  # what phonenumbers answers for a number it has no zone for

# States and provinces of the countries whose numbers span several zones, by name and postal code: the zone of most of
# their people (a state split between zones takes its larger part)
REGION_ZONES = {
    "America/New_York": "ct de dc fl ga in ky ma md me mi nc nh nj ny oh pa ri sc va vt wv connecticut delaware "
    "district-of-columbia florida georgia indiana kentucky maine maryland massachusetts michigan "
    "new-hampshire new-jersey new-york north-carolina ohio pennsylvania rhode-island "
    "south-carolina vermont virginia west-virginia on qc ontario quebec nu nunavut",
    "America/Chicago": "al ar ia il ks la mn mo ms nd ne ok sd tn tx wi alabama arkansas iowa "
    "illinois kansas louisiana minnesota missouri mississippi north-dakota nebraska oklahoma "
    "south-dakota texas wisconsin tennessee mb manitoba",
    "America/Denver": "co mt nm ut wy id colorado montana new-mexico utah wyoming idaho ab alberta nt northwest-territories",
    "America/Phoenix": "az arizona",
    "America/Los_Angeles": "ca nv or wa california nevada oregon washington bc british-columbia",
    "America/Anchorage": "ak alaska",
    "Pacific/Honolulu": "hi hawaii",
    "America/Halifax": "ns pe nb nova-scotia prince-edward-island new-brunswick",
    "America/St_Johns": "nl newfoundland newfoundland-and-labrador",
    "America/Regina": "sk saskatchewan",
    "America/Whitehorse": "yt yukon",
    "Australia/Sydney": "nsw act new-south-wales australian-capital-territory",
    "Australia/Melbourne": "vic victoria",
    "Australia/Brisbane": "qld queensland",
    "Australia/Adelaide": "sa south-australia",
    "Australia/Perth": "wa western-australia",
    "Australia/Hobart": "tas tasmania",
    "Australia/Darwin": "nt northern-territory",
}


def _words(text: str | None) -> str:
    return re.sub(r"[^a-z0-9]+", "-", (text or "").strip().lower()).strip("-")


@functools.lru_cache(maxsize=1)
def _regions_by_zone() -> dict[str, frozenset[str]]:
    return {zone: frozenset(names.split()) for zone, names in REGION_ZONES.items()}


@functools.lru_cache(maxsize=1)
def _zones_by_city() -> dict[str, str]:
    """'new-york' -> America/New_York: the city part of every IANA zone name."""
    zones = {}
    for name in sorted(available_timezones()):
        if "/" in name and not name.startswith(("Etc/", "SystemV/", "US/")):
            zones.setdefault(_words(name.rsplit("/", 1)[1].replace("_", " ")), name)
    return zones


@functools.lru_cache(maxsize=1)
def _regions_by_country_name() -> dict[str, str]:
    """'france' -> 'FR' (and 'fr' -> 'FR'), from phonenumbers' region data."""
    regions = {}
    for region in phonenumbers.SUPPORTED_REGIONS:
        regions[region.lower()] = region
        example = phonenumbers.example_number(region)
        if example is not None:
            name = geocoder.country_name_for_number(example, "en")
            if name:
                regions.setdefault(_words(name), region)
    regions.update(
        {"usa": "US", "united-states-of-america": "US", "uk": "GB", "great-britain": "GB"}
    )
    return regions


def phone_number_zones(phone_no: str | None) -> tuple[str, ...]:
    """The zones phonenumbers places the number in (none when it does not know)."""
    if not phone_no:
        return ()
    try:
        number = phonenumbers.parse(phone_no, None)
    except phonenumbers.NumberParseException:
        return ()
    return tuple(zone for zone in phone_zones.time_zones_for_number(number) if zone != UNKNOWN_ZONE)


def country_zones(country: str | None) -> tuple[str, ...]:
    region = _regions_by_country_name().get(_words(country))
    example = phonenumbers.example_number(region) if region else None
    if example is None:
        return ()
    return tuple(
        zone for zone in phone_zones.time_zones_for_number(example) if zone != UNKNOWN_ZONE
    )


def location_zones(state_name: str | None, city: str | None, country: str | None) -> list[str]:
    """Zones the candidate's location points at, most precise first: the city's, the state's, the country's."""
    found = []
    city_zone = _zones_by_city().get(_words(city))
    if city_zone:
        found.append(city_zone)
    state = _words(state_name)
    if state:
        found.extend(zone for zone, names in _regions_by_zone().items() if state in names)
    found.extend(country_zones(country))
    return found


def inferred_zone(candidate, default_zone) -> tuple[str, str]:
    """(zone, source) for a candidate without an explicit zone; `default_zone()` answers the tenant's default zone,
    asked only when the number and location leave the zone open."""
    from_phone = phone_number_zones(candidate.phone_no)
    from_location = location_zones(candidate.state_name, candidate.city, candidate.country)
    if len(from_phone) == 1:
        return from_phone[0], PHONE
    if from_phone:
        areas = {zone.split("/", 1)[0] for zone in from_phone}
        narrowed = [
            zone for zone in from_location if zone in from_phone or zone.split("/", 1)[0] in areas
        ]
        if narrowed:
            return narrowed[0], LOCATION
    elif from_location:
        return from_location[0], LOCATION
    tenants = default_zone()
    if tenants:
        return tenants, TENANT
    return current_app.config["TIMEZONE"], SERVER


def tenant_zone(tenant_id: str) -> str | None:
    from plugins.candidates.contact_policy import ContactPolicy

    row = ContactPolicy.get_or_none(ContactPolicy.tenant == tenant_id)
    return row.timezone if row else None


def zone_of(candidate) -> tuple[str, str]:
    """(zone, source) as they stand now: an explicit zone, else inferred (the tenant's and server's as of now)."""
    if candidate.timezone_source == EXPLICIT and candidate.timezone:
        return candidate.timezone, EXPLICIT
    return inferred_zone(candidate, lambda: tenant_zone(candidate.tenant_id))


def zone_columns(candidate) -> dict:
    """The timezone columns the candidate's row should hold now."""
    zone, source = zone_of(candidate)
    return {"timezone": zone, "timezone_source": source}


def refresh_zone(candidate) -> None:
    """Recompute the stored zone after a change of phone number or location (no write when it is unchanged)."""
    columns = zone_columns(candidate)
    if (
        columns["timezone"] != candidate.timezone
        or columns["timezone_source"] != candidate.timezone_source
    ):
        type(candidate).update(updated_at=utcnow(), **columns).where(
            type(candidate).id == candidate.id
        ).execute()
        for name, value in columns.items():
            setattr(candidate, name, value)


def refresh_default_zones(tenant_id: str) -> int:
    """The tenant's default zone changed: its candidates whose zone was the tenant's or the server's follow it."""
    from plugins.candidates.models import Candidate

    query = Candidate.select().where(
        (Candidate.tenant == tenant_id)
        & (Candidate.timezone_source.in_((TENANT, SERVER)) | Candidate.timezone_source.is_null())
    )
    count = 0
    for candidate in query:
        before = (candidate.timezone, candidate.timezone_source)
        refresh_zone(candidate)
        count += before != (candidate.timezone, candidate.timezone_source)
    return count


def set_explicit_zone(candidate, zone: str | None) -> None:
    """Set the candidate's own zone (None: back to the inferred one)."""
    if zone:
        columns = {"timezone": zone, "timezone_source": EXPLICIT}
    else:
        candidate.timezone_source = None
        columns = zone_columns(candidate)
    type(candidate).update(updated_at=utcnow(), **columns).where(
        type(candidate).id == candidate.id
    ).execute()
    for name, value in columns.items():
        setattr(candidate, name, value)
