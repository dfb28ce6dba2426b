"""Migration 023_mcp_confirmations (peewee-migrate; `flask --app wsgi db upgrade` applies it)."""

import peewee as pw
from peewee_migrate import Migrator


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """The confirmations MCP clients of the handshake revisions are asking their person for: a held
    tools/call stream waits for the answer, which the client posts to any worker."""

    @migrator.create_model
    class McpConfirmation(pw.Model):
        id = pw.CharField(max_length=64, primary_key=True)
        principal = pw.CharField(max_length=200)
        answer = pw.TextField(null=True)
        created_at = pw.DateTimeField()
        expires_at = pw.DateTimeField(index=True)

        class Meta:
            table_name = "mcp_confirmations"


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    migrator.remove_model("mcp_confirmations")
