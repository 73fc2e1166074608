"""Rate limits and in-flight caps kept in Redis (production) or the local process (embedded)."""

import logging
import threading
import time
import uuid
import weakref
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import cache
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from core.batching import LoopBatcher
from core.client_ip import client_ip
from core.errors import ApplicationError

logger = logging.getLogger(__name__)

# The callers that limit per client address take it from here, read through TRUSTED_PROXIES.
__all__ = [
    "InFlightClaim",
    "client_ip",
    "in_flight_claim",
    "in_flight_release",
    "parse_rate",
    "rate_limit_hit",
    "RateCount",
    "RateLimit",
    "rate_counts_undo_async",
    "rate_limits_count_async",
]


def parse_rate(rate: str) -> tuple[int, int]:
    """'10/m' -> (10, 60). Units: s, m, h, d."""
    count, _, unit = rate.partition("/")
    seconds = {"s": 1, "m": 60, "h": 3600, "d": 86400}[unit[:1] or "m"]
    return int(count), seconds


_redis_client = None


def redis_client():
    """This process's one sync Redis client (rate limits, replica pins), or None without
    REDIS_URL: under ASGI Django's cache would reconnect on every request."""
    global _redis_client
    if _redis_client is None and settings.REDIS_URL:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        # One retry at once (a connection Redis closed), not ten with backoff: a Redis
        # that is down answers the request with a 503 now (docs/outages.md).
        _redis_client = redis.Redis.from_url(
            settings.REDIS_URL,
            socket_timeout=2,
            socket_connect_timeout=2,
            retry=Retry(NoBackoff(), 1),
        )
    return _redis_client


def _count_hit(cache_key: str, window_seconds: int) -> int:
    client = redis_client()
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


def _window(window_seconds: int) -> tuple[int, int]:
    now = int(time.time())
    return now, now - now % window_seconds


def _hit_key(*, scope: str, key: str, window_start: int) -> str:
    prefix = settings.CACHES["default"].get("KEY_PREFIX", "")
    return f"{prefix}:rl:{scope}:{key}:{window_start}"


def _refuse_over_limit(*, count: int, limit: int, now: int, window_start: int, window_seconds: int):
    if count > limit:
        retry_after = max(window_start + window_seconds - now, 1)
        raise ApplicationError(
            f"Too many requests; try again in {retry_after} seconds.",
            code="rate_limited",
            status=429,
            headers={"Retry-After": str(retry_after)},
        )


def rate_limit_hit(*, scope: str, key: str, limit: int, window_seconds: int) -> None:
    """Count one hit; raise a 429 ApplicationError with Retry-After when over the limit."""
    if limit <= 0:
        return
    now, window_start = _window(window_seconds)
    count = _count_hit(_hit_key(scope=scope, key=key, window_start=window_start), window_seconds)
    _refuse_over_limit(
        count=count, limit=limit, now=now, window_start=window_start, window_seconds=window_seconds
    )


@dataclass(frozen=True)
class RateLimit:
    scope: str
    key: str
    limit: int
    window_seconds: int


@dataclass(frozen=True)
class RateCount:
    """One counted hit: where it was counted and how many the window now holds."""

    limit: RateLimit
    hit_key: str
    count: int
    now: int
    window_start: int

    @property
    def over(self) -> bool:
        return self.limit.limit > 0 and self.count > self.limit.limit

    def refuse_if_over(self) -> None:
        if self.limit.limit > 0:
            _refuse_over_limit(
                count=self.count,
                limit=self.limit.limit,
                now=self.now,
                window_start=self.window_start,
                window_seconds=self.limit.window_seconds,
            )


# For each call, counts one hit on each of its limits in turn and stops at the first one
# over, as Django's path calls rate_limit_hit limit after limit: a hit one limit refused
# costs nothing on the next. ARGV: the number of calls, then per call its number of
# limits and (limit, expiry) per limit; KEYS: the calls' hit keys in the same order.
_COUNT_IN_TURN = """
local replies = {}
local key = 0
local arg = 2
for call = 1, tonumber(ARGV[1]) do
    local limits = tonumber(ARGV[arg])
    local counts = {}
    local stopped = false
    for i = 1, limits do
        key = key + 1
        if not stopped then
            local count = redis.call('INCR', KEYS[key])
            redis.call('EXPIRE', KEYS[key], ARGV[arg + 2 * i], 'NX')
            counts[i] = count
            local limit = tonumber(ARGV[arg + 2 * i - 1])
            if limit > 0 and count > limit then
                stopped = true
            end
        end
    end
    arg = arg + 1 + 2 * limits
    replies[call] = counts
end
return replies
"""

# The most calls one script counts.
_BATCH_LIMIT = 128


@dataclass(frozen=True)
class _Hits:
    client: Any
    limits: list[RateLimit]
    windows: list[tuple[int, int, str]]


def _hits(redis_client, limits: list[RateLimit]) -> _Hits:
    windows = []
    for limit in limits:
        now, window_start = _window(limit.window_seconds)
        hit_key = _hit_key(scope=limit.scope, key=limit.key, window_start=window_start)
        windows.append((now, window_start, hit_key))
    return _Hits(client=redis_client, limits=limits, windows=windows)


async def _count_batch(batch: list[_Hits]) -> list[list[RateCount]]:
    """Every call of the batch counted in one script (one Redis round trip per client)."""
    counted: dict[int, list[RateCount]] = {}
    for client in {id(hits.client): hits.client for hits in batch}.values():
        calls = [(at, hits) for at, hits in enumerate(batch) if hits.client is client]
        keys = [hit_key for _, hits in calls for _, _, hit_key in hits.windows]
        arguments: list[Any] = [len(calls)]
        for _, hits in calls:
            arguments.append(len(hits.limits))
            for limit in hits.limits:
                arguments += [limit.limit, limit.window_seconds + 5]
        replies = await _script(client)(keys=keys, args=arguments)
        for (at, hits), counts in zip(calls, replies, strict=True):
            counted[at] = [
                RateCount(
                    limit=limit, hit_key=hit_key, count=int(count), now=now, window_start=start
                )
                for limit, (now, start, hit_key), count in zip(
                    hits.limits, hits.windows, counts, strict=False
                )
            ]
    return [counted[at] for at in range(len(batch))]


_scripts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _script(client):
    """The counting script registered on this client (EVALSHA, loaded when Redis lacks it)."""
    script = _scripts.get(client)
    if script is None:
        script = _scripts[client] = client.register_script(_COUNT_IN_TURN)
    return script


_counting = LoopBatcher(_count_batch, limit=_BATCH_LIMIT)


async def rate_limits_count_async(redis_client, limits: list[RateLimit]) -> list[RateCount]:
    """Count one hit on each limit in turn (`rate_limit_hit`'s counters) up to the first
    limit the hit is over: the counts of the limits it reached. Calls counted meanwhile on
    this event loop go together in one Redis round trip (core/batching.py)."""
    return await _counting.submit(_hits(redis_client, limits))


async def rate_counts_undo_async(redis_client, counts: list[RateCount]) -> None:
    """Take counted hits back (the call turned out to cost nothing, or went elsewhere to be
    counted there)."""
    if counts:
        pipe = redis_client.pipeline(transaction=False)
        for count in counts:
            pipe.decr(count.hit_key)
        await pipe.execute()


# --- In-flight caps -----------------------------------------------------------------------

_local_claims: dict[str, dict[str, float]] = {}
_local_claims_lock = threading.Lock()


@dataclass(frozen=True)
class InFlightClaim:
    cache_key: str
    token: str


def in_flight_claim(*, scope: str, key: str, limit: int, expiry_seconds: int) -> InFlightClaim:
    """Take one of `limit` slots for work under way; raise a 429 ApplicationError when full.

    Each claim expires on its own after `expiry_seconds`, so a worker that dies before
    `in_flight_release` costs the player a slot for that long, never for good.
    """
    prefix = settings.CACHES["default"].get("KEY_PREFIX", "")
    claim = InFlightClaim(cache_key=f"{prefix}:inflight:{scope}:{key}", token=uuid.uuid4().hex)
    now = time.time()
    client = redis_client()
    if client is not None:
        pipe = client.pipeline(transaction=True)
        pipe.zremrangebyscore(claim.cache_key, "-inf", now)
        pipe.zadd(claim.cache_key, {claim.token: now + expiry_seconds})
        pipe.zcard(claim.cache_key)
        pipe.expire(claim.cache_key, expiry_seconds + 5)
        _, _, held, _ = pipe.execute()
        full = int(held) > limit
        if full:
            client.zrem(claim.cache_key, claim.token)
    else:
        with _local_claims_lock:
            claims = _local_claims.setdefault(claim.cache_key, {})
            for token in [token for token, deadline in claims.items() if deadline <= now]:
                del claims[token]
            full = len(claims) >= limit
            if not full:
                claims[claim.token] = now + expiry_seconds
    if full:
        raise ApplicationError(
            "You already have attempts waiting for the model; try again when one has answered.",
            code="too_many_in_flight",
            status=429,
            headers={"Retry-After": "1"},
        )
    return claim


def in_flight_release(claim: InFlightClaim) -> None:
    """Give the slot back. A Redis that went away meanwhile keeps it until it expires: the
    attempt it guarded is still recorded (docs/outages.md)."""
    client = redis_client()
    if client is not None:
        try:
            client.zrem(claim.cache_key, claim.token)
        except (RedisConnectionError, RedisTimeoutError):
            logger.warning("Could not release in-flight slot %s; it expires", claim.cache_key)
        return
    with _local_claims_lock:
        claims = _local_claims.get(claim.cache_key, {})
        claims.pop(claim.token, None)
        if not claims:
            _local_claims.pop(claim.cache_key, None)
