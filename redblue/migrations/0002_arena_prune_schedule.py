"""Install the beat schedule that prunes stale open arena sessions, once a minute."""

from django.db import migrations

TASK = "redblue.arena.tasks.arena_prune_stale_sessions"
NAME = "arena: prune stale open sessions"


def install(apps, schema_editor):
    interval_model = apps.get_model("django_celery_beat", "IntervalSchedule")
    task_model = apps.get_model("django_celery_beat", "PeriodicTask")
    every_minute, _ = interval_model.objects.get_or_create(every=1, period="minutes")
    task_model.objects.update_or_create(
        name=NAME, defaults={"task": TASK, "interval": every_minute, "enabled": True}
    )


def remove(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("redblue", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(install, remove)]
