from django.apps import AppConfig


class PlayersConfig(AppConfig):
    name = "players"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from players import schema  # noqa: F401  (registers the OpenAPI auth scheme)
        from players.teams import admin  # noqa: F401  (registers the team admin)
