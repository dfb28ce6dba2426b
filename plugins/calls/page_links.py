"""Links to the candidate's own page (plugins.calls.candidate_page): a token signed with the server
secret, naming the call and its current nonce, so a link works until it expires or the nonce is
replaced by its use."""

from __future__ import annotations

import secrets

from flask import current_app

from app.security import tokens
from plugins.calls.models import Call

TOKEN_KIND = "candidate-page"


def link_ttl() -> float:
    return float(current_app.config["CANDIDATE_PAGE_TTL_DAYS"]) * 86400


def page_base_url() -> str:
    config = current_app.config
    base = (
        config["CANDIDATE_PAGE_BASE_URL"]
        or config["TWILIO_CALLBACK_BASE_URL"]
        or f"http://localhost:{config['PORT']}"
    )
    return base.rstrip("/")


def token_for(call: Call) -> str:
    """The call's current link token (a nonce is given to the call on first use)."""
    if not call.page_nonce:
        nonce = secrets.token_urlsafe(12)
        Call.update(page_nonce=nonce).where(
            (Call.id == call.id) & Call.page_nonce.is_null()
        ).execute()
        call.page_nonce = Call.select(Call.page_nonce).where(Call.id == call.id).scalar()
    return tokens.sign(TOKEN_KIND, {"c": str(call.id), "n": call.page_nonce})


def page_link(call: Call) -> str:
    """The absolute link to the call's page, for a reminder."""
    return f"{page_base_url()}/c/{token_for(call)}"
