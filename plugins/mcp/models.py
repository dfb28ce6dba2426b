"""Confirmations a handshake client is asking its person for: the question's id, whose it is, and
the answer once the client posts it, so the worker holding the question's stream sees an answer that
reached any worker."""

from __future__ import annotations

import peewee as pw

from app.data.db import BaseModel, utcnow


class McpConfirmation(BaseModel):
    """One elicitation/create request on a held tools/call stream: deleted when that stream ends; a
    row whose stream died with its worker is deleted by the next question asked after it expired."""

    # the elicitation request's JSON-RPC id, unguessable
    id = pw.CharField(max_length=64, primary_key=True)
    principal = pw.CharField(max_length=200)  # the authorization asked: only it may answer
    answer = pw.TextField(null=True)  # the client's JSON-RPC result or error, as JSON
    created_at = pw.DateTimeField(default=utcnow)
    expires_at = pw.DateTimeField(index=True)

    class Meta:
        table_name = "mcp_confirmations"


MODELS = (McpConfirmation,)
