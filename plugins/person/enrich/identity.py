"""Identifier normalization shared by the matcher and the sample generator: emails, E.164 phones,
profile URLs, names."""

from __future__ import annotations

import re

import phonenumbers

_SPACES = re.compile(r"\s+")
_URL_PREFIX = re.compile(r"^(?:https?://)?(?:www\.|[a-z]{2}\.)?", re.IGNORECASE)


def email(value: str) -> str:
    return value.strip().lower()


def phone(value: str, default_region: str = "US") -> str | None:
    """E.164 (+14155550123) from any common format, or None when it is not a phone number."""
    try:
        parsed = phonenumbers.parse(
            value, None if value.strip().startswith("+") else default_region
        )
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_possible_number(parsed):
        return None
    return phonenumbers.format_number(parsed, phonenumbers.PhoneNumberFormat.E164)


def profile_url(value: str) -> str:
    """linkedin.com/in/jane-doe: scheme, www. or a country subdomain, query string and trailing
    slash dropped; lowercase."""
    text = _URL_PREFIX.sub("", value.strip().lower())
    text = text.split("?", 1)[0].split("#", 1)[0]
    return text.rstrip("/")


def name(value: str) -> str:
    """Lowercase, single-spaced: how the dataset stores names."""
    return _SPACES.sub(" ", value.strip().lower())


def words(value: str) -> set[str]:
    return set(re.findall(r"[^\W_]+", value.lower()))
