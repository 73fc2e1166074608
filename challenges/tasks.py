from celery import shared_task

from challenges.models import Challenge
from challenges.services import leaderboard_rebuild


@shared_task(acks_late=True, autoretry_for=(Exception,), retry_backoff=True, max_retries=5)
def leaderboard_rebuild_task(challenge_id: str) -> int:
    challenge = Challenge.objects.filter(id=challenge_id).first()
    if challenge is None:
        return 0
    return leaderboard_rebuild(challenge=challenge)
