"""Reads that tolerate lag go to PostgreSQL streaming replicas (SPEC §8).

DATABASE_REPLICA_URLS lists the replicas (settings make them the aliases `replica_0`, …);
empty, nothing here is installed and every query runs on `default`, as before. A query
reads from a replica only when all of these hold:

- its request is a GET or HEAD of a page or API that shows public, lag-tolerant rows
  (`LAG_TOLERANT`: the challenge list and pages, boards, the scoreboard and player pages,
  arena listings and boards). Not the default board of a challenge: its miss fills the
  board cache every process serves from, which must never hold a board older than the
  newest commit (challenges/board_cache.py); a hit never reaches the database anyway;
- its client has written nothing for DATABASE_REPLICA_PIN_SECONDS: any other method pins
  the bearer token and session cookie it came with (and a session cookie it was given) to
  the primary for that long, in Redis, which every process reads. A player's own win never
  goes missing from their own view while a replica catches up;
- the request has written nothing yet, no transaction is open, and the model is none of
  `PRIMARY_ONLY` (sessions, tokens, accounts: rows read right after a login wrote them);
- a replica answers. One that refused a connection is left alone for
  DATABASE_REPLICA_COOLDOWN_SECONDS, then the next read probes it with a connection of its
  own (its pool is replaced once it answers); meanwhile reads go to the primary.

A read in flight on a replica that dies gets the 503 any lost
connection gets (core/outages.py); the next ones go to the primary.
"""

import contextvars
import hashlib
import logging
import random
import re
import threading
import time
from dataclasses import dataclass

import psycopg
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured, MiddlewareNotUsed
from django.db import DatabaseError, connections
from django.http import HttpRequest, HttpResponse
from redis.exceptions import RedisError

from core.ratelimit import redis_client

logger = logging.getLogger(__name__)

LAG_TOLERANT = re.compile(
    r"""^/(?:
        |challenges/[^/]+/(?:leaderboard)?
        |collections/[^/]+/
        |scoreboard/(?:[^/]+/(?:standings)?)?
        |players/[^/]+/
        |arena/
        |web/api/challenges(?:/[^/]+(?:/leaderboard)?)?
        |web/api/challenge-collections(?:/[^/]+(?:/leaderboard)?)?
        |api/(?:v1/)?(?:metadata|challenges|scoring)(?:/[^/]+)?
        |api/(?:v1/)?stats
        |api/(?:v1/)?users/[^/]+(?:/challenges|/scores)?
    )$""",
    re.VERBOSE,
)
_WEB_BOARD = re.compile(r"^/web/api/challenges/[^/]+/leaderboard$")
PRIMARY_ONLY = frozenset(
    {
        "sessions.Session",
        "auth.User",
        "players.ApiToken",
        "account.EmailAddress",
        "account.EmailConfirmation",
    }
)
_UNSET = object()
_PROBE_CONNECT_TIMEOUT_SECONDS = 2


@dataclass
class ReadScope:
    """One lag-tolerant request: the replica it reads from (chosen on its first read) and
    whether it wrote, after which it reads from the primary."""

    replica: object = _UNSET
    wrote: bool = False

    def replica_alias(self) -> str | None:
        if self.replica is _UNSET:
            self.replica = replica_answering()
        return self.replica


_scope: contextvars.ContextVar[ReadScope | None] = contextvars.ContextVar(
    "replica_read_scope", default=None
)


class ReplicaRouter:
    def db_for_read(self, model, **hints) -> str | None:
        scope = _scope.get()
        if scope is None or scope.wrote or model._meta.label in PRIMARY_ONLY:
            return None
        if connections["default"].in_atomic_block:
            return None
        return scope.replica_alias()

    def db_for_write(self, model, **hints) -> str:
        scope = _scope.get()
        if scope is not None:
            scope.wrote = True
        return "default"

    def allow_relation(self, first, second, **hints) -> bool:
        return True  # the replicas hold the primary's rows

    def allow_migrate(self, db, app_label, model_name=None, **hints) -> bool:
        return db == "default"


# --- which replica answers -----------------------------------------------------------------

_lock = threading.Lock()
# alias -> monotonic time before which it is not tried; 0: it answered last time.
_resting_until: dict[str, float] = {}


def replica_aliases() -> list[str]:
    return [alias for alias in settings.DATABASES if alias.startswith("replica_")]


def replica_answering() -> str | None:
    """A replica to read from, or None (the primary) while none answers."""
    aliases = replica_aliases()
    random.shuffle(aliases)
    for alias in aliases:
        if _claim(alias) and _connects(alias):
            return alias
    return None


def _claim(alias: str) -> bool:
    """Whether this caller may use `alias`: it answered last time, or its rest is over and
    this caller is the one that probes it (the others keep to the primary meanwhile)."""
    with _lock:
        resting_until = _resting_until.get(alias, 0.0)
        if resting_until == 0.0:
            return True
        if time.monotonic() < resting_until:
            return False
        _resting_until[alias] = time.monotonic() + settings.DATABASE_REPLICA_COOLDOWN_SECONDS
    try:
        _probe(alias)
    except psycopg.Error as error:
        logger.warning("Replica %s still does not answer: %r", alias, error)
        return False
    # Its pool may hold connections from before the outage, or be backing off for minutes.
    connections[alias].close_pool()
    with _lock:
        _resting_until[alias] = 0.0
    logger.warning("Replica %s answers again; reads go to it", alias)
    return True


def _probe(alias: str) -> None:
    params = connections[alias].get_connection_params()
    for name in ("cursor_factory", "context", "prepare_threshold", "pool"):
        params.pop(name, None)
    params["connect_timeout"] = _PROBE_CONNECT_TIMEOUT_SECONDS
    psycopg.connect(**{key: value for key, value in params.items() if value is not None}).close()


def _connects(alias: str) -> bool:
    try:
        connections[alias].ensure_connection()
    except (DatabaseError, psycopg.Error) as error:
        replica_rests(alias, error)
        return False
    return True


def replica_rests(alias: str, error: BaseException) -> None:
    with _lock:
        _resting_until[alias] = time.monotonic() + settings.DATABASE_REPLICA_COOLDOWN_SECONDS
    logger.warning("Replica %s does not answer; reads go to the primary: %r", alias, error)


# --- which requests may read from one, and pins -----------------------------------------


def lag_tolerant(request: HttpRequest) -> bool:
    if request.method not in ("GET", "HEAD") or not LAG_TOLERANT.match(request.path):
        return False
    if _WEB_BOARD.match(request.path):
        # Only other limits than the cached default board's (see the module note).
        try:
            return int(request.GET["limit"]) != settings.LEADERBOARD_DEFAULT_LIMIT
        except (KeyError, ValueError):
            return False
    return True


def _pin_key(credential: str) -> str:
    digest = hashlib.sha256(credential.encode()).hexdigest()[:40]
    return f"{settings.CACHES['default'].get('KEY_PREFIX') or 'phc'}:replica-pin:{digest}"


def _credentials(request: HttpRequest, response: HttpResponse | None = None) -> list[str]:
    found = []
    if authorization := request.headers.get("Authorization"):
        found.append("authorization:" + authorization)
    if session := request.COOKIES.get(settings.SESSION_COOKIE_NAME):
        found.append("session:" + session)
    given = response.cookies.get(settings.SESSION_COOKIE_NAME) if response is not None else None
    if given is not None and given.value:
        found.append("session:" + given.value)
    return found


def _pinned(request: HttpRequest) -> bool:
    keys = [_pin_key(credential) for credential in _credentials(request)]
    if not keys:
        return False  # no credential, no writes of its own to miss
    try:
        return any(redis_client().mget(keys))
    except (RedisError, OSError):
        return True  # pins unknown: the primary, as without replicas


def _pin(request: HttpRequest, response: HttpResponse) -> None:
    keys = [_pin_key(credential) for credential in _credentials(request, response)]
    if not keys:
        return
    milliseconds = int(settings.DATABASE_REPLICA_PIN_SECONDS * 1000)
    try:
        with redis_client().pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.set(key, 1, px=milliseconds)
            pipe.execute()
    except (RedisError, OSError) as error:
        logger.warning("Could not pin a client to the primary: %r", error)


def _writes(request: HttpRequest) -> bool:
    # Dify's bridge calls never read a page; their key needs no pin.
    return request.method not in ("GET", "HEAD", "OPTIONS") and not request.path.startswith(
        "/bridge/"
    )


def lag_tolerant_reads(get_response):
    """Opens a ReadScope for the requests whose reads may go to a replica, and pins a
    client that wrote to the primary (see the module note).

    Sync, as the middleware after it are: under ASGI Django runs the whole chain on the
    request's thread, and the scope reaches the view's threads with the context."""
    if not settings.DATABASE_REPLICA_URLS:
        raise MiddlewareNotUsed  # no replica: every read on the primary
    if not settings.REDIS_URL:
        raise ImproperlyConfigured("DATABASE_REPLICA_URLS needs REDIS_URL: the pins live there.")

    def middleware(request: HttpRequest) -> HttpResponse:
        if lag_tolerant(request) and not _pinned(request):
            token = _scope.set(ReadScope())
            try:
                return get_response(request)
            finally:
                _scope.reset(token)
        response = get_response(request)
        if _writes(request):
            _pin(request, response)
        return response

    return middleware
