"""Install the periodic jobs (django-celery-beat) with `migrate`, not by hand."""

from django.db import migrations

JOBS = (
    # name, task, seconds between runs
    ("notifications: re-queue lost events and deliveries", "notifications.sweep", 300),
    ("notifications: prune old webhook delivery logs", "notifications.prune", 24 * 3600),
)


def install(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    for name, task, seconds in JOBS:
        interval, _ = IntervalSchedule.objects.get_or_create(every=seconds, period="seconds")
        PeriodicTask.objects.update_or_create(
            name=name, defaults={"task": task, "interval": interval, "enabled": True}
        )


def remove(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name__in=[name for name, _, _ in JOBS]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("notifications", "0001_events_and_webhooks"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(install, remove)]
