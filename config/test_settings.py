"""Test-only overrides, used by the test runner alone (pyproject's DJANGO_SETTINGS_MODULE).

Nothing in the environment switches these on in config/settings.py. The live-server tests
start uvicorn and Celery with this module too (pytest-django exports it), so they share the
key and the plain-HTTP setup.
"""

from config.settings import *  # noqa: F403
from config.settings import STORAGES

SECRET_KEY = "test-only-insecure-key-never-used-outside-the-test-runner"
# Hashing with a fast hasher keeps the suite quick; real accounts never see it.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# The test client and the live servers speak plain HTTP.
SECURE_SSL_REDIRECT = False
SECURE_HSTS_SECONDS = 0
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
STORAGES = {
    **STORAGES,
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# Tasks run in-process unless a test starts a real worker (tests/test_celery_worker.py).
CELERY_TASK_ALWAYS_EAGER = True

# The embedded default's sign-up (a token at once); tests of mandatory verification turn it on.
ACCOUNT_EMAIL_VERIFICATION = "optional"
