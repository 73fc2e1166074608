"""The Redis channel layer, with a connection pool that waits for a free connection.

redis-py's asyncio pool refuses a caller once its cap is reached (MaxConnectionsError;
the cap became 100 by default in redis-py 8) instead of waiting. Under a burst of sockets
joining or leaving a group that lost group changes, and when the refusal hit the layer's
shared receive loop it killed an unrelated socket. A blocking pool queues the burst.
"""

from channels_redis.core import RedisChannelLayer
from redis.asyncio import BlockingConnectionPool


class WaitingRedisChannelLayer(RedisChannelLayer):
    def create_pool(self, index: int) -> BlockingConnectionPool:
        host = dict(self.hosts[index])
        address = host.pop("address")
        # max_connections and timeout (the wait for a free connection) come from the host.
        return BlockingConnectionPool.from_url(address, **host)
