"""Each visible challenge's default board kept in Redis, so a read is one Redis read
(reads under way at once in a process share one MGET).

One key per challenge holds the web API's JSON body, its ETag, the board table's HTML and
the live frame, all drawn from one read of the rows (challenges/board_render.py). The
after-commit step that pushes a live frame stores the same drawing (`board_cache_refresh`);
a read that misses draws and stores it (`board_cache_fill`); a change to what a board
shows outside its rows drops it (`board_cache_drop`, challenges/receivers.py).

The agents' and the humans' boards (`?players=`) have a key each beside it, named after
the filter. They have no live frame: a refresh drops them, and the next read fills them.

Writes race: two refreshes after two commits can finish in either order, and a refresh
that read a board before its challenge was hidden can finish after the drop. So every
refresh and drop first bumps the board's generation counter, and a drawing is stored only
while the generation it started under is still the current one (one Lua script). The
newest refresh read the database after every commit whose refresh came before it, so the
board that stays is never older than the newest commit.

Only what anyone may see is stored: the public board of a workspace whose boards are
public, frozen while its event is (challenges/selectors/standings.py). A live board is kept
no longer than the freeze's start and a frozen one no longer than the event's end, when
the freeze begins or lifts by itself; a creator's change of the event's settings redraws
every board of the workspace (challenges/receivers.py).

With no REDIS_URL (the embedded default: local-memory cache, one process) nothing is
stored and every read misses; the callers then read the database as before.
"""

import logging
import math
import time
import uuid
from dataclasses import dataclass
from typing import Any

import orjson
import redis
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from redis.retry import Retry

from challenges.board_render import RenderedBoard, board_render
from challenges.models import Challenge, LeaderboardEntry
from challenges.selectors.challenges import challenge_visible_by_id
from core.aio_clients import redis_client
from core.batching import LoopBatcher

logger = logging.getLogger(__name__)

# A drawing a failed write could not replace is served this long at most.
BOARD_CACHE_SECONDS = 300
GENERATION_SECONDS = 24 * 3600
_FORMAT = b"board1"
_WRITE_TIMEOUT_SECONDS = 2.0
_WARN_EVERY_SECONDS = 60.0

_BUMP = """
local generation = redis.call('INCR', KEYS[1])
if generation == 1 then
  generation = tonumber(ARGV[1])
  redis.call('SET', KEYS[1], generation)
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return generation
"""
_STORE_IF_CURRENT = """
if (redis.call('GET', KEYS[2]) or '0') == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
  return 1
end
return 0
"""


@dataclass(frozen=True)
class CachedBoard:
    etag: str
    # The web API's body for the default limit.
    json: bytes
    # The board table as every viewer sees it (no own row marked).
    html: str
    # The live frame's JSON text: the standings with `html` and `version`.
    frame: bytes


def _redis_url() -> str:
    # Redis is the cache and the channel layer exactly when REDIS_URL is set (settings).
    return settings.REDIS_URL


def _key_prefix() -> str:
    return settings.CACHES["default"].get("KEY_PREFIX") or "phc"


# The parts of a board stored beside the whole one (challenges/selectors/standings.py).
_PARTS = ("agents", "humans")


def board_cache_key(challenge_id: Any, players: str = "") -> str:
    suffix = f":{players}" if players else ""
    return f"{_key_prefix()}:board:{challenge_id}{suffix}"


def _all_keys(challenge_id: str) -> list[str]:
    return [board_cache_key(challenge_id, players) for players in ("", *_PARTS)]


def _generation_key(challenge_id: Any) -> str:
    return f"{_key_prefix()}:board-generation:{challenge_id}"


def _canonical_id(challenge_id: Any) -> str | None:
    try:
        return str(uuid.UUID(str(challenge_id)))
    except ValueError:
        return None


_last_warning = 0.0


def _warn(action: str, error: Exception) -> None:
    # Redis down means every read and write fails; one line a minute says so.
    global _last_warning
    now = time.monotonic()
    if now - _last_warning >= _WARN_EVERY_SECONDS:
        _last_warning = now
        logger.warning("Board cache: could not %s, the database answers: %r", action, error)


def _encode(board: CachedBoard) -> bytes:
    html = board.html.encode()
    header = b" ".join(
        [_FORMAT, board.etag.encode(), str(len(board.json)).encode(), str(len(html)).encode()]
    )
    return b"".join([header, b"\n", board.json, html, board.frame])


def _decode(raw: bytes) -> CachedBoard | None:
    header, _, rest = raw.partition(b"\n")
    parts = header.split(b" ")
    if len(parts) != 4 or parts[0] != _FORMAT:
        return None  # written by another version of this module: a miss
    json_end = int(parts[2])
    html_end = json_end + int(parts[3])
    return CachedBoard(
        etag=parts[1].decode(),
        json=rest[:json_end],
        html=rest[json_end:html_end].decode(),
        frame=rest[html_end:],
    )


# --- reading: one MGET for the reads under way, from async code, never raising for Redis ---


async def _boards_get(keys: list[str]) -> list[bytes | None]:
    return await redis_client().mget(keys)


# Reads under way at once on one event loop: one MGET (core/batching.py).
_board_reads = LoopBatcher(_boards_get, limit=256)


async def board_cached(challenge_id: Any, players: str = "") -> CachedBoard | None:
    """The stored default board of a visible challenge (`players`: its agents' or humans'
    part); None on a miss, for an id that is no UUID or a `players` that is no part, without
    Redis, or when Redis does not answer. Touches neither a request nor the database: a hit
    proves the challenge visible (only visible boards are stored)."""
    url = _redis_url()
    canonical = _canonical_id(challenge_id) if url else None
    if canonical is None or (players and players not in _PARTS):
        return None
    try:
        raw = await _board_reads.submit(board_cache_key(canonical, players))
    except (RedisError, OSError) as error:
        _warn("read a board", error)
        return None
    return _decode(raw) if raw else None


# How long a board answer may be kept (docs/lanes.md, "Board reads"): a second, by anyone,
# when the board is the same whoever asks; else only by the viewer, who asks again
# (the ETag makes that a 304).
BOARD_CACHE_CONTROL_PUBLIC = "public, max-age=1"
BOARD_CACHE_CONTROL_PRIVATE = "private, no-cache"


def board_answer_headers(*, etag: str, same_for_everyone: bool) -> dict[str, str]:
    """The caching headers of a board answer, whichever path serves it: Django's view and
    the raw lane both send these, and both answer If-None-Match with Django's
    `get_conditional_response`."""
    if same_for_everyone:
        return {"ETag": etag, "Cache-Control": BOARD_CACHE_CONTROL_PUBLIC}
    return {"ETag": etag, "Cache-Control": BOARD_CACHE_CONTROL_PRIVATE}


# --- writing: sync, after a commit or on a miss -------------------------------------------

_sync_clients: dict[str, redis.Redis] = {}


def sync_redis_client() -> redis.Redis | None:
    url = _redis_url()
    if not url:
        return None
    client = _sync_clients.get(url)
    if client is None:
        client = _sync_clients[url] = redis.Redis.from_url(
            url,
            socket_timeout=_WRITE_TIMEOUT_SECONDS,
            socket_connect_timeout=_WRITE_TIMEOUT_SECONDS,
            retry=Retry(NoBackoff(), 1),
        )
    return client


def _generation_bump(client: redis.Redis, challenge_id: str) -> int:
    # A counter that expired (a quiet day) starts again from the clock, in milliseconds,
    # so it still exceeds every version an open page was sent before.
    now_ms = int(time.time() * 1000)
    return int(client.eval(_BUMP, 1, _generation_key(challenge_id), now_ms, GENERATION_SECONDS))


def _store_if_current(
    client: redis.Redis,
    challenge_id: str,
    generation: int,
    board: CachedBoard,
    seconds: int,
    players: str = "",
) -> bool:
    keys = [board_cache_key(challenge_id, players), _generation_key(challenge_id)]
    args = [str(generation), _encode(board), seconds]
    return bool(client.eval(_STORE_IF_CURRENT, 2, *keys, *args))


def _keep_seconds(rendered: RenderedBoard, challenge) -> int | None:
    """How long the drawing may be served; None when it must not be stored at all."""
    if not rendered.view.shown:
        return None  # players-only or hidden boards: every read checks who asks
    workspace = challenge.workspace
    # A freeze begins, or lifts at the end, with no write to replace the drawing: it is
    # kept no longer than that moment.
    if rendered.view.cutoff is not None:
        turn = workspace.ends_at
    else:
        turn = workspace.freeze_at if workspace.freeze_lifted_at is None else None
    now = timezone.now()
    if turn is None or turn <= now:
        return BOARD_CACHE_SECONDS
    return max(1, min(BOARD_CACHE_SECONDS, math.ceil((turn - now).total_seconds())))


def _cached_board(rendered: RenderedBoard, generation: int | None) -> CachedBoard:
    if generation is not None:
        # Frames can overtake each other on the way; the page keeps the newest.
        rendered.standings["version"] = generation
    return CachedBoard(
        etag=rendered.etag,
        json=rendered.body,
        html=rendered.html,
        frame=orjson.dumps(rendered.standings),
    )


def board_cache_refresh(*, challenge_id: Any) -> dict[str, Any] | None:
    """After a commit that changed a board: draw it once, store it, and return the
    standings its live frame carries; None (nothing to push) when the challenge is not
    visible. Runs the generation bump before reading the challenge (see the module note)."""
    canonical = _canonical_id(challenge_id)
    if canonical is None:
        return None
    client = sync_redis_client()
    generation = None
    if client is not None:
        try:
            generation = _generation_bump(client, canonical)
        except RedisError as error:
            _warn("start a board refresh", error)
            client = None
    challenge = challenge_visible_by_id(challenge_id=canonical)
    if challenge is None:
        if client is not None:
            _delete(client, canonical)
        return None
    rendered = board_render(challenge=challenge)
    board = _cached_board(rendered, generation)
    seconds = _keep_seconds(rendered, challenge)
    if seconds is None and client is not None:
        _delete(client, canonical)
    elif client is not None and generation is not None:
        try:
            _store_if_current(client, canonical, generation, board, seconds)
        except RedisError as error:
            _warn("store a board", error)
        # The agents' and humans' parts are drawn again by the next read that wants them.
        _delete(client, canonical, parts_only=True)
    # Pushed even when a newer refresh won the store: the frame's version orders them.
    return rendered.standings


def board_cache_fill(*, challenge_id: Any, players: str = "") -> CachedBoard | None:
    """On a miss: the visible challenge's public board (`players`: its agents' or humans'
    part) drawn from the database and stored unless a refresh or drop began meanwhile, or
    its boards are not public (the caller has checked the viewer then); None for an
    unknown or inactive challenge."""
    canonical = _canonical_id(challenge_id)
    if canonical is None:
        return None
    # What a transaction has not committed is never stored (a read inside one may see
    # its own writes, and nothing would replace them if it rolled back).
    client = None if connection.in_atomic_block else sync_redis_client()
    generation = None
    if client is not None:
        try:
            generation = int(client.get(_generation_key(canonical)) or 0)
        except RedisError as error:
            _warn("start a board fill", error)
            client = None
    challenge = challenge_visible_by_id(challenge_id=canonical)
    if challenge is None:
        return None
    rendered = board_render(challenge=challenge, players=players)
    board = _cached_board(rendered, generation)
    seconds = _keep_seconds(rendered, challenge)
    if client is not None and generation is not None and seconds is not None:
        try:
            _store_if_current(client, canonical, generation, board, seconds, players)
        except RedisError as error:
            _warn("store a board", error)
    return board


def _delete(client: redis.Redis, challenge_id: str, *, parts_only: bool = False) -> None:
    keys = _all_keys(challenge_id)
    try:
        client.delete(*(keys[1:] if parts_only else keys))
    except RedisError as error:
        _warn("drop a board", error)


def board_cache_drop(*, challenge_id: Any) -> None:
    """Forget a board now (and refuse the stores of drawings begun before)."""
    canonical = _canonical_id(challenge_id)
    client = sync_redis_client()
    if canonical is None or client is None:
        return
    try:
        _generation_bump(client, canonical)
    except RedisError as error:
        _warn("drop a board", error)
    _delete(client, canonical)


def board_cache_drop_on_commit(*, challenge_id: Any) -> None:
    transaction.on_commit(lambda: board_cache_drop(challenge_id=challenge_id))


def board_cache_drop_for_workspace_on_commit(*, workspace_id: Any) -> None:
    """Every board of the workspace, dropped once the transaction commits: its event
    settings (freeze, visibility) changed what each one shows."""
    challenge_ids = list(
        Challenge.objects.filter(workspace_id=workspace_id).values_list("id", flat=True)
    )

    def drop() -> None:
        for challenge_id in challenge_ids:
            board_cache_drop(challenge_id=challenge_id)

    transaction.on_commit(drop)


def board_cache_drop_for_end_users_on_commit(*, end_user_ids: Any) -> None:
    """The boards these players stand on, dropped once the transaction commits: their
    shown name changed. `end_user_ids` may be a list or a values_list query."""
    challenge_ids = set(
        LeaderboardEntry.objects.filter(end_user_id__in=end_user_ids).values_list(
            "challenge_id", flat=True
        )
    )
    if not challenge_ids:
        return

    def drop() -> None:
        for challenge_id in challenge_ids:
            board_cache_drop(challenge_id=challenge_id)

    transaction.on_commit(drop)
