"""What a request gets while PostgreSQL or Redis is out of reach: a 503 with `Retry-After`,
never a 500 (SPEC §8). The one classification of such errors and the one answer, used by
the API's exception handler (core/api.py) and by the site's 500 handler for everything
else; docs/outages.md says what each use of Redis and PostgreSQL does meanwhile.
"""

import contextlib
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import psycopg
import redis.exceptions
from django import db
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader
from django.views.defaults import server_error

from core.errors import error_body

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
MESSAGE = "A service this site depends on is briefly unavailable; try again in a few seconds."
# Paths whose clients read JSON; /api/ is the arena's, with SpecArena's own error shape.
JSON_PREFIXES = ("/console/api/", "/web/api/", "/bridge/")
ARENA_PREFIX = "/api/"
_LOG_EVERY_SECONDS = 10.0

_REDIS_ERRORS = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)


def _causes(error: BaseException | None) -> Iterator[BaseException]:
    """`error` and the errors it was raised from (Django wraps psycopg's, kombu wraps
    redis-py's)."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ or error.__context__


def postgres_unreachable(error: BaseException | None) -> bool:
    """Whether `error` says PostgreSQL is out of reach or lost the connection — not that it
    refused a statement (a deadlock, a cancelled statement, a constraint)."""
    for cause in _causes(error):
        if isinstance(cause, psycopg.InterfaceError | db.InterfaceError):
            return True  # the connection is closed
        if isinstance(cause, psycopg.OperationalError):
            # No SQLSTATE: the client's own (refused, closed, a pool timeout); 08: the
            # connection; 57P: shut down, crashed, starting up; 53300: no slot left.
            state = cause.sqlstate or ""
            return not state or state.startswith(("08", "57P")) or state == "53300"
    return False


def postgres_connection_died(error: BaseException | None) -> bool:
    """Whether `error` is PostgreSQL out of reach on a connection already lent (a restart
    ends every session), not a wait for a connection that timed out: nothing the failed
    statement sent was run, so running it again is safe."""
    from psycopg_pool import PoolClosed, PoolTimeout, TooManyRequests

    waited = any(
        isinstance(cause, PoolTimeout | PoolClosed | TooManyRequests) for cause in _causes(error)
    )
    return postgres_unreachable(error) and not waited


def unavailable_dependency(error: BaseException | None) -> str | None:
    """ "PostgreSQL" or "Redis" when `error`, or an error it was raised from, says that
    dependency could not be reached or lost the connection; None for anything else."""
    if any(isinstance(cause, _REDIS_ERRORS) for cause in _causes(error)):
        return "Redis"
    return "PostgreSQL" if postgres_unreachable(error) else None


_last_logged: dict[str, float] = {}


def outage_noted(dependency: str, error: BaseException) -> None:
    """One warning line per dependency every few seconds, instead of a traceback for each
    of the thousands of requests an outage refuses."""
    now = time.monotonic()
    if now - _last_logged.get(dependency, -_LOG_EVERY_SECONDS) >= _LOG_EVERY_SECONDS:
        _last_logged[dependency] = now
        logger.warning("%s is unavailable; answering 503: %r", dependency, error)


def retry_after_header() -> dict[str, str]:
    return {"Retry-After": str(RETRY_AFTER_SECONDS)}


def _json_error(request: HttpRequest, *, code: str, message: str, status: int) -> JsonResponse:
    if request.path.startswith(ARENA_PREFIX):
        body: dict[str, Any] = {"error": message, "code": code}
    else:
        body = error_body(code=code, message=message)
    return JsonResponse(body, status=status)


def _reads_json(request: HttpRequest) -> bool:
    return request.path.startswith((*JSON_PREFIXES, ARENA_PREFIX))


def unavailable_response(request: HttpRequest) -> HttpResponse:
    if _reads_json(request):
        response = _json_error(request, code="service_unavailable", message=MESSAGE, status=503)
    else:
        # No request context: the context processors would ask the session and the user,
        # that is the database, for a page that says the database is away.
        response = HttpResponse(loader.render_to_string("503.html"), status=503)
    for name, value in retry_after_header().items():
        response[name] = value
    # Already logged once by outage_noted; Django would log each refusal with a traceback.
    response._has_been_logged = True
    return response


def server_error_or_unavailable(request: HttpRequest) -> HttpResponse:
    """The site's handler500: what no view handled. A dependency that is down is a 503;
    any other error is a 500, in JSON under the API prefixes."""
    import sys

    error = sys.exc_info()[1]
    dependency = unavailable_dependency(error)
    if dependency is not None:
        outage_noted(dependency, error)
        return unavailable_response(request)
    if _reads_json(request):
        return _json_error(
            request,
            code="server_error",
            message="Something went wrong on our side; it has been logged.",
            status=500,
        )
    return server_error(request)


# --- a transaction whose connection was already dead -------------------------------------

Result = TypeVar("Result")


def retry_if_connection_was_dead(function: Callable[..., Result]) -> Callable[..., Result]:
    """Run `function` a second time, once, when its very first statement failed because the
    connection it was lent had died before (PostgreSQL restarted while it sat in the pool):
    the server ran nothing of the first try, so the second is the first. Errors after the
    first statement, and calls inside a caller's transaction, are raised as they are."""

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Result:
        connection = db.connections[db.DEFAULT_DB_ALIAS]
        if connection.in_atomic_block:
            return function(*args, **kwargs)
        statements = 0

        def count(execute, sql, params, many, context):
            nonlocal statements
            statements += 1
            return execute(sql, params, many, context)

        try:
            with connection.execute_wrapper(count):
                return function(*args, **kwargs)
        except (db.OperationalError, db.InterfaceError) as error:
            if statements != 1 or not postgres_connection_died(error):
                raise
            logger.warning("Retrying %s on a new connection: %r", function.__name__, error)
        connection.close()
        # Its neighbours in the pool died with it; test them, so the retry gets a live one.
        pool = getattr(connection, "pool", None)
        if pool is not None and not pool.closed:
            # AttributeError: the pool was closed meanwhile (an outage retired it).
            with contextlib.suppress(psycopg.Error, AttributeError):
                pool.check()
        return function(*args, **kwargs)

    return run


# --- PostgreSQL known to be down (core/postgresql) ---------------------------------------


class DatabaseOutage:
    """This process's view of whether PostgreSQL accepts connections: set by the pool's
    own connection attempts, so requests stop queueing for a pool that cannot fill."""

    # While down, one caller every half second tries a connection of its own (the first at
    # once: a restart is over in a moment); the others are refused without waiting.
    PROBE_EVERY_SECONDS = 0.5

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.down = False
        self.pool_retired = True
        self.next_probe_at = 0.0

    def began(self) -> None:
        with self.lock:
            if not self.down:
                self.down = True
                self.pool_retired = False
                self.next_probe_at = time.monotonic()

    def ended(self) -> None:
        with self.lock:
            self.down = False

    def claim_probe(self) -> bool:
        """Whether this caller should try a connection now (one per interval)."""
        with self.lock:
            now = time.monotonic()
            if now < self.next_probe_at:
                return False
            self.next_probe_at = now + self.PROBE_EVERY_SECONDS
            return True

    def claim_pool_retirement(self) -> bool:
        """True for the one caller that should close the pool the outage left behind."""
        with self.lock:
            if self.pool_retired:
                return False
            self.pool_retired = True
            return True


database_outage = DatabaseOutage()
