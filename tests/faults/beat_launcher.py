"""`celery beat` whose DatabaseScheduler re-reads every schedule each second instead of every
five minutes (django-celery-beat's constant), so that a ten-second outage meets a re-read."""

import sys

from celery.__main__ import main
from celery.signals import beat_init


@beat_init.connect
def _reread_every_second(**kwargs) -> None:
    import django_celery_beat.schedulers

    django_celery_beat.schedulers.SCHEDULE_SYNC_MAX_INTERVAL = 1


if __name__ == "__main__":
    sys.argv[0] = "celery"
    sys.exit(main())
