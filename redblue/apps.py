from django.apps import AppConfig


class RedblueConfig(AppConfig):
    name = "redblue"
    default_auto_field = "django.db.models.BigAutoField"
