"""Export → import into an empty workspace of the same slug in another PostgreSQL database →
export: the same bytes (issue 24, point 3)."""

import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection

from tests.conftest import require_service
from tests.porting.conftest import (
    DIFY_HOST,
    DIFY_KEY_VALUE,
    SECRET_VALUE,
    build_rich_workspace,
)

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


def _export_here(workspace: str) -> str:
    out = StringIO()
    call_command("exportchallenges", workspace=workspace, stdout=out)
    return out.getvalue()


def _server_url(dbname: str) -> str:
    db = connection.settings_dict
    user = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{user}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{dbname}"


@pytest.fixture
def second_database():
    """An empty database beside the test database, dropped afterwards."""
    require_service("PostgreSQL", connection.vendor == "postgresql", "the round trip needs two")
    name = f"{connection.settings_dict['NAME']}_b"[:63]
    admin_url = _server_url("postgres")
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    yield _server_url(name)
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _manage(database_url: str, *args: str, stdin: str | None = None) -> str:
    env = {**os.environ, "DATABASE_URL": database_url, "EGRESS_ALLOW_HOSTS": DIFY_HOST}
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_it_exports_the_same_bytes_after_a_trip_through_another_database(second_database, tmp_path):
    build_rich_workspace()
    first = _export_here("demo")
    event = tmp_path / "event.yaml"
    event.write_text(first, encoding="utf-8")

    _manage(second_database, "migrate", "--no-input", "-v", "0")
    _manage(
        second_database,
        "createcreator",
        "--email",
        "owner@b.test",
        "--password",
        "Another-long-pass-42",
        "--workspace",
        "Demo",
    )
    imported = _manage(
        second_database, "importchallenges", str(event), "--workspace", "demo", "--no-input"
    )
    second = _manage(second_database, "exportchallenges", "--workspace", "demo")

    assert second == first
    assert "created 18 challenges" in imported
    assert "created 3 collections: demo-agent-tower, demo-gandalf, demo-side-quests" in imported
    # The demo's two (one an agent scenario) and the rich workspace's own.
    assert "created 3 red blue challenges" in imported
    assert "created 2 waves: Week 1, Week 2" in imported
    assert (
        "created 3 bounties: demo-arena per_break, demo-arena first_break (Model Teal), "
        "demo-gandalf-2 fastest_n"
    ) in imported
    # Values were never in the file, so the other database got fresh ones, named only.
    assert "secret 'vault-key' was given a random value" in imported
    for value in (SECRET_VALUE, DIFY_KEY_VALUE):
        assert value not in first
        assert value not in imported
