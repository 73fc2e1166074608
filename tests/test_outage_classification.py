"""One rule says when PostgreSQL or Redis is out of reach (core/outages.py), for Django's
503s and the bridge lane alike: a refused statement (a deadlock, a cancelled query) is not an
outage and stays a bug to see, and a wait for a pool is not a dead connection to retry."""

import psycopg.errors
import redis.exceptions
from django import db
from psycopg_pool import PoolTimeout

from core.outages import postgres_connection_died, unavailable_dependency


def wrapped(error: BaseException) -> BaseException:
    """As Django raises it: its own error, from psycopg's."""
    try:
        raise db.OperationalError(str(error)) from error
    except db.OperationalError as django_error:
        return django_error


def test_it_names_the_dependency_that_is_out_of_reach():
    assert unavailable_dependency(wrapped(psycopg.errors.AdminShutdown("restart"))) == "PostgreSQL"
    assert unavailable_dependency(wrapped(psycopg.OperationalError("refused"))) == "PostgreSQL"
    assert unavailable_dependency(PoolTimeout("no connection in 10 s")) == "PostgreSQL"
    assert unavailable_dependency(redis.exceptions.ConnectionError("refused")) == "Redis"


def test_a_refused_statement_is_not_an_outage():
    assert unavailable_dependency(wrapped(psycopg.errors.DeadlockDetected("deadlock"))) is None
    assert unavailable_dependency(wrapped(psycopg.errors.QueryCanceled("timeout"))) is None
    assert unavailable_dependency(ValueError("a bug")) is None


def test_only_a_connection_that_died_is_safe_to_run_again():
    assert postgres_connection_died(wrapped(psycopg.errors.AdminShutdown("restart")))
    assert not postgres_connection_died(PoolTimeout("no connection in 10 s"))
    assert not postgres_connection_died(wrapped(psycopg.errors.DeadlockDetected("deadlock")))
