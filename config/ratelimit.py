"""Fixed-window rate limits kept in the cache (Redis in production)."""

import time

from django.core.cache import cache

from config.errors import ApplicationError


def parse_rate(rate: str) -> tuple[int, int]:
    """'10/m' -> (10, 60). Units: s, m, h, d."""
    count, _, unit = rate.partition("/")
    seconds = {"s": 1, "m": 60, "h": 3600, "d": 86400}[unit[:1] or "m"]
    return int(count), seconds


def rate_limit_hit(*, scope: str, key: str, limit: int, window_seconds: int) -> None:
    """Count one hit; raise a 429 ApplicationError with Retry-After when over the limit."""
    if limit <= 0:
        return
    now = int(time.time())
    window_start = now - now % window_seconds
    cache_key = f"rl:{scope}:{key}:{window_start}"
    cache.add(cache_key, 0, timeout=window_seconds + 5)
    try:
        count = cache.incr(cache_key)
    except ValueError:  # evicted between add and incr
        cache.set(cache_key, 1, timeout=window_seconds + 5)
        count = 1
    if count > limit:
        retry_after = max(window_start + window_seconds - now, 1)
        raise ApplicationError(
            f"Too many requests; try again in {retry_after} seconds.",
            code="rate_limited",
            status=429,
            headers={"Retry-After": str(retry_after)},
        )


def client_ip(request) -> str:
    return request.META.get("REMOTE_ADDR", "") or "unknown"
