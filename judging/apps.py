from django.apps import AppConfig


class JudgingConfig(AppConfig):
    name = "judging"
    default_auto_field = "django.db.models.BigAutoField"
