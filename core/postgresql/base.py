"""Django's PostgreSQL backend, failing fast while the database is known to be down.

With the psycopg pool on, a request asks the pool for a connection and waits up to
DB_POOL_TIMEOUT for one; while PostgreSQL is stopped every request would wait that long
before failing. Here the pool's own connection attempts say whether PostgreSQL answers
(core.outages.DatabaseOutage): while it does not, callers are refused at once (a 503 with
Retry-After), one of them every half second tries a connection of its own, and the first that
succeeds ends the outage. The pool the outage left behind is closed, so its callers stop
waiting and its reconnection backoff (up to minutes) does not delay the recovery: the next
caller opens a fresh one.
"""

import contextlib
import logging

import psycopg
from django.db.backends.postgresql import base

from core.outages import database_outage

logger = logging.getLogger(__name__)

PROBE_CONNECT_TIMEOUT_SECONDS = 2


class WatchedConnection(psycopg.Connection):
    """The pool's connections: each attempt to open one reports whether PostgreSQL answered."""

    @classmethod
    def connect(cls, *args, **kwargs):
        try:
            connection = super().connect(*args, **kwargs)
        except psycopg.OperationalError:
            database_outage.began()
            raise
        database_outage.ended()
        return connection


class DatabaseWrapper(base.DatabaseWrapper):
    def __init__(self, settings_dict, *args, **kwargs):
        pool = settings_dict.get("OPTIONS", {}).get("pool")
        if pool:
            settings_dict["OPTIONS"]["pool"] = {
                **(pool if isinstance(pool, dict) else {}),
                "connection_class": WatchedConnection,
            }
        super().__init__(settings_dict, *args, **kwargs)

    def _pooled(self) -> bool:
        return bool(self.settings_dict["OPTIONS"].get("pool"))

    def get_new_connection(self, conn_params):
        if self._pooled() and database_outage.down:
            self._refuse_unless_back(conn_params)
        return super().get_new_connection(conn_params)

    def _refuse_unless_back(self, conn_params) -> None:
        if database_outage.claim_pool_retirement():
            self.close_pool()
        if not database_outage.claim_probe():
            raise psycopg.OperationalError("PostgreSQL is unreachable (checked moments ago).")
        probe = {**conn_params, "connect_timeout": PROBE_CONNECT_TIMEOUT_SECONDS}
        self.Database.connect(**probe).close()
        logger.warning("PostgreSQL answers again; opening a new connection pool")
        database_outage.ended()

    def _close(self):
        lost = self._pooled() and self.connection is not None and self.connection.closed
        super()._close()
        if lost and not database_outage.down and not self.pool.closed:
            # The server closed this one (a restart): those idle in the pool died with it,
            # and each would fail a request of its own. Test them now, replace the dead.
            # (AttributeError: an outage closed the pool meanwhile.)
            with contextlib.suppress(psycopg.Error, AttributeError):
                self.pool.check()
