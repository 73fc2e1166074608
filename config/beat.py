"""Celery beat's scheduler: django-celery-beat's, kept alive while PostgreSQL is away.

django-celery-beat catches database errors in some of its reads and not in others (the
full re-read of the schedules, a one-off entry's save), and beat exits on the first one
that escapes; beat runs the sweeper (notifications.sweep), so nothing would pick up lost
work afterwards. Here a tick that meets the database away is skipped, the schedules are
read again in full once it answers, and entries due meanwhile run late, once.
"""

import datetime
import logging

from django.db import DatabaseError, InterfaceError, close_old_connections
from django_celery_beat import schedulers

from core.outages import RETRY_AFTER_SECONDS

logger = logging.getLogger(__name__)


class DatabaseScheduler(schedulers.DatabaseScheduler):
    def tick(self, *args, **kwargs):
        try:
            return super().tick(*args, **kwargs)
        except (DatabaseError, InterfaceError) as error:
            logger.warning(
                "Beat: the database is unavailable (%r); trying again in %s s",
                error,
                RETRY_AFTER_SECONDS,
            )
            close_old_connections()
            # Read every schedule again on the next tick that reaches the database.
            self._last_full_sync = datetime.datetime.min
            self._heap = None
            return RETRY_AFTER_SECONDS
