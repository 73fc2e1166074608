import os

from celery import Celery
from celery.signals import beat_init, worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
@beat_init.connect
def _require_secret_key(**kwargs) -> None:
    # This module is imported by every Django process, so check only when a worker starts;
    # Celery logs and ignores a handler's exception, so stop the process ourselves.
    from django.core.exceptions import ImproperlyConfigured

    from config.startup import require_secret_key

    try:
        require_secret_key()
    except ImproperlyConfigured as exc:
        raise SystemExit(str(exc)) from None
