"""Settings of the calls family: the screening call, its telephony providers and relay, and
reminders (app.config reads DEFAULTS)."""

from __future__ import annotations

# each setting's comment is its meaning on docs/configuration.md (app.config_docs)
DEFAULTS: dict[str, object] = {
    # --- Calls ---
    # days a scheduled call's link to the candidate's own page works (and at most once)
    "CANDIDATE_PAGE_TTL_DAYS": 7.0,
    # public base of the candidate's page links in reminders (empty: the request's host)
    "CANDIDATE_PAGE_BASE_URL": "",
    # follow-ups a call asks when an answer lacks what its question asks, then it moves on
    "CALL_FOLLOW_UPS": 2,
    "CALL_LANGUAGE": "en-US",  # the conversation's language when the relay names none (BCP 47)
    "TELEPHONY": "simulated",  # `simulated` (a deterministic call, no phone), `twilio` or `telnyx`
    # a call ringing or in progress this long without news has lost its worker: failed
    "CALL_STALL_SECONDS": 3600.0,
    "CALL_REAPER_INTERVAL": 300.0,  # seconds between passes failing stalled calls (0: off)
    # seconds after each failed send of a reminder; never past the call
    "REMINDER_RETRY_SCHEDULE": [60, 300, 900],
    # a reminder claimed this long without an outcome is failed, never sent twice
    "REMINDER_LEASE_SECONDS": 600.0,
    "CALL_VOICE": "",  # the provider's text-to-speech voice; empty: its default for the language
    "RELAY_HOST": "127.0.0.1",  # the relay process's address (its WebSocket for ConversationRelay)
    "RELAY_PORT": 8001,  # the relay process's port; nginx sends /v1/calls/relay/ there
    "RELAY_THREADS": 16,  # dialogue turns one relay process runs at once (threads)
    "RELAY_CALL_THREADS": 4,  # calls a relay process opens or closes at once (threads)
    "RELAY_SILENCE_SECONDS": 12.0,  # no word or key this long after the agent's turn: silence
    "RELAY_CONNECT_TIMEOUT": 30.0,  # an answered call with no relay socket this long after: failed
    "RELAY_QUIET_SECONDS": 60.0,  # a call whose relay process stopped renewing it this long: failed
    "RELAY_SWEEP_INTERVAL": 5.0,  # seconds between a relay process's passes ending such calls
    "RELAY_RECORD_INTERVAL": 0.1,  # seconds between writes of live calls' records (one transaction)
    # seconds ended calls wait after the previous hand-on before their completions (status,
    # assessment, event) go to the workers together in one job; none after an idle spell
    "RELAY_COMPLETION_INTERVAL": 0.5,
    # seconds a relay thread runs Python before it offers the interpreter lock to the others
    # (Python's sys.setswitchinterval; its default is 0.005): shorter, the sockets' loop waits less
    # behind turns
    "RELAY_SWITCH_INTERVAL": 0.005,
    "TWILIO_ACCOUNT_SID": "",  # Twilio account placing calls when TELEPHONY is `twilio`
    "TWILIO_AUTH_TOKEN": "",  # Twilio auth token; also verifies Twilio's signed callbacks
    "TWILIO_FROM_NUMBER": "",  # the number calls come from (E.164)
    "TWILIO_CALLBACK_BASE_URL": "",  # public https base Twilio calls back, e.g. https://api.example.com
    # Twilio's REST API elsewhere than https://api.twilio.com (a mock, a regional proxy)
    "TWILIO_API_BASE_URL": "",
    "TELNYX_API_KEY": "",  # Telnyx API key placing calls and texts when TELEPHONY is `telnyx`
    "TELNYX_ACCOUNT_SID": "",  # Telnyx account id: the AccountSid in TeXML REST paths and callbacks
    "TELNYX_CONNECTION_ID": "",  # the TeXML application (connection) id calls are placed through
    "TELNYX_FROM_NUMBER": "",  # the Telnyx number calls and texts come from (E.164)
    "TELNYX_CALLBACK_BASE_URL": "",  # public https base for Telnyx's callbacks and relay sockets
    "TELNYX_PUBLIC_KEY": "",  # the account's Ed25519 public key (base64): verifies its callbacks
    "TELNYX_API_BASE_URL": "",  # Telnyx's REST API elsewhere than https://api.telnyx.com
}
