"""The ConversationRelay transport: a call's WebSocket session with the telephony provider, served
by its own process."""
