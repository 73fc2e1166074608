"""The sweeper runs every 10 seconds: with a 10-second grace, what a fault dropped (a
message lost with Redis, a worker killed mid-try) is sent again within 30 s of being due."""

from django.db import migrations

NAME = "notifications: re-queue lost events and deliveries"


def every(seconds):
    def apply(apps, schema_editor):
        IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
        PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
        interval, _ = IntervalSchedule.objects.get_or_create(every=seconds, period="seconds")
        PeriodicTask.objects.filter(name=NAME).update(interval=interval)

    return apply


class Migration(migrations.Migration):
    dependencies = [("notifications", "0002_periodic_jobs")]

    operations = [migrations.RunPython(every(10), every(300))]
