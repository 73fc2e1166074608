"""Test-only overrides; everything else is the real settings module."""

import os

os.environ.setdefault("TESTING", "true")
os.environ.setdefault("SECURE_COOKIES", "false")

from config.settings import *  # noqa: E402,F403

# Tasks run in-process unless a test starts a real worker (tests/test_celery_worker.py).
CELERY_TASK_ALWAYS_EAGER = True
