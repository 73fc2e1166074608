"""Secrets on import: values from --secrets, asked for, or made at random with --no-input —
stored through the secrets service (encrypted at rest), and only ever named in output."""

import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from challenges.models import Secret
from challenges.services.secrets import secret_create
from tests import factories
from tests.conftest import subprocess_database_url
from tests.porting.test_import_errors import GOOD, rows

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db
TWO_SECRETS = GOOD.replace("- vault\n", "- vault\n- spare\n", 1)


def run(tmp_path, workspace, text: str, *options: str) -> tuple[str, str]:
    event = tmp_path / "event.yaml"
    event.write_text(text, encoding="utf-8")
    out, err = StringIO(), StringIO()
    call_command(
        "importchallenges",
        str(event),
        "--workspace",
        workspace.slug,
        *options,
        stdout=out,
        stderr=err,
    )
    return out.getvalue(), err.getvalue()


def stored(workspace, name: str) -> str:
    return Secret.objects.get(workspace=workspace, name=name).value


def raw_column(workspace, name: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT value FROM {Secret._meta.db_table} WHERE workspace_id = %s AND name = %s",
            [workspace.id, name],
        )
        return cursor.fetchone()[0]


def test_it_takes_values_from_a_secrets_file_and_stores_them_encrypted(tmp_path, workspace):
    values = tmp_path / "values.yaml"
    values.write_text("vault: open-sesame-4411\nspare: '0042'\n", encoding="utf-8")

    out, err = run(tmp_path, workspace, TWO_SECRETS, "--secrets", str(values), "--no-input")

    assert stored(workspace, "vault") == "open-sesame-4411"
    assert stored(workspace, "spare") == "0042"
    assert "open-sesame-4411" not in raw_column(workspace, "vault")
    assert "open-sesame-4411" not in out + err
    assert "created 2 secrets: vault, spare" in out
    assert "random" not in out


def test_a_secrets_file_sets_a_secret_the_workspace_already_has(tmp_path, workspace):
    secret_create(workspace=workspace, name="vault", value="old-value")
    values = tmp_path / "values.yaml"
    values.write_text("vault: new-value\n", encoding="utf-8")

    out, _ = run(tmp_path, workspace, GOOD, "--secrets", str(values), "--no-input")

    assert stored(workspace, "vault") == "new-value"
    assert "updated 1 secrets: vault" in out


def test_an_existing_secret_keeps_its_value_when_none_is_given(tmp_path, workspace):
    secret_create(workspace=workspace, name="vault", value="kept-value")

    out, _ = run(tmp_path, workspace, GOOD, "--no-input")

    assert stored(workspace, "vault") == "kept-value"
    assert "secrets" not in out


def test_no_input_makes_random_values_and_prints_only_their_names(tmp_path, workspace):
    out, err = run(tmp_path, workspace, TWO_SECRETS, "--no-input")

    vault, spare = stored(workspace, "vault"), stored(workspace, "spare")
    assert len(vault) >= 20 and vault != spare
    assert "secret 'vault' was given a random value" in out
    assert "secret 'spare' was given a random value" in out
    for value in (vault, spare):
        assert value not in out + err
        assert value not in raw_column(workspace, "vault") + raw_column(workspace, "spare")


def test_a_secrets_file_may_only_name_listed_secrets(tmp_path, workspace):
    values = tmp_path / "values.yaml"
    values.write_text("vault: a\nstranger: b\n", encoding="utf-8")

    with pytest.raises(CommandError, match="does not list: stranger"):
        run(tmp_path, workspace, GOOD, "--secrets", str(values), "--no-input")
    assert rows()["secrets"] == 0


def test_a_secrets_file_value_must_be_text(tmp_path, workspace):
    event, values = tmp_path / "event.yaml", tmp_path / "values.yaml"
    event.write_text(TWO_SECRETS, encoding="utf-8")
    values.write_text("vault: open\nspare: 0042\n", encoding="utf-8")
    err = StringIO()

    with pytest.raises(CommandError, match="Nothing was imported"):
        call_command(
            "importchallenges",
            str(event),
            "--workspace",
            workspace.slug,
            "--secrets",
            str(values),
            "--no-input",
            stderr=err,
        )
    assert f"{values}:2: spare: A value must be text" in err.getvalue()
    assert rows()["secrets"] == 0


@pytest.mark.django_db(transaction=True)
def test_it_asks_for_each_missing_value_and_never_echoes_it(tmp_path):
    # A real process with no terminal: getpass reads the answers from standard input.
    workspace = factories.make_workspace("Asked")
    event = tmp_path / "event.yaml"
    event.write_text(TWO_SECRETS, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "manage.py", "importchallenges", str(event), "--workspace", "asked"],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": subprocess_database_url()},
        input="typed-in-7788\n\n",
        capture_output=True,
        text=True,
        timeout=120,
        start_new_session=True,
    )

    assert done.returncode == 0, done.stderr
    assert "Value for the secret 'vault'" in done.stderr
    assert "Value for the secret 'spare' (empty: a random one)" in done.stderr
    assert stored(workspace, "vault") == "typed-in-7788"
    assert "typed-in-7788" not in done.stdout + done.stderr
    assert "secret 'spare' was given a random value" in done.stdout
    assert stored(workspace, "spare") not in done.stdout + done.stderr
