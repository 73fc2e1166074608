import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _production_env(**extra: str) -> dict[str, str]:
    """The environment as an operator would set it: nothing of the test runner's."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DEBUG", "DJANGO_SETTINGS_MODULE")
        and not key.startswith(("SECURE_", "SESSION_", "CSRF_"))
    }
    env.update(
        SECRET_KEY="x" * 20 + "-production-only-" + "y" * 30,
        ALLOWED_HOSTS="challenges.example.com",
        DATABASE_URL="postgres://app@db.example.com:5432/challenges",
        **extra,
    )
    return env


def _settings_in(env: dict[str, str], *names: str) -> list[str]:
    code = "import django; django.setup(); from django.conf import settings; " + "; ".join(
        f"print(repr(settings.{name}))" for name in names
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_the_deploy_check_is_clean_with_only_key_hosts_and_database_set():
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=_production_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_debug_off_means_https_only_unless_turned_off_explicitly():
    names = ("SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS", "SESSION_COOKIE_SECURE")

    assert _settings_in(_production_env(), *names) == ["True", "31536000", "True"]
    assert _settings_in(
        _production_env(SECURE_SSL_REDIRECT="false", SECURE_HSTS_SECONDS="0"), *names
    ) == ["False", "0", "True"]


def test_testing_in_the_environment_switches_on_no_test_only_setting():
    env = _production_env(TESTING="true")
    del env["SECRET_KEY"]

    secret_key, hasher = _settings_in(env, "_wrapped.SECRET_KEY", "PASSWORD_HASHERS[0]")

    assert secret_key == "''"
    assert hasher == "'django.contrib.auth.hashers.PBKDF2PasswordHasher'"


def test_a_bad_trusted_proxy_refuses_to_load():
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=_production_env(TRUSTED_PROXIES="10.0.0.0/8,proxy.example.com"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "TRUSTED_PROXIES" in result.stderr


def _without_a_secret_key() -> dict[str, str]:
    return {
        key: value
        for key, value in os.environ.items()
        if key not in ("DEBUG", "SECRET_KEY", "DJANGO_SETTINGS_MODULE")
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
    result = _run([sys.executable, "manage.py", "check"])
    assert result.returncode == 0, result.stdout + result.stderr
