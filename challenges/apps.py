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
        from challenges.selectors.bounties import wave_subjects
        from challenges.selectors.challenges import challenge_subjects
        from notifications.subjects import event_subject_lookup_register

        event_subject_lookup_register(
            event_types=[
                "challenge_first_blood",
                "challenge_record_beaten",
                "first_blood_revoked",
            ],
            lookup=challenge_subjects,
        )
        event_subject_lookup_register(
            event_types=["wave_opened", "wave_closed"], lookup=wave_subjects
        )
