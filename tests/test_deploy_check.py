import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_the_deploy_check_is_clean_with_production_settings():
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DEBUG", "TESTING", "DJANGO_SETTINGS_MODULE", "SECURE_COOKIES")
    }
    env.update(
        SECRET_KEY="x" * 20 + "-production-only-" + "y" * 30,
        ALLOWED_HOSTS="challenges.example.com",
        SECURE_SSL_REDIRECT="true",
        SECURE_HSTS_SECONDS="31536000",
        SECURE_HSTS_INCLUDE_SUBDOMAINS="true",
        SECURE_HSTS_PRELOAD="true",
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _without_a_secret_key() -> dict[str, str]:
    return {
        key: value
        for key, value in os.environ.items()
        if key not in ("DEBUG", "TESTING", "SECRET_KEY", "DJANGO_SETTINGS_MODULE")
    }


def _run(command: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        command, cwd=ROOT, env=_without_a_secret_key(), capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "-c", "import config.asgi"],
        [sys.executable, "-c", "import config.wsgi"],
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo"],
    ],
    ids=["asgi", "wsgi", "celery-worker"],
)
def test_it_refuses_to_start_without_a_secret_key_when_debug_is_off(command):
    result = _run(command)
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stdout + result.stderr


def test_commands_that_sign_nothing_run_without_a_secret_key():
    result = _run([sys.executable, "manage.py", "makemigrations", "--check", "--dry-run"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No changes detected" in result.stdout
