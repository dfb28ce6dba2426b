"""Authorization codes and tokens deleted once they can no longer be used, so the tables hold what
is live (and the spent codes and rotated refresh tokens a replay must still be recognised by)."""

from __future__ import annotations

import datetime as dt
import logging

from app.background import periodic
from app.data.db import database, utcnow
from plugins.oauth.models import OAuthCode, OAuthToken

log = logging.getLogger("hirekit.oauth")

JOB_ID = "hirekit-oauth-purge"
QUEUE = "default"
# a code replayed this long after it expired still revokes the tokens it gave (RFC 6749 10.5); later
# it is unknown
SPENT_CODE_GRACE = dt.timedelta(days=1)


def purge_expired(now: dt.datetime | None = None) -> dict[str, int]:
    """Delete codes a day past their expiry and tokens whose access and refresh tokens have both
    expired (rotated and revoked ones included: an expired refresh token is refused whether or not
    its row is kept); answers the counts."""
    now = now or utcnow()
    with database.atomic():
        codes = OAuthCode.delete().where(OAuthCode.expires_at <= now - SPENT_CODE_GRACE).execute()
        tokens = (
            OAuthToken.delete()
            .where(
                (OAuthToken.access_expires_at <= now)
                & (OAuthToken.refresh_expires_at.is_null() | (OAuthToken.refresh_expires_at <= now))
            )
            .execute()
        )
    return {"codes": codes, "tokens": tokens}


def described(purged: dict[str, int]) -> str:
    return (
        f"purged {purged['codes']} expired authorization code(s) and {purged['tokens']} "
        "expired token(s)"
    )


@periodic.chained(job_id=JOB_ID, queue=QUEUE, interval_setting="OAUTH_PURGE_INTERVAL")
def purge_expired_grants() -> dict[str, int]:
    """The worker's periodic pass: expired codes and tokens deleted."""
    purged = purge_expired()
    if any(purged.values()):
        log.info(described(purged))
    return purged
