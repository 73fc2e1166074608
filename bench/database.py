"""Create a benchmark's PostgreSQL database before Django connects.

With the psycopg pool on (DB_POOL_SIZE), Django's first query against a missing database
waits out the pool timeout and raises PoolTimeout instead of "does not exist", so the
benches create their database with a plain connection to the server first.
"""

import os
import sys
import uuid

import environ
import psycopg
from psycopg import sql


def database_create_if_missing(*, url: str) -> bool:
    config = environ.Env.db_url_config(url)
    if config["ENGINE"] != "django.db.backends.postgresql":
        return False
    params = {
        "host": config.get("HOST"),
        "port": config.get("PORT"),
        "user": config.get("USER"),
        "password": config.get("PASSWORD"),
        "dbname": "postgres",
    }
    with psycopg.connect(**{k: v for k, v in params.items() if v}, autocommit=True) as admin:
        exists = admin.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [config["NAME"]]
        ).fetchone()
        if exists:
            return False
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(config["NAME"])))
    print(f"created database {config['NAME']}")
    return True


def bench_django_setup(*, database: str, redis_db: int, secret_key: str = "") -> None:
    """Set Django up for a benchmark on its own PostgreSQL database and Redis db (unless the
    environment names others), the database created when missing and migrated. A fixed
    `secret_key` lets a later run read the secrets an earlier one stored."""
    os.environ.setdefault("DATABASE_URL", f"postgres://postgres@127.0.0.1:5432/{database}")
    os.environ.setdefault("REDIS_URL", f"redis://127.0.0.1:6379/{redis_db}")
    os.environ.setdefault("SECRET_KEY", secret_key or "bench-only-" + uuid.uuid4().hex)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    database_create_if_missing(url=os.environ["DATABASE_URL"])
    django.setup()
    database_migrated()


def database_migrated() -> None:
    """Refuse anything but PostgreSQL, then migrate."""
    from django.core.management import call_command
    from django.db import connection

    if connection.vendor != "postgresql":
        sys.exit("This benchmark needs PostgreSQL: set DATABASE_URL=postgres://…")
    call_command("migrate", verbosity=0, interactive=False)
