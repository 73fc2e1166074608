"""Create a benchmark's PostgreSQL database before Django connects.

With the psycopg pool on (DB_POOL_SIZE), Django's first query against a missing database
waits out the pool timeout and raises PoolTimeout instead of "does not exist", so the
benches create their database with a plain connection to the server first.
"""

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
