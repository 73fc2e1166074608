from django.apps import AppConfig


class ChallengesConfig(AppConfig):
    name = "challenges"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from challenges import checks  # noqa: F401 - registers the system checks
