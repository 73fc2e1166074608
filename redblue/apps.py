from django.apps import AppConfig

from notifications.subjects import event_subject_lookup_register


class RedblueConfig(AppConfig):
    name = "redblue"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Celery's autodiscovery looks for redblue.tasks only, and services enqueue tasks by
        # name: importing the modules registers them.
        from challenges.review_subjects import pairing_reviews_register
        from redblue.arena import tasks as arena_tasks  # noqa: F401
        from redblue.teams import tasks as teams_tasks  # noqa: F401
        from redblue.teams.reviews import PairingReviewHandler
        from redblue.teams.selectors import red_blue_subjects

        event_subject_lookup_register(
            event_types=["team_pairing_completed"], lookup=red_blue_subjects
        )
        # The review queue (challenges) decides red/blue pairings through this app.
        pairing_reviews_register(PairingReviewHandler())
