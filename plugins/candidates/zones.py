"""A candidate's time zone and where it came from: set explicitly, else the phone number's zone
(phonenumbers' data), narrowed by the candidate's state, city and country when the number spans
several, else the tenant's default zone, else the server's HIREKIT_TIMEZONE. Stored on the
candidate row (timezone, timezone_source) whenever an input changes.

A city is found among the places phonenumbers' geocoding data names for the number's calling code
(each with its prefix's zone) and the cities IANA zones are named after; a country keeps the zones
the tz database's zone table places in it, and alone picks the zone most of that country's
numbered places are in (phonenumbers' geocoding data)."""

from __future__ import annotations

import functools
import importlib.resources
import re
from collections import Counter
from pathlib import Path
from zoneinfo import TZPATH, available_timezones

import phonenumbers
from flask import current_app
from phonenumbers import geocoder
from phonenumbers import timezone as phone_zones
from phonenumbers.geodata import GEOCODE_DATA
from phonenumbers.tzdata import TIMEZONE_DATA, TIMEZONE_LONGEST_PREFIX

from app.data.db import utcnow

EXPLICIT, PHONE, LOCATION, TENANT, SERVER = "explicit", "phone", "location", "tenant", "server"
SOURCES = (EXPLICIT, PHONE, LOCATION, TENANT, SERVER)
UNKNOWN_ZONE = "Etc/Unknown"  # what phonenumbers answers for a number it has no zone for

# States and provinces of the countries whose numbers span several zones, by name and postal
# code: the zone of most of their people (a state split between zones takes its larger part), in
# the state's own country
REGION_ZONES = {
    "America/New_York": "ct de dc fl ga in ky ma md me mi nc nh nj ny oh pa ri sc va vt wv "
    "connecticut delaware "
    "district-of-columbia florida georgia indiana kentucky maine maryland massachusetts michigan "
    "new-hampshire new-jersey new-york north-carolina ohio pennsylvania rhode-island "
    "south-carolina vermont virginia west-virginia",
    "America/Toronto": "on qc ontario quebec nu nunavut",
    "America/Chicago": "al ar ia il ks la mn mo ms nd ne ok sd tn tx wi alabama arkansas iowa "
    "illinois kansas louisiana minnesota missouri mississippi north-dakota nebraska oklahoma "
    "south-dakota texas wisconsin tennessee",
    "America/Winnipeg": "mb manitoba",
    "America/Denver": "co mt nm ut wy id colorado montana new-mexico utah wyoming idaho",
    "America/Edmonton": "ab alberta nt northwest-territories",
    "America/Phoenix": "az arizona",
    "America/Los_Angeles": "ca nv or wa california nevada oregon washington",
    "America/Vancouver": "bc british-columbia",
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


def calling_code(phone_no: str | None) -> int | None:
    """The number's country calling code (1 for +1 ...), or None."""
    try:
        return phonenumbers.parse(phone_no, None).country_code if phone_no else None
    except phonenumbers.NumberParseException:
        return None


def zone_table_lines() -> list[str]:
    """The tz database's zone.tab (country code, coordinates, zone), from the first of the system's
    zoneinfo directories holding it, else from the tzdata package; none when neither does."""
    for directory in TZPATH:
        table = Path(directory) / "zone.tab"
        if table.is_file():
            return table.read_text(encoding="utf-8").splitlines()
    try:
        table = importlib.resources.files("tzdata").joinpath("zoneinfo", "zone.tab")
        return table.read_text(encoding="utf-8").splitlines()
    except (ModuleNotFoundError, FileNotFoundError):
        return []


@functools.lru_cache(maxsize=1)
def _zone_countries() -> dict[str, str]:
    """'America/Vancouver' -> 'CA': the country each zone is in."""
    countries = {}
    for line in zone_table_lines():
        fields = line.split("\t")
        if not line.startswith("#") and len(fields) >= 3:
            countries[fields[2]] = fields[0]
    return countries


def zone_country(zone: str) -> str | None:
    return _zone_countries().get(zone)


def prefix_zones(prefix: str) -> tuple[str, ...]:
    """The zones phonenumbers' zone data gives the longest known start of `prefix` (digits)."""
    for length in range(min(len(prefix), TIMEZONE_LONGEST_PREFIX), 0, -1):
        zones = TIMEZONE_DATA.get(prefix[:length])
        if zones:
            return tuple(zone for zone in zones if zone != UNKNOWN_ZONE)
    return ()


@functools.lru_cache(maxsize=64)
def _numbering(code: int) -> tuple[dict[str, tuple[str, ...]], Counter]:
    """What phonenumbers' geocoding data says of the calling code's numbers: the places it names
    ("Calgary, AB": 'calgary'), each with its prefixes' zones, the zone of most first; and how many
    numbered places each zone holds."""
    by_place: dict[str, Counter] = {}
    by_zone: Counter = Counter()
    digits = str(code)
    for prefix, names in GEOCODE_DATA.items():
        if not prefix.startswith(digits):
            continue
        zones = prefix_zones(prefix)
        if len(zones) != 1:
            continue
        by_zone[zones[0]] += 1
        place = _words(((names or {}).get("en") or "").split(",", 1)[0])
        if place:
            by_place.setdefault(place, Counter())[zones[0]] += 1
    places = {
        place: tuple(zone for zone, _ in found.most_common()) for place, found in by_place.items()
    }
    return places, by_zone


def city_zones(city: str | None, code: int | None) -> list[str]:
    """Zones a city points at: the IANA zone named after it, then those of the places of that name
    in the calling code's numbers."""
    name = _words(city)
    if not name:
        return []
    found = [_zones_by_city()[name]] if name in _zones_by_city() else []
    if code is not None:
        found += [zone for zone in _numbering(code)[0].get(name, ()) if zone not in found]
    return found


@functools.lru_cache(maxsize=256)
def country_zones(region: str | None) -> tuple[str, ...]:
    """The zones of a country (`region`, e.g. 'CA'), the one most of its numbered places are in
    first (phonenumbers' geocoding data); without the tz database's table, its example number's
    zones."""
    if not region:
        return ()
    inside = [zone for zone, country in _zone_countries().items() if country == region]
    if not inside:
        example = phonenumbers.example_number(region)
        zones = phone_zones.time_zones_for_number(example) if example is not None else ()
        return tuple(zone for zone in zones if zone != UNKNOWN_ZONE)
    places = _numbering(phonenumbers.country_code_for_region(region))[1]
    return tuple(sorted(inside, key=lambda zone: (-places[zone], zone)))


def location_zones(
    state_name: str | None, city: str | None, country: str | None, code: int | None = None
) -> list[str]:
    """Zones the candidate's location points at, most precise first: the city's, the state's, the
    country's; only zones in the country, when it names one the zone table knows. `code`: the
    calling code of the candidate's number (else the country's), whose places the city is sought
    among."""
    region = _regions_by_country_name().get(_words(country))
    if code is None and region:
        code = phonenumbers.country_code_for_region(region) or None
    found = city_zones(city, code)
    state = _words(state_name)
    if state:
        found.extend(zone for zone, names in _regions_by_zone().items() if state in names)
    found.extend(country_zones(region))
    if region and _zone_countries():
        found = [zone for zone in found if zone_country(zone) == region]
    return list(dict.fromkeys(found))


def inferred_zone(candidate, default_zone) -> tuple[str, str]:
    """(zone, source) for a candidate without an explicit zone; `default_zone()` answers the
    tenant's default zone, asked only when the number and location leave the zone open."""
    from_phone = phone_number_zones(candidate.phone_no)
    if len(from_phone) == 1:
        return from_phone[0], PHONE
    from_location = location_zones(
        candidate.state_name, candidate.city, candidate.country, calling_code(candidate.phone_no)
    )
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
    """(zone, source) as they stand now: an explicit zone, else inferred (the tenant's and server's
    as of now)."""
    if candidate.timezone_source == EXPLICIT and candidate.timezone:
        return candidate.timezone, EXPLICIT
    return inferred_zone(candidate, lambda: tenant_zone(candidate.tenant_id))


def zone_columns(candidate) -> dict:
    """The timezone columns the candidate's row should hold now."""
    zone, source = zone_of(candidate)
    return {"timezone": zone, "timezone_source": source}


def refresh_zone(candidate) -> None:
    """Recompute the stored zone after a change of phone number or location (no write when it is
    unchanged)."""
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
    """The tenant's default zone changed: its candidates whose zone was the tenant's or the server's
    follow it."""
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
