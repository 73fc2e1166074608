"""Where an async view runs sync work: the ORM in the request's thread, blocking calls apart.

Under ASGI a request's sync code (ORM, cache, templates) runs on the request's own
thread, and the psycopg pool lends that thread a connection until it is closed. An async
view that awaits a model for seconds must hand the connection back first, or a handful of
slow calls empties the pool and every other page waits for it (SPEC §4c).
"""

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.db import connections

Result = TypeVar("Result")

# Plugin sandboxes and other blocking calls that touch no database: their own threads, so
# they neither queue behind nor hold up the default executor's handful of threads.
_blocking_executor = ThreadPoolExecutor(max_workers=64, thread_name_prefix="blocking-call")


def release_database_connections() -> None:
    """Close this thread's connections (with a pool: return them to it).

    A connection inside a transaction stays open: that is the caller's transaction (a
    test's, or an atomic block) and closing it would roll the work back.
    """
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close()


def _released(function: Callable[..., Result], *args: Any, **kwargs: Any) -> Callable[[], Result]:
    """`function(*args, **kwargs)`, its thread's database connections released after it."""

    def call() -> Result:
        try:
            return function(*args, **kwargs)
        finally:
            release_database_connections()

    return call


async def run_orm(function: Callable[..., Result], /, *args: Any, **kwargs: Any) -> Result:
    """Run sync ORM work on the request's thread and release its connections afterwards."""
    return await sync_to_async(_released(function, *args, **kwargs), thread_sensitive=True)()


async def run_blocking(function: Callable[..., Result], /, *args: Any, **kwargs: Any) -> Result:
    """Run a blocking call that touches no database (a plugin's subprocess) off the loop."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(
        _blocking_executor, functools.partial(function, *args, **kwargs)
    )


async def run_orm_apart(function: Callable[..., Result], /, *args: Any, **kwargs: Any) -> Result:
    """`run_orm` outside Django's request handling (the raw lanes): on a thread of this
    call's own, as Django's handler gives each request, instead of queueing on the one
    thread a process shares for sync work outside a request."""
    async with ThreadSensitiveContext():
        return await run_orm(function, *args, **kwargs)


async def run_orm_pooled(function: Callable[..., Result], /, *args: Any, **kwargs: Any) -> Result:
    """`run_orm_apart` on the loop's default executor: its threads are kept, so a call
    costs no thread start (milliseconds on a busy host), and a few run at once."""
    return await sync_to_async(_released(function, *args, **kwargs), thread_sensitive=False)()
