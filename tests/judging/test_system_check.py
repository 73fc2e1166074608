"""`manage.py check` names the llm-judge challenges whose judge cannot work as configured."""

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from challenges.models import Challenge
from tests.factories import make_challenge

ROOT = Path(__file__).resolve().parent.parent.parent


def check_output() -> str:
    out, err = io.StringIO(), io.StringIO()
    call_command("check", stdout=out, stderr=err)
    return out.getvalue() + err.getvalue()


def judged(workspace, name, judge_model, **fields):
    return make_challenge(
        workspace=workspace,
        name=name,
        evaluator_type="llm-judge",
        success_pattern="",
        judge_config={"judge_model": judge_model},
        **fields,
    )


@pytest.mark.django_db
def test_it_warns_when_a_key_is_set_but_no_endpoint(workspace, settings):
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = "sk-live"
    judged(workspace, "Vault", "openai/gpt-4o")
    judged(workspace, "Offline on purpose", "offline/terms")
    judged(workspace, "Archived", "openai/gpt-4o", is_active=False)

    output = check_output()

    assert "judging.W001" in output
    assert "cannot be reached: vault." in output
    assert "offline-on-purpose" not in output
    assert "archived" not in output


@pytest.mark.django_db
def test_it_warns_when_the_offline_judge_stands_in_for_a_remote_model(workspace, settings):
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    judged(workspace, "Vault", "openai/gpt-4o")

    output = check_output()

    assert "judging.W002" in output
    assert "judging.W001" not in output
    assert "vault" in output


@pytest.mark.django_db
def test_it_warns_about_stored_settings_the_judge_refuses(workspace, settings):
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    challenge = judged(workspace, "Old Row", "openai/gpt-4o")
    Challenge.objects.filter(pk=challenge.pk).update(judge_config={"judge_model": "anthropic/x"})

    output = check_output()

    assert "judging.W003" in output
    assert "old-row" in output


@pytest.mark.django_db
def test_it_is_quiet_when_every_judge_can_be_reached(workspace, settings):
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    settings.OPENAI_API_KEY = ""
    judged(workspace, "Vault", "openai/gpt-4o")

    assert "judging." not in check_output()


def test_it_runs_on_a_database_without_tables(tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    env.update(
        TESTING="true",
        DATABASE_URL=f"sqlite:///{tmp_path / 'empty.sqlite3'}",
        OPENAI_BASE_URL="",
        OPENAI_API_KEY="sk-live",
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout
