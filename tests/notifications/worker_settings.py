"""The test settings for a real worker that itself queues tasks (a dispatch queues its
deliveries): the test runner's settings run every task in-process."""

from config.test_settings import *  # noqa: F403

CELERY_TASK_ALWAYS_EAGER = False
