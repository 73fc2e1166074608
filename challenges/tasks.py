from celery import shared_task

from challenges.selectors.challenges import challenge_by_id
from challenges.services.attempts import leaderboard_rebuild
from challenges.services.challenges import LEADERBOARD_REBUILD_TASK
from challenges.services.waves import waves_tick

WAVES_TICK_TASK = "challenges.waves_tick"


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


@shared_task(name=WAVES_TICK_TASK, acks_late=True)
def waves_tick_task() -> dict[str, int]:
    """Beat's minute: open and close the waves that are due (challenges/services/waves.py).
    Safe to run twice or concurrently: each announcement is made once."""
    tick = waves_tick()
    return {"opened": tick.opened, "closed": tick.closed}
