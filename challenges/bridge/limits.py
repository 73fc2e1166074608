"""The bridge's limits, defined once for Django's path and the lane (lane.py, recording.py):
the rate-limit scopes a call counts against and how often a key's last use is written."""

from datetime import timedelta
from typing import Any

from django.conf import settings

from core.ratelimit import RateLimit, parse_rate, rate_limit_hit

KEY_SCOPE = "bridge-key"
PLAYER_SCOPE = "bridge-player"
# A player's limit is per challenge and hour (Challenge.max_attempts_per_hour).
PLAYER_WINDOW_SECONDS = 3600

# A key's last use is written at most once a minute, so a busy key does not write on
# every call.
KEY_USE_RESOLUTION = timedelta(seconds=60)


def key_rate_limit(key_id: Any) -> RateLimit:
    """BRIDGE_RATE_LIMIT, per bridge key (read on each call: tests and operators change it)."""
    limit, window = parse_rate(settings.BRIDGE_RATE_LIMIT)
    return RateLimit(scope=KEY_SCOPE, key=str(key_id), limit=limit, window_seconds=window)


def player_rate_limit(*, challenge: Any, end_user_id: Any) -> RateLimit:
    return RateLimit(
        scope=PLAYER_SCOPE,
        key=f"{challenge.id}:{end_user_id}",
        limit=challenge.max_attempts_per_hour,
        window_seconds=PLAYER_WINDOW_SECONDS,
    )


def rate_limit_count(rate: RateLimit) -> None:
    """Count one call against `rate` (Django's path); a 429 when over it."""
    rate_limit_hit(
        scope=rate.scope, key=rate.key, limit=rate.limit, window_seconds=rate.window_seconds
    )


def key_use_due(last_used_at: Any, now: Any) -> bool:
    """Whether a key last used at `last_used_at` gets its use written at `now`."""
    return last_used_at is None or now - last_used_at > KEY_USE_RESOLUTION


def key_use_due_sql(*, last_used: str, now: str) -> str:
    """SQL of `key_use_due`: a key last used at `last_used` gets its use written at `now`."""
    seconds = int(KEY_USE_RESOLUTION.total_seconds())
    return f"({last_used} IS NULL OR {now} - {last_used} > interval '{seconds} seconds')"
