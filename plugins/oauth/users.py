"""Tenant users: the people who sign in to authorize agent hosts. Passwords are hashed with Argon2id
(argon2-cffi); a hash made with weaker parameters than today's is upgraded at the next successful
sign-in."""

from __future__ import annotations

import re

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from app.data.db import database, utcnow
from app.data.tenancy import Tenant, TenantError
from plugins.oauth.models import OAuthUser

MIN_PASSWORD_LENGTH = 12
MAX_PASSWORD_LENGTH = 256
EMAIL_PATTERN = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")

hasher = PasswordHasher()  # Argon2id with argon2-cffi's recommended memory and time costs
# Verified when the email is unknown, so a wrong email costs the same time as a wrong password.
UNKNOWN_USER_HASH = hasher.hash("hirekit-no-such-user-placeholder")


class UserError(ValueError):
    """A refused user change (taken email, weak password, unknown tenant), reported as a message."""


def check_password(password: str) -> None:
    if (
        not isinstance(password, str)
        or not MIN_PASSWORD_LENGTH <= len(password) <= MAX_PASSWORD_LENGTH
    ):
        raise UserError(
            f"a password must be {MIN_PASSWORD_LENGTH} to {MAX_PASSWORD_LENGTH} characters long"
        )


def normal_email(email: str) -> str:
    email = (email or "").strip().lower()
    if not EMAIL_PATTERN.match(email) or len(email) > 320:
        raise UserError(f"{email!r} is not an email address")
    return email


def create_user(
    tenant_id: str, email: str, name: str, password: str, *, admin: bool = False
) -> OAuthUser:
    email = normal_email(email)
    check_password(password)
    if Tenant.get_or_none(Tenant.id == tenant_id) is None:
        raise UserError(f"no tenant {tenant_id!r}")
    with database.atomic():
        if OAuthUser.get_or_none(OAuthUser.email == email) is not None:
            raise UserError(f"a user with email {email} already exists")
        return OAuthUser.create(
            tenant=tenant_id,
            email=email,
            name=(name or email).strip()[:200],
            password_hash=hasher.hash(password),
            admin=admin,
        )


def set_password(user: OAuthUser, password: str) -> None:
    check_password(password)
    user.password_hash = hasher.hash(password)
    user.updated_at = utcnow()
    user.save()


def authenticate(email: str, password: str) -> OAuthUser | None:
    """The enabled user with this email and password, else None (in about the same time either
    way)."""
    user = OAuthUser.get_or_none(OAuthUser.email == (email or "").strip().lower())
    try:
        hasher.verify(user.password_hash if user is not None else UNKNOWN_USER_HASH, password or "")
    except (VerificationError, InvalidHashError):
        return None
    if user is None or user.disabled:
        return None
    if hasher.check_needs_rehash(user.password_hash):
        user.password_hash = hasher.hash(password)
        user.save()
    return user


def find_user(email: str) -> OAuthUser:
    user = OAuthUser.get_or_none(OAuthUser.email == (email or "").strip().lower())
    if user is None:
        raise TenantError(f"no user with email {email!r}")
    return user
