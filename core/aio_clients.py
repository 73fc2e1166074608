"""Process-wide async clients for the raw lanes: PostgreSQL (psycopg) and Redis.

An asyncio pool belongs to the event loop that made it, so each loop gets its own
(a server has one; tests start several). Both are built from the settings Django uses.

PostgreSQL out of reach (SPEC §8): the first call that finds it so waits at most
PG_WAIT_SECONDS for a connection; from then on the lanes answer 503 at once while a probe
connects every OUTAGE_PROBE_SECONDS, and the first probe that gets through ends the outage
with a fresh pool — the old one's connections died with the server, and its own
reconnecting backs off for up to minutes.
"""

import asyncio
import functools
import logging
import weakref
from typing import Any

import psycopg
from django.conf import settings
from django.db import connections

from core.errors import ApplicationError
from core.outages import postgres_unreachable

logger = logging.getLogger(__name__)

REDIS_TIMEOUT_SECONDS = 0.5
PG_WAIT_SECONDS = 5.0
OUTAGE_PROBE_SECONDS = 1.0
RETRY_AFTER_SECONDS = 1

_pg_pools: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, object]" = (
    weakref.WeakKeyDictionary()
)
_redis_clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, object]" = (
    weakref.WeakKeyDictionary()
)
# The loops that know PostgreSQL is out of reach, each with the task probing for it.
_pg_outages: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Task]" = (
    weakref.WeakKeyDictionary()
)


@functools.cache
def postgres_in_use() -> bool:
    # Fixed for the process; asked once: `connections` makes a new connection object for
    # each request task that asks.
    return connections["default"].vendor == "postgresql"


def _conninfo() -> str:
    from psycopg.conninfo import make_conninfo

    params = connections["default"].get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    params.pop("prepare_threshold", None)
    params.pop("pool", None)
    return make_conninfo(**{key: value for key, value in params.items() if value not in (None, "")})


async def pg_pool():
    """This loop's psycopg pool (autocommit connections, opened on first use)."""
    from psycopg_pool import AsyncConnectionPool

    loop = asyncio.get_running_loop()
    pool = _pg_pools.get(loop)
    if pool is None:
        pool = AsyncConnectionPool(
            _conninfo(),
            min_size=1,
            max_size=settings.LANE_DB_POOL_SIZE,
            kwargs={"autocommit": True},
            timeout=PG_WAIT_SECONDS,
            open=False,
        )
        _pg_pools[loop] = pool
        await pool.open()
    return pool


async def pg_fetch(query: str, parameters: Any) -> list[tuple]:
    """The rows of one statement, in autocommit, on this loop's pool.

    A restart closes every pooled connection: a statement whose connection turns out to
    have died is sent once more, after the pool has checked its idle ones (psycopg_pool's
    own check waits a backoff between dead connections). So send only statements that are
    safe to send twice.
    """
    postgres_refuse_while_down()
    try:
        return await _fetch_once_more_on_a_dead_connection(query, parameters)
    except psycopg.Error as error:
        # Found here, so work queued behind this statement fails fast too.
        if postgres_unreachable(error):
            postgres_outage_begins()
        raise


async def _fetch_once_more_on_a_dead_connection(query: str, parameters: Any) -> list[tuple]:
    pool = await pg_pool()
    async with pool.connection() as connection:
        try:
            return await _rows(connection, query, parameters)
        except psycopg.OperationalError:
            if not connection.broken:
                raise
    await pool.check()
    async with pool.connection() as connection:
        return await _rows(connection, query, parameters)


async def _rows(connection, query: str, parameters: Any) -> list[tuple]:
    cursor = await connection.execute(query, parameters)
    return await cursor.fetchall()


def redis_client():
    """This loop's redis.asyncio client, or None when the site runs without Redis."""
    if not settings.REDIS_URL:
        return None
    import redis.asyncio
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff

    loop = asyncio.get_running_loop()
    client = _redis_clients.get(loop)
    if client is None:
        # Short waits and one retry on a fresh connection (for a pooled one Redis closed):
        # a cache read or a rate limit must not hang a request on a Redis in trouble.
        client = redis.asyncio.Redis.from_url(
            settings.REDIS_URL,
            socket_timeout=REDIS_TIMEOUT_SECONDS,
            socket_connect_timeout=REDIS_TIMEOUT_SECONDS,
            retry=Retry(NoBackoff(), 1),
        )
        _redis_clients[loop] = client
    return client


def postgres_unavailable() -> ApplicationError:
    return ApplicationError(
        "The database is out of reach for a moment; try again shortly.",
        code="service_unavailable",
        status=503,
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


def postgres_known_down() -> bool:
    return asyncio.get_running_loop() in _pg_outages


def postgres_refuse_while_down() -> None:
    """Fail at once, as PostgreSQL out of reach, while it is known to be: work already
    under way when the outage was found does not wait for a connection either."""
    if postgres_known_down():
        raise psycopg.OperationalError("PostgreSQL is out of reach; a probe waits for it")


def postgres_outage_begins() -> None:
    """PostgreSQL was found out of reach: answer 503 at once until a probe connects."""
    loop = asyncio.get_running_loop()
    if loop in _pg_outages:
        return
    logger.warning("PostgreSQL is out of reach; the lanes answer 503 until it is back")
    _pg_outages[loop] = loop.create_task(_probe_until_back(_conninfo()))


async def _probe_until_back(conninfo: str) -> None:
    while True:
        await asyncio.sleep(OUTAGE_PROBE_SECONDS)
        try:
            probe = await psycopg.AsyncConnection.connect(
                conninfo, connect_timeout=2, autocommit=True
            )
            async with probe:
                await probe.execute("SELECT 1")
        except psycopg.Error:
            continue
        break
    loop = asyncio.get_running_loop()
    stale = _pg_pools.pop(loop, None)
    del _pg_outages[loop]
    logger.warning("PostgreSQL is back; the lanes use it again")
    if stale is not None:
        await stale.close()


async def aio_clients_close() -> None:
    """Close this loop's pool and client (a test's loop, before it ends)."""
    loop = asyncio.get_running_loop()
    probe = _pg_outages.pop(loop, None)
    if probe is not None:
        probe.cancel()
    pool = _pg_pools.pop(loop, None)
    if pool is not None:
        await pool.close()
    client = _redis_clients.pop(loop, None)
    if client is not None:
        await client.aclose()
