"""Telephony providers behind one interface, chosen by HIREKIT_TELEPHONY (simulated by default,
twilio or telnyx)."""

from __future__ import annotations

from flask import current_app

from plugins.calls.telephony.base import CallScript, Progress, SmsRefused, TelephonyProvider

PROVIDERS = ("simulated", "twilio", "telnyx")


def get_provider(app=None) -> TelephonyProvider:
    """The configured provider; tests may put an instance in app.extensions['hirekit_telephony']."""
    app = app or current_app
    if "hirekit_telephony" in app.extensions:
        return app.extensions["hirekit_telephony"]
    name = app.config["TELEPHONY"]
    if name == "simulated":
        from plugins.calls.telephony.simulated import SimulatedProvider

        provider = SimulatedProvider()
    elif name == "twilio":
        from plugins.calls.telephony.twilio import TwilioProvider

        provider = TwilioProvider(
            account_sid=app.config["TWILIO_ACCOUNT_SID"],
            auth_token=app.config["TWILIO_AUTH_TOKEN"],
            from_number=app.config["TWILIO_FROM_NUMBER"],
            callback_base_url=app.config["TWILIO_CALLBACK_BASE_URL"],
            api_base_url=app.config["TWILIO_API_BASE_URL"],
        )
    elif name == "telnyx":
        from plugins.calls.telephony.telnyx import TelnyxProvider

        provider = TelnyxProvider(
            api_key=app.config["TELNYX_API_KEY"],
            account_sid=app.config["TELNYX_ACCOUNT_SID"],
            connection_id=app.config["TELNYX_CONNECTION_ID"],
            from_number=app.config["TELNYX_FROM_NUMBER"],
            callback_base_url=app.config["TELNYX_CALLBACK_BASE_URL"],
            api_base_url=app.config["TELNYX_API_BASE_URL"],
        )
    else:
        raise ValueError(f"HIREKIT_TELEPHONY={name!r}: choose one of {', '.join(PROVIDERS)}")
    app.extensions["hirekit_telephony"] = provider
    return provider


__all__ = ["CallScript", "Progress", "SmsRefused", "TelephonyProvider", "get_provider", "PROVIDERS"]
