from django.apps import AppConfig


class ChallengesConfig(AppConfig):
    name = "challenges"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Services enqueue tasks by name; importing the module registers them by that name.
        from challenges import (
            checks,  # noqa: F401 - registers the system checks
            receivers,  # noqa: F401 - connects the board cache's signal receivers
            tasks,  # noqa: F401
        )
