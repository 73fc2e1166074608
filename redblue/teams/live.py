"""The live Red-vs-Blue board: its channel-layer group and the pushes after commit."""

from typing import Any

from notifications.live import group_send_on_commit
from redblue.teams.selectors import (
    pairing_public,
    pairings_with_sides,
    red_blue_challenge_by_id,
    standings_for_challenge,
)


def red_blue_group(challenge_id: Any) -> str:
    return f"leaderboard.red-blue.{challenge_id}"


def board_push_on_commit(*, challenge_id: Any, pairing_ids: list[Any] = ()) -> None:
    """Once committed, push the standings (and what changed in these pairings)."""

    def message() -> dict[str, Any] | None:
        challenge = red_blue_challenge_by_id(challenge_id=challenge_id)
        if challenge is None:
            return None
        pairings = pairings_with_sides(pairing_ids=list(pairing_ids)) if pairing_ids else []
        return {
            "type": "red_blue.changed",
            "standings": standings_for_challenge(challenge=challenge),
            "pairings": [pairing_public(pairing) for pairing in pairings],
        }

    group_send_on_commit(group=red_blue_group(challenge_id), message=message)


def pairing_completed_on_commit(*, challenge_id: Any, pairing_id: Any) -> None:
    """The one place a judged pairing is announced (SPEC §6 `team_pairing_completed`).

    Today it pushes the live board; the event itself (feed, email, webhooks) will be
    emitted from here, after the same commit.
    """
    board_push_on_commit(challenge_id=challenge_id, pairing_ids=[pairing_id])


def opponent_requested_on_commit(*, challenge_id: Any, team: str, submission_id: Any) -> None:
    """Signal `team` that a submission waits for one of theirs.

    Today the live board shows it; an event for the other side will be emitted from here.
    """

    def message() -> dict[str, Any]:
        return {
            "type": "red_blue.opponent_requested",
            "team": team,
            "submission_id": str(submission_id),
        }

    group_send_on_commit(group=red_blue_group(challenge_id), message=message)
