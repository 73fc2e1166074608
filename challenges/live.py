"""The live leaderboard of a challenge: its channel-layer group and the push after a change."""

from typing import Any

from challenges.selectors.challenges import challenge_by_id
from challenges.selectors.leaderboards import leaderboard_standings
from notifications.live import group_send_on_commit


def leaderboard_group(challenge_id: Any) -> str:
    return f"leaderboard.challenge.{challenge_id}"


def leaderboard_push_on_commit(*, challenge_id: Any) -> None:
    """Once committed, push the challenge's current standings to its open sockets."""

    def message() -> dict[str, Any] | None:
        challenge = challenge_by_id(challenge_id=challenge_id)
        if challenge is None:
            return None
        return {
            "type": "leaderboard.changed",
            "standings": leaderboard_standings(challenge=challenge),
        }

    group_send_on_commit(group=leaderboard_group(challenge_id), message=message)
