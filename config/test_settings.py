"""Test-only overrides; everything else is the real settings module."""

import os

os.environ.setdefault("TESTING", "true")
os.environ.setdefault("SECURE_COOKIES", "false")

from config.settings import *  # noqa: E402,F403
