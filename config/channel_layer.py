"""The Redis channel layer, with a connection pool that waits for a free connection and a
receive that ends when it is cancelled.

redis-py's asyncio pool refuses a caller once its cap is reached (MaxConnectionsError;
the cap became 100 by default in redis-py 8) instead of waiting. Under a burst of sockets
joining or leaving a group that lost group changes, and when the refusal hit the layer's
shared receive loop it killed an unrelated socket. A blocking pool queues the burst.
"""

import asyncio
import time

from channels_redis.core import RedisChannelLayer
from redis.asyncio import BlockingConnectionPool


class WaitingRedisChannelLayer(RedisChannelLayer):
    def create_pool(self, index: int) -> BlockingConnectionPool:
        host = dict(self.hosts[index])
        address = host.pop("address")
        # max_connections and timeout (the wait for a free connection) come from the host.
        return BlockingConnectionPool.from_url(address, **host)

    async def group_send(self, group: str, message: dict) -> None:
        """Most pushes go to a group nobody listens to (a game without viewers): one round
        trip drops the expired members and counts the rest, and an empty group ends there,
        where the inherited send makes two before it finds nobody to send to."""
        assert self.require_valid_group_name(group), "Group name not valid"
        key = self._group_key(group)
        pipe = self.connection(self.consistent_hash(group)).pipeline(transaction=False)
        pipe.zremrangebyscore(key, min=0, max=int(time.time()) - self.group_expiry)
        pipe.zcard(key)
        _, members = await pipe.execute()
        if members:
            await super().group_send(group, message)

    async def receive(self, channel: str) -> dict:
        # A cancellation can be lost below us: on Python 3.11, redis-py writes each command
        # under asyncio.wait_for, which drops a cancel that lands as the write completes
        # (python/cpython#86296, fixed in 3.12). The inherited receive then goes on
        # waiting on BZPOPMIN for a message that never comes, and the socket's consumer,
        # which waits for its cancelled receive to end, waited with it: uvicorn never
        # finished shutting down. Receive in a task of its own, and cancel that task
        # until it has ended.
        receiving = asyncio.ensure_future(super().receive(channel))
        try:
            return await asyncio.shield(receiving)
        except asyncio.CancelledError:
            while not receiving.done():
                receiving.cancel()
                try:
                    await asyncio.wait([receiving], timeout=0.1)
                except asyncio.CancelledError:
                    continue  # cancelled again: this receive is ending anyway
            if not receiving.cancelled():
                receiving.exception()  # retrieved: the caller was cancelled, it wants none
            raise
