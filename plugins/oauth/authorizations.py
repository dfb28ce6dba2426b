"""A person's authorizations of clients: recorded at consent, listed on their page and through the
API, revoked with every token the client holds for them."""

from __future__ import annotations

import orjson

from app.data.db import database, utcnow
from plugins.oauth.models import OAuthClient, OAuthConsent, OAuthToken, OAuthUser


def record_consent(user: OAuthUser, client_id: str, scope: str) -> None:
    """Remember that `user` authorized the client for `scope` (the newest consent's scopes)."""
    now = utcnow()
    with database.atomic():
        updated = (
            OAuthConsent.update(scope=scope, updated_at=now)
            .where((OAuthConsent.user == user.id) & (OAuthConsent.client_id == client_id))
            .execute()
        )
        if not updated:
            OAuthConsent.create(
                user=user.id, client_id=client_id, scope=scope, created_at=now, updated_at=now
            )


def describe(consent: OAuthConsent) -> dict:
    client = OAuthClient.get_or_none(OAuthClient.client_id == consent.client_id)
    metadata = orjson.loads(client.metadata) if client is not None else {}
    return {
        "id": consent.id,
        "user_id": consent.user_id,
        "client_id": consent.client_id,
        "client_name": str(metadata.get("client_name") or consent.client_id),
        "client_kind": client.kind if client is not None else "registered",
        "scopes": consent.scope.split(),
        "created_at": consent.created_at,
        "last_used_at": consent.last_used_at,
    }


def user_consents(user_id) -> list[OAuthConsent]:
    return list(
        OAuthConsent.select()
        .where(OAuthConsent.user == user_id)
        .order_by(OAuthConsent.created_at, OAuthConsent.id)
    )


def revoke(consent: OAuthConsent) -> int:
    """Forget the authorization and revoke every token of that client for that person; the count
    revoked."""
    with database.atomic():
        revoked = (
            OAuthToken.update(revoked_at=utcnow())
            .where(
                (OAuthToken.user == consent.user_id)
                & (OAuthToken.client_id == consent.client_id)
                & OAuthToken.revoked_at.is_null()
            )
            .execute()
        )
        consent.delete_instance()
    return revoked
