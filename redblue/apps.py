from django.apps import AppConfig


class RedblueConfig(AppConfig):
    name = "redblue"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Celery's autodiscovery looks for redblue.tasks only; the arena keeps its own.
        from redblue.arena import tasks  # noqa: F401
