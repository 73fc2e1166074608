"""Fixed-window rate limits kept in Redis (production) or the local cache (embedded)."""

import time

from django.conf import settings
from django.core.cache import cache

from core.client_ip import client_ip
from core.errors import ApplicationError

# The callers that limit per client address take it from here, read through TRUSTED_PROXIES.
__all__ = ["client_ip", "parse_rate", "rate_limit_hit"]


def parse_rate(rate: str) -> tuple[int, int]:
    """'10/m' -> (10, 60). Units: s, m, h, d."""
    count, _, unit = rate.partition("/")
    seconds = {"s": 1, "m": 60, "h": 3600, "d": 86400}[unit[:1] or "m"]
    return int(count), seconds


_redis_client = None


def _redis():
    """One client per process: under ASGI Django's cache would reconnect on every request."""
    global _redis_client
    if _redis_client is None and settings.REDIS_URL:
        import redis

        _redis_client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2)
    return _redis_client


def _count_hit(cache_key: str, window_seconds: int) -> int:
    client = _redis()
    if client is not None:
        pipe = client.pipeline(transaction=False)
        pipe.incr(cache_key)
        pipe.expire(cache_key, window_seconds + 5, nx=True)
        count, _ = pipe.execute()
        return int(count)
    cache.add(cache_key, 0, timeout=window_seconds + 5)
    try:
        return cache.incr(cache_key)
    except ValueError:  # evicted between add and incr
        cache.set(cache_key, 1, timeout=window_seconds + 5)
        return 1


def rate_limit_hit(*, scope: str, key: str, limit: int, window_seconds: int) -> None:
    """Count one hit; raise a 429 ApplicationError with Retry-After when over the limit."""
    if limit <= 0:
        return
    now = int(time.time())
    window_start = now - now % window_seconds
    prefix = settings.CACHES["default"].get("KEY_PREFIX", "")
    count = _count_hit(f"{prefix}:rl:{scope}:{key}:{window_start}", window_seconds)
    if count > limit:
        retry_after = max(window_start + window_seconds - now, 1)
        raise ApplicationError(
            f"Too many requests; try again in {retry_after} seconds.",
            code="rate_limited",
            status=429,
            headers={"Retry-After": str(retry_after)},
        )
