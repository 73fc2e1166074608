from celery import shared_task

from challenges.selectors.challenges import challenge_by_id
from challenges.services.attempts import leaderboard_rebuild
from challenges.services.challenges import LEADERBOARD_REBUILD_TASK


@shared_task(
    name=LEADERBOARD_REBUILD_TASK,
    acks_late=True,
    autoretry_for=(Exception,),
    retry_backoff=True,
    max_retries=5,
)
def leaderboard_rebuild_task(challenge_id: str) -> int:
    challenge = challenge_by_id(challenge_id=challenge_id)
    if challenge is None:
        return 0
    return leaderboard_rebuild(challenge=challenge)
