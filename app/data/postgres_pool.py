"""The PostgreSQL connection pool, pinging a connection it hands out only when the connection sat
idle: peewee's pool sends `SELECT 1` on every checkout, a round trip on every request, as much
database work as a read by id.

peewee reaches psycopg2 through an adapter named by the database class (`psycopg2_adapter`, the way
playhouse's PostgresqlExtDatabase plugs in its own). This one keeps the adapter's checks but the
round trip: a connection that went back to the pool less than PING_AFTER_IDLE seconds ago is handed
out on its local state alone (psycopg2's `closed` and transaction status). If the server went away
in that time, the request's first statement fails: the request answers 503 (app.errors) and the
connection, marked closed by psycopg2, is dropped at its next checkout. One 503 per such connection
is what a checkout ping would have turned into a reconnect; tests/test_fault_drills.py holds the
bound.
"""

from __future__ import annotations

import time
import weakref

from peewee import Psycopg2Adapter
from playhouse.pool import PooledPostgresqlDatabase

PING_AFTER_IDLE = 1.0  # seconds


class PingWhenIdleAdapter(Psycopg2Adapter):
    """psycopg2 as peewee drives it; connections back in the pool within PING_AFTER_IDLE seconds
    are not pinged when handed out again."""

    def __init__(self):
        super().__init__()
        # connection -> monotonic time it was last handed back to the pool (an entry goes with its
        # connection; the pool calls both methods under its lock)
        self.returned_at: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def is_connection_reusable(self, conn) -> bool:
        reusable = super().is_connection_reusable(conn)
        if reusable:
            self.returned_at[conn] = time.monotonic()
        return reusable

    def is_connection_closed(self, conn) -> bool:
        returned_at = self.returned_at.pop(conn, None)
        if conn.closed:
            return True
        recently = returned_at is not None and time.monotonic() - returned_at < PING_AFTER_IDLE
        if recently and self.txn_status(conn) == self.txn_idle:
            return False
        return super().is_connection_closed(conn)


class PooledPostgres(PooledPostgresqlDatabase):
    """playhouse's PooledPostgresqlDatabase with PingWhenIdleAdapter."""

    psycopg2_adapter = PingWhenIdleAdapter
