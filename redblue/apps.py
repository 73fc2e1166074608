from django.apps import AppConfig


class RedblueConfig(AppConfig):
    name = "redblue"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Services enqueue tasks by name; importing the module registers them by that name.
        from redblue.teams import tasks  # noqa: F401
