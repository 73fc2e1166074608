"""Process-wide async clients for the raw lanes: PostgreSQL (psycopg) and Redis.

An asyncio pool belongs to the event loop that made it, so each loop gets its own
(a server has one; tests start several). Both are built from the settings Django uses.
"""

import asyncio
import weakref

from django.conf import settings
from django.db import connections

REDIS_TIMEOUT_SECONDS = 0.5

_pg_pools: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, object]" = (
    weakref.WeakKeyDictionary()
)
_redis_clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, object]" = (
    weakref.WeakKeyDictionary()
)


def postgres_in_use() -> bool:
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
            open=False,
        )
        _pg_pools[loop] = pool
        await pool.open()
    return pool


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


async def aio_clients_close() -> None:
    """Close this loop's pool and client (a test's loop, before it ends)."""
    loop = asyncio.get_running_loop()
    pool = _pg_pools.pop(loop, None)
    if pool is not None:
        await pool.close()
    client = _redis_clients.pop(loop, None)
    if client is not None:
        await client.aclose()
